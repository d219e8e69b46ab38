// RUN: ge-opt %s | ge-opt | filecheck %s
// ge.deform_conv prints and parses back with its optional bias and mask.

// CHECK-LABEL: func.func @deform_conv
func.func @deform_conv(%x: tensor<1x4x6x5xf32>, %w: tensor<6x2x3x3xf32>, %off: tensor<1x36x4x3xf32>, %b: tensor<6xf32>, %m: tensor<1x18x4x3xf32>) -> (tensor<1x6x4x3xf32>, tensor<1x6x4x3xf32>) {
  // CHECK: ge.deform_conv %{{.*}}, %{{.*}}, %{{.*}}, B = %{{.*}}, mask = %{{.*}} {group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x6x5xf32>, tensor<6x2x3x3xf32>, tensor<1x36x4x3xf32>, tensor<6xf32>, tensor<1x18x4x3xf32>) -> tensor<1x6x4x3xf32>
  %0 = ge.deform_conv %x, %w, %off, B = %b, mask = %m {group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x6x5xf32>, tensor<6x2x3x3xf32>, tensor<1x36x4x3xf32>, tensor<6xf32>, tensor<1x18x4x3xf32>) -> tensor<1x6x4x3xf32>
  // CHECK: ge.deform_conv %{{.*}}, %{{.*}}, %{{.*}} {group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x6x5xf32>, tensor<6x2x3x3xf32>, tensor<1x36x4x3xf32>) -> tensor<1x6x4x3xf32>
  %1 = ge.deform_conv %x, %w, %off {group = 2 : i64, offset_group = 2 : i64} : (tensor<1x4x6x5xf32>, tensor<6x2x3x3xf32>, tensor<1x36x4x3xf32>) -> tensor<1x6x4x3xf32>
  func.return %0, %1 : tensor<1x6x4x3xf32>, tensor<1x6x4x3xf32>
}
