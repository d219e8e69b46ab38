// RUN: ge-opt %s | ge-opt | filecheck %s
// ge.col2im prints and parses back, its image dims read off the constant image_shape.

// CHECK-LABEL: func.func @col2im
func.func @col2im(%x: tensor<2x18x4xf32>) -> tensor<2x2x5x5xf32> {
  %image = ge.constant dense<[5, 5]> : tensor<2xi64>
  %block = ge.constant dense<[3, 3]> : tensor<2xi64>
  // CHECK: ge.col2im %{{.*}}, %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>} : (tensor<2x18x4xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2x5x5xf32>
  %0 = ge.col2im %x, %image, %block {strides = array<i64: 2, 2>} : (tensor<2x18x4xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2x5x5xf32>
  func.return %0 : tensor<2x2x5x5xf32>
}
