// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @sce_int_scores(%x: tensor<4x5xi32>, %y: tensor<4xi64>) -> tensor<i32> {
  // CHECK: ge.softmax_cross_entropy_loss: operand 'scores' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.softmax_cross_entropy_loss %x, %y : (tensor<4x5xi32>, tensor<4xi64>) -> tensor<i32>
  func.return %0 : tensor<i32>
}

// -----

func.func @sce_rank1(%x: tensor<5xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  // CHECK: ge.softmax_cross_entropy_loss: operand 'scores' must have rank 2 or more (N, C, d1..dk), got (5,)
  %0 = ge.softmax_cross_entropy_loss %x, %y : (tensor<5xf32>, tensor<4xi64>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @sce_float_labels(%x: tensor<4x5xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  // CHECK: ge.softmax_cross_entropy_loss: operand 'labels' has element type f32; expected one of i64, i32
  %0 = ge.softmax_cross_entropy_loss %x, %y : (tensor<4x5xf32>, tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @sce_label_shape(%x: tensor<4x5x3xf32>, %y: tensor<4x2xi64>) -> tensor<f32> {
  // CHECK: ge.softmax_cross_entropy_loss: operand 'labels' must have shape (4, 3) for operand 'scores' (4, 5, 3), got (4, 2)
  %0 = ge.softmax_cross_entropy_loss %x, %y : (tensor<4x5x3xf32>, tensor<4x2xi64>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @sce_weight_shape(%x: tensor<4x5xf32>, %y: tensor<4xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  // CHECK: ge.softmax_cross_entropy_loss: operand 'weights' must have shape (5,), got (4,)
  %0 = ge.softmax_cross_entropy_loss %x, %y, weights = %w : (tensor<4x5xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @sce_weight_dtype(%x: tensor<4x5xf32>, %y: tensor<4xi64>, %w: tensor<5xf16>) -> tensor<f32> {
  // CHECK: ge.softmax_cross_entropy_loss: operands 'scores' and 'weights' must have one element type, got f32 and f16
  %0 = ge.softmax_cross_entropy_loss %x, %y, weights = %w : (tensor<4x5xf32>, tensor<4xi64>, tensor<5xf16>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @sce_reduction(%x: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  // CHECK: ge.softmax_cross_entropy_loss: reduction must be "none", "sum" or "mean", got "avg"
  %0 = ge.softmax_cross_entropy_loss %x, %y {reduction = "avg"} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @sce_result_shape(%x: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  // CHECK: ge.softmax_cross_entropy_loss: result #0 has type tensor<4xf32> but its operands imply tensor<f32>
  %0 = ge.softmax_cross_entropy_loss %x, %y : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @sce_log_prob_shape(%x: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<4x4xf32> {
  // CHECK: ge.softmax_cross_entropy_loss: result #1 has type tensor<4x4xf32> but its operands imply tensor<4x5xf32>
  %0, %1 = ge.softmax_cross_entropy_loss %x, %y : (tensor<4x5xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x4xf32>)
  func.return %1 : tensor<4x4xf32>
}

// -----

func.func @nll_label_shape(%x: tensor<4x5xf32>, %y: tensor<3xi64>) -> tensor<f32> {
  // CHECK: ge.nll_loss: operand 'target' must have shape (4,) for operand 'input' (4, 5), got (3,)
  %0 = ge.nll_loss %x, %y : (tensor<4x5xf32>, tensor<3xi64>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @nll_rank1(%x: tensor<5xf32>, %y: tensor<5xi64>) -> tensor<f32> {
  // CHECK: ge.nll_loss: operand 'input' must have rank 2 or more (N, C, d1..dk), got (5,)
  %0 = ge.nll_loss %x, %y : (tensor<5xf32>, tensor<5xi64>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @nll_reduction(%x: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<f32> {
  // CHECK: ge.nll_loss: reduction must be "none", "sum" or "mean", got "max"
  %0 = ge.nll_loss %x, %y {reduction = "max"} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @nll_weight_shape(%x: tensor<4x5xf32>, %y: tensor<4xi64>, %w: tensor<5x1xf32>) -> tensor<f32> {
  // CHECK: ge.nll_loss: operand 'weight' must have shape (5,), got (5, 1)
  %0 = ge.nll_loss %x, %y, weight = %w : (tensor<4x5xf32>, tensor<4xi64>, tensor<5x1xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @sce_grad_dy_shape(%dy: tensor<4xf32>, %x: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<4x5xf32> {
  // CHECK: ge.softmax_cross_entropy_loss_grad: operand 'dy' must have the loss's shape () (reduction mean), got (4,)
  %0 = ge.softmax_cross_entropy_loss_grad %dy, %x, %y : (tensor<4xf32>, tensor<4x5xf32>, tensor<4xi64>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

func.func @sce_grad_dy_none_shape(%dy: tensor<f32>, %x: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<4x5xf32> {
  // CHECK: ge.softmax_cross_entropy_loss_grad: operand 'dy' must have the loss's shape (4,) (reduction none), got ()
  %0 = ge.softmax_cross_entropy_loss_grad %dy, %x, %y {reduction = "none"} : (tensor<f32>, tensor<4x5xf32>, tensor<4xi64>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

func.func @sce_grad_dy_dtype(%dy: tensor<f16>, %x: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<4x5xf32> {
  // CHECK: ge.softmax_cross_entropy_loss_grad: operands 'scores' and 'dy' must have one element type, got f32 and f16
  %0 = ge.softmax_cross_entropy_loss_grad %dy, %x, %y : (tensor<f16>, tensor<4x5xf32>, tensor<4xi64>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

func.func @sce_grad_labels(%dy: tensor<f32>, %x: tensor<4x5xf32>, %y: tensor<5xi64>) -> tensor<4x5xf32> {
  // CHECK: ge.softmax_cross_entropy_loss_grad: operand 'labels' must have shape (4,) for operand 'scores' (4, 5), got (5,)
  %0 = ge.softmax_cross_entropy_loss_grad %dy, %x, %y : (tensor<f32>, tensor<4x5xf32>, tensor<5xi64>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

func.func @nll_grad_no_shape(%dy: tensor<f32>, %y: tensor<4xi64>) -> tensor<4x5xf32> {
  // CHECK: ge.nll_loss_grad: input_shape is required
  %0 = ge.nll_loss_grad %dy, %y : (tensor<f32>, tensor<4xi64>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

func.func @nll_grad_negative_shape(%dy: tensor<f32>, %y: tensor<4xi64>) -> tensor<4x5xf32> {
  // CHECK: ge.nll_loss_grad: input_shape [4, -5] has a negative dimension
  %0 = ge.nll_loss_grad %dy, %y {input_shape = array<i64: 4, -5>} : (tensor<f32>, tensor<4xi64>) -> tensor<4x5xf32>
  func.return %0 : tensor<4x5xf32>
}

// -----

func.func @nll_grad_rank(%dy: tensor<f32>, %y: tensor<4xi64>) -> tensor<4xf32> {
  // CHECK: ge.nll_loss_grad: input_shape must have rank 2 or more (N, C, d1..dk), got (4,)
  %0 = ge.nll_loss_grad %dy, %y {input_shape = array<i64: 4>} : (tensor<f32>, tensor<4xi64>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @nll_grad_target(%dy: tensor<f32>, %y: tensor<4x3xi64>) -> tensor<4x5x2xf32> {
  // CHECK: ge.nll_loss_grad: operand 'target' must have shape (4, 2) for input_shape (4, 5, 2), got (4, 3)
  %0 = ge.nll_loss_grad %dy, %y {input_shape = array<i64: 4, 5, 2>} : (tensor<f32>, tensor<4x3xi64>) -> tensor<4x5x2xf32>
  func.return %0 : tensor<4x5x2xf32>
}

// -----

func.func @nll_grad_result(%dy: tensor<f32>, %y: tensor<4xi64>) -> tensor<4x6xf32> {
  // CHECK: ge.nll_loss_grad: result #0 has type tensor<4x6xf32> but its operands imply tensor<4x5xf32>
  %0 = ge.nll_loss_grad %dy, %y {input_shape = array<i64: 4, 5>} : (tensor<f32>, tensor<4xi64>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
