// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier error of the normalization and softmax backward ops, one per split.

func.func @bn_x_not_float(%dy: tensor<2x3xi32>, %x: tensor<2x3xi32>, %c: tensor<3xf32>) {
  // CHECK: ge.batch_norm_grad: operand 'x' has element type i32; expected one of f32, f16, bf16, f64
  %0, %1, %2 = ge.batch_norm_grad %dy, %x, %c, %c, %c : (tensor<2x3xi32>, tensor<2x3xi32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xi32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @bn_rank(%dy: tensor<3xf32>, %x: tensor<3xf32>, %c: tensor<3xf32>) {
  // CHECK: ge.batch_norm_grad: operand 'x' must have rank >= 2 (N, C, ...), got rank 1
  %0, %1, %2 = ge.batch_norm_grad %dy, %x, %c, %c, %c : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @bn_dy_dtype(%dy: tensor<2x3xf16>, %x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // CHECK: ge.batch_norm_grad: operands 'x' and 'dy' must have one element type, got f32 and f16
  %0, %1, %2 = ge.batch_norm_grad %dy, %x, %c, %c, %c : (tensor<2x3xf16>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @bn_dy_shape(%dy: tensor<4x3xf32>, %x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // CHECK: ge.batch_norm_grad: operand 'dy' of shape (4, 3) must have the shape of 'x' (2, 3)
  %0, %1, %2 = ge.batch_norm_grad %dy, %x, %c, %c, %c : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @bn_channels(%dy: tensor<2x3xf32>, %x: tensor<2x3xf32>, %c: tensor<3xf32>, %m: tensor<4xf32>) {
  // CHECK: ge.batch_norm_grad: operand 'mean' must have shape (3,), got (4,)
  %0, %1, %2 = ge.batch_norm_grad %dy, %x, %c, %m, %c : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @bn_stats_dtypes(%dy: tensor<2x3xf32>, %x: tensor<2x3xf32>, %c: tensor<3xf32>, %v: tensor<3xf64>) {
  // CHECK: ge.batch_norm_grad: operands 'mean' and 'var' must have one element type, got f32 and f64
  %0, %1, %2 = ge.batch_norm_grad %dy, %x, %c, %c, %v : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf64>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @bn_training_mode(%dy: tensor<2x3xf32>, %x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // CHECK: ge.batch_norm_grad: training_mode must be 0 or 1, got 2
  %0, %1, %2 = ge.batch_norm_grad %dy, %x, %c, %c, %c {training_mode = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @bn_result_type(%dy: tensor<2x3xf32>, %x: tensor<2x3xf32>, %c: tensor<3xf32>, %s: tensor<3xf64>) {
  // CHECK: ge.batch_norm_grad: result #1 has type tensor<3xf64> but its operands imply tensor<3xf32>
  %0, %1, %2 = ge.batch_norm_grad %dy, %x, %c, %s, %s : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf64>, tensor<3xf64>) -> (tensor<2x3xf32>, tensor<3xf64>, tensor<3xf64>)
  func.return
}

// -----

func.func @ln_axis(%dy: tensor<2x3xf32>, %x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // CHECK: ge.layer_norm_grad: axis 2 is out of range for rank 2
  %0, %1, %2 = ge.layer_norm_grad %dy, %x, %c {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @ln_scale_shape(%dy: tensor<2x3xf32>, %x: tensor<2x3xf32>, %c: tensor<2xf32>) {
  // CHECK: ge.layer_norm_grad: operand 'scale' of shape (2,) does not broadcast to (2, 3)
  %0, %1, %2 = ge.layer_norm_grad %dy, %x, %c : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return
}

// -----

func.func @ln_scale_dtype(%dy: tensor<2x3xf16>, %x: tensor<2x3xf16>, %c: tensor<3xf32>) {
  // CHECK: ge.layer_norm_grad: operands 'x' and 'scale' must have one element type, got f16 and f32
  %0, %1, %2 = ge.layer_norm_grad %dy, %x, %c : (tensor<2x3xf16>, tensor<2x3xf16>, tensor<3xf32>) -> (tensor<2x3xf16>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @ln_dy_rank(%dy: tensor<6xf32>, %x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // CHECK: ge.layer_norm_grad: operand 'dy' of shape (6,) must have the shape of 'x' (2, 3)
  %0, %1, %2 = ge.layer_norm_grad %dy, %x, %c : (tensor<6xf32>, tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return
}

// -----

func.func @softmax_y_not_float(%y: tensor<2x5xi64>, %dy: tensor<2x5xi64>) {
  // CHECK: ge.softmax_grad: operand 'y' has element type i64; expected one of f32, f16, bf16, f64
  %0 = ge.softmax_grad %y, %dy : (tensor<2x5xi64>, tensor<2x5xi64>) -> tensor<2x5xi64>
  func.return
}

// -----

func.func @softmax_dy_shape(%y: tensor<2x5xf32>, %dy: tensor<2x4xf32>) {
  // CHECK: ge.softmax_grad: operand 'dy' of shape (2, 4) must have the shape of 'y' (2, 5)
  %0 = ge.softmax_grad %y, %dy : (tensor<2x5xf32>, tensor<2x4xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @softmax_axis(%y: tensor<2x5xf32>, %dy: tensor<2x5xf32>) {
  // CHECK: ge.softmax_grad: axis -3 is out of range for rank 2
  %0 = ge.softmax_grad %y, %dy {axis = -3 : i64} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @lrn_grad_dy_shape(%dy: tensor<1x8x4xf32>, %x: tensor<1x8x5xf32>) {
  // CHECK: ge.lrn_grad: operand 'dy' of shape (1, 8, 4) must have the shape of 'X' (1, 8, 5)
  %0 = ge.lrn_grad %dy, %x {size = 3 : i64} : (tensor<1x8x4xf32>, tensor<1x8x5xf32>) -> tensor<1x8x5xf32>
  func.return
}

// -----

func.func @lrn_grad_size(%dy: tensor<1x8x4xf32>, %x: tensor<1x8x4xf32>) {
  // CHECK: ge.lrn_grad: size must be a positive channel count, got 0
  %0 = ge.lrn_grad %dy, %x {size = 0 : i64} : (tensor<1x8x4xf32>, tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  func.return
}
