// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @positions(%x: tensor<1x5x6xf32>) -> tensor<1x1x5x5xf32> {
  %image = ge.constant dense<[5, 5]> : tensor<2xi64>
  %block = ge.constant dense<[1, 5]> : tensor<2xi64>
  // CHECK: ge.col2im: input dim 2 (6) must be the 5 block positions [5, 1]
  %0 = ge.col2im %x, %image, %block : (tensor<1x5x6xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x5x5xf32>
  func.return %0 : tensor<1x1x5x5xf32>
}

// -----

func.func @runtime_shapes(%x: tensor<1x5x5xf32>, %image: tensor<2xi64>, %block: tensor<2xi64>) -> tensor<1x1x5x5xf32> {
  // CHECK: ge.col2im: image_shape and block_shape must be constants (they give the result's dims)
  %0 = ge.col2im %x, %image, %block : (tensor<1x5x5xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x1x5x5xf32>
  func.return %0 : tensor<1x1x5x5xf32>
}
