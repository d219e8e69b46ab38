// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: echo 'func.func @f() -> tensor<2xf32> {  %%v = ge.variable : tensor<2xf32>  func.return %%v : tensor<2xf32> }' > %t.mlir
// RUN: not ge-opt %t.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE: ge.variable expects its state key as a string: ge.variable "key" : tensor<...>
// PARSE-NOT: Traceback

func.func @grad_type(%w: tensor<4xf32>, %g: tensor<4xf16>) -> tensor<4xf32> {
  // CHECK: ge.apply_gradient_descent: operand 'grad' has type tensor<4xf16>, 'var' has tensor<4xf32>; they must be equal
  %0 = ge.apply_gradient_descent %w, %g : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @grad_shape(%w: tensor<4xf32>, %g: tensor<1xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_gradient_descent: operand 'grad' has type tensor<1xf32>, 'var' has tensor<4xf32>; they must be equal
  %0 = ge.apply_gradient_descent %w, %g : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @integer_var(%w: tensor<4xi32>, %g: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: ge.apply_gradient_descent: operand 'var' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.apply_gradient_descent %w, %g : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @negative_alpha(%w: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_gradient_descent 'w/sgd': alpha = -0.5 must be >= 0.0
  %0 = ge.apply_gradient_descent %w, %g {alpha = -0.5 : f32} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("w/sgd")
  func.return %0 : tensor<4xf32>
}

// -----

func.func @momentum_one(%w: tensor<4xf32>, %a: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_momentum: momentum = 1.0 must be in [0.0, 1.0)
  %0, %1 = ge.apply_momentum %w, %a, %g {momentum = 1.0 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @accum_type(%w: tensor<4xf32>, %a: tensor<4xf16>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_momentum: operand 'accum' has type tensor<4xf16>, 'var' has tensor<4xf32>; they must be equal
  %0, %1 = ge.apply_momentum %w, %a, %g : (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @nesterov_flag(%w: tensor<4xf32>, %a: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_momentum: use_nesterov = 2 must be 0 or 1
  %0, %1 = ge.apply_momentum %w, %a, %g {use_nesterov = 2 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @negative_lr(%w: tensor<4xf32>, %a: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_momentum: lr = -1.0 must be >= 0.0
  %0, %1 = ge.apply_momentum %w, %a, %g {lr = -1.0 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @step_not_scalar(%w: tensor<4xf32>, %t: tensor<1xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adam: operand 'step' must be a scalar tensor<f32>, got tensor<1xf32>
  %0, %1, %2 = ge.apply_adam %w, %w, %w, %t, %w : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @step_f16(%w: tensor<4xf32>, %t: tensor<f16>) -> tensor<4xf32> {
  // CHECK: ge.apply_adam: operand 'step' must be a scalar tensor<f32>, got tensor<f16>
  %0, %1, %2 = ge.apply_adam %w, %w, %w, %t, %w : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f16>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @v_type(%w: tensor<4xf32>, %v: tensor<2x2xf32>, %t: tensor<f32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adam: operand 'v' has type tensor<2x2xf32>, 'var' has tensor<4xf32>; they must be equal
  %0, %1, %2 = ge.apply_adam %w, %w, %v, %t, %w : (tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @beta1_one(%w: tensor<4xf32>, %t: tensor<f32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adam: beta1 = 1.0 must be in [0.0, 1.0)
  %0, %1, %2 = ge.apply_adam %w, %w, %w, %t, %w {beta1 = 1.0 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @beta2_negative(%w: tensor<4xf32>, %t: tensor<f32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adam: beta2 = -0.5 must be in [0.0, 1.0)
  %0, %1, %2 = ge.apply_adam %w, %w, %w, %t, %w {beta2 = -0.5 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @epsilon_zero(%w: tensor<4xf32>, %t: tensor<f32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adam: epsilon = 0.0 must be > 0.0
  %0, %1, %2 = ge.apply_adam %w, %w, %w, %t, %w {epsilon = 0.0 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @decay_negative(%w: tensor<4xf32>, %t: tensor<f32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adam: weight_decay = -0.125 must be >= 0.0
  %0, %1, %2 = ge.apply_adam %w, %w, %w, %t, %w {weight_decay = -0.125 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @decoupled_flag(%w: tensor<4xf32>, %t: tensor<f32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adam: decoupled = 3 must be 0 or 1
  %0, %1, %2 = ge.apply_adam %w, %w, %w, %t, %w {decoupled = 3 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @variable_dynamic() -> tensor<?xf32> {
  // CHECK: ge.variable: a variable must have a static shape, got tensor<?xf32>
  %0 = ge.variable "w" : tensor<?xf32>
  func.return %0 : tensor<?xf32>
}

// -----

func.func @variable_empty_key() -> tensor<2xf32> {
  // CHECK: ge.variable: the state key is empty
  %0 = ge.variable "" : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
