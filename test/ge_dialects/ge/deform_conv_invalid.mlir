// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @offset_channels(%x: tensor<1x4x6x5xf32>, %w: tensor<6x4x3x3xf32>, %off: tensor<1x10x4x3xf32>) -> tensor<1x6x4x3xf32> {
  // CHECK: ge.deform_conv: operand 'offset' of shape [1, 10, 4, 3] must be [1, 18, 4, 3]
  %0 = ge.deform_conv %x, %w, %off : (tensor<1x4x6x5xf32>, tensor<6x4x3x3xf32>, tensor<1x10x4x3xf32>) -> tensor<1x6x4x3xf32>
  func.return %0 : tensor<1x6x4x3xf32>
}

// -----

func.func @offset_group(%x: tensor<1x4x6x5xf32>, %w: tensor<6x4x3x3xf32>, %off: tensor<1x54x4x3xf32>) -> tensor<1x6x4x3xf32> {
  // CHECK: ge.deform_conv: offset_group 3 must divide the 4 input channels
  %0 = ge.deform_conv %x, %w, %off {offset_group = 3 : i64} : (tensor<1x4x6x5xf32>, tensor<6x4x3x3xf32>, tensor<1x54x4x3xf32>) -> tensor<1x6x4x3xf32>
  func.return %0 : tensor<1x6x4x3xf32>
}
