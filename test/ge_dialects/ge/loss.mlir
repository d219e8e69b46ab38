// RUN: ge-opt %s | ge-opt | filecheck %s

// The loss ops and their backward ops round-trip with their properties, optional weights and the
// optional log_prob result.

// CHECK-LABEL: func.func @softmax_cross_entropy
func.func @softmax_cross_entropy(%x: tensor<4x5xf32>, %y: tensor<4xi64>, %w: tensor<5xf32>, %x3: tensor<2x3x6x7xf64>, %y3: tensor<2x6x7xi32>) -> (tensor<f32>, tensor<4x5xf32>, tensor<2x6x7xf64>, tensor<f64>) {
  // CHECK: %{{.*}}, %{{.*}} = ge.softmax_cross_entropy_loss %{{.*}}, %{{.*}}, weights = %{{.*}} {ignore_index = -1 : i64} : (tensor<4x5xf32>, tensor<4xi64>, tensor<5xf32>) -> (tensor<f32>, tensor<4x5xf32>)
  %0, %1 = ge.softmax_cross_entropy_loss %x, %y, weights = %w {ignore_index = -1 : i64} : (tensor<4x5xf32>, tensor<4xi64>, tensor<5xf32>) -> (tensor<f32>, tensor<4x5xf32>)
  // CHECK: ge.softmax_cross_entropy_loss %{{.*}}, %{{.*}} {reduction = "none"} : (tensor<2x3x6x7xf64>, tensor<2x6x7xi32>) -> tensor<2x6x7xf64>
  %2 = ge.softmax_cross_entropy_loss %x3, %y3 {reduction = "none"} : (tensor<2x3x6x7xf64>, tensor<2x6x7xi32>) -> tensor<2x6x7xf64>
  // CHECK: ge.softmax_cross_entropy_loss %{{.*}}, %{{.*}} {reduction = "sum"} : (tensor<2x3x6x7xf64>, tensor<2x6x7xi32>) -> tensor<f64>
  %3 = ge.softmax_cross_entropy_loss %x3, %y3 {reduction = "sum"} : (tensor<2x3x6x7xf64>, tensor<2x6x7xi32>) -> tensor<f64>
  func.return %0, %1, %2, %3 : tensor<f32>, tensor<4x5xf32>, tensor<2x6x7xf64>, tensor<f64>
}

// CHECK-LABEL: func.func @nll
func.func @nll(%x: tensor<?x5x3xf16>, %y: tensor<?x3xi64>, %w: tensor<5xf16>) -> (tensor<f16>, tensor<?x3xf16>) {
  // CHECK: ge.nll_loss %{{.*}}, %{{.*}}, weight = %{{.*}} {ignore_index = 2 : i64} : (tensor<?x5x3xf16>, tensor<?x3xi64>, tensor<5xf16>) -> tensor<f16>
  %0 = ge.nll_loss %x, %y, weight = %w {ignore_index = 2 : i64} : (tensor<?x5x3xf16>, tensor<?x3xi64>, tensor<5xf16>) -> tensor<f16>
  // CHECK: ge.nll_loss %{{.*}}, %{{.*}} {reduction = "none"} : (tensor<?x5x3xf16>, tensor<?x3xi64>) -> tensor<?x3xf16>
  %1 = ge.nll_loss %x, %y {reduction = "none"} : (tensor<?x5x3xf16>, tensor<?x3xi64>) -> tensor<?x3xf16>
  func.return %0, %1 : tensor<f16>, tensor<?x3xf16>
}

// CHECK-LABEL: func.func @grads
func.func @grads(%dy: tensor<f32>, %dyn: tensor<4x2xf32>, %x: tensor<4x5x2xf32>, %y: tensor<4x2xi64>, %w: tensor<5xf32>) -> (tensor<4x5x2xf32>, tensor<4x5x2xf32>, tensor<4x5x2xf32>, tensor<4x5x2xf32>) {
  // CHECK: ge.softmax_cross_entropy_loss_grad %{{.*}}, %{{.*}}, %{{.*}}, weights = %{{.*}} {ignore_index = 0 : i64} : (tensor<f32>, tensor<4x5x2xf32>, tensor<4x2xi64>, tensor<5xf32>) -> tensor<4x5x2xf32>
  %0 = ge.softmax_cross_entropy_loss_grad %dy, %x, %y, weights = %w {ignore_index = 0 : i64} : (tensor<f32>, tensor<4x5x2xf32>, tensor<4x2xi64>, tensor<5xf32>) -> tensor<4x5x2xf32>
  // CHECK: ge.softmax_cross_entropy_loss_grad %{{.*}}, %{{.*}}, %{{.*}} {reduction = "none"} : (tensor<4x2xf32>, tensor<4x5x2xf32>, tensor<4x2xi64>) -> tensor<4x5x2xf32>
  %1 = ge.softmax_cross_entropy_loss_grad %dyn, %x, %y {reduction = "none"} : (tensor<4x2xf32>, tensor<4x5x2xf32>, tensor<4x2xi64>) -> tensor<4x5x2xf32>
  // CHECK: ge.nll_loss_grad %{{.*}}, %{{.*}}, weight = %{{.*}} {input_shape = array<i64: 4, 5, 2>, reduction = "sum"} : (tensor<f32>, tensor<4x2xi64>, tensor<5xf32>) -> tensor<4x5x2xf32>
  %2 = ge.nll_loss_grad %dy, %y, weight = %w {input_shape = array<i64: 4, 5, 2>, reduction = "sum"} : (tensor<f32>, tensor<4x2xi64>, tensor<5xf32>) -> tensor<4x5x2xf32>
  // CHECK: ge.nll_loss_grad %{{.*}}, %{{.*}} {input_shape = array<i64: 4, 5, 2>, reduction = "none", ignore_index = -100 : i64} : (tensor<4x2xf32>, tensor<4x2xi64>) -> tensor<4x5x2xf32>
  %3 = ge.nll_loss_grad %dyn, %y {input_shape = array<i64: 4, 5, 2>, reduction = "none", ignore_index = -100 : i64} : (tensor<4x2xf32>, tensor<4x2xi64>) -> tensor<4x5x2xf32>
  func.return %0, %1, %2, %3 : tensor<4x5x2xf32>, tensor<4x5x2xf32>, tensor<4x5x2xf32>, tensor<4x5x2xf32>
}
