// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @accum_type(%w: tensor<4xf32>, %h: tensor<4xf16>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adagrad: operand 'accum' has type tensor<4xf16>, 'var' has tensor<4xf32>; they must be equal
  %0, %1 = ge.apply_adagrad %w, %h, %g : (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @grad_shape(%w: tensor<4xf32>, %h: tensor<4xf32>, %g: tensor<2xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adagrad: operand 'grad' has type tensor<2xf32>, 'var' has tensor<4xf32>; they must be equal
  %0, %1 = ge.apply_adagrad %w, %h, %g : (tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @int_var(%w: tensor<4xi32>, %h: tensor<4xi32>, %g: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: ge.apply_adagrad: operand 'var' has element type i32; expected one of f32, f16, bf16, f64
  %0, %1 = ge.apply_adagrad %w, %h, %g : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
  func.return %0 : tensor<4xi32>
}

// -----

func.func @negative_lr(%w: tensor<4xf32>, %h: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adagrad: lr = -0.10000000149011612 must be >= 0.0
  %0, %1 = ge.apply_adagrad %w, %h, %g {lr = -0.1 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @negative_epsilon(%w: tensor<4xf32>, %h: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adagrad: epsilon = -1.0 must be >= 0.0
  %0, %1 = ge.apply_adagrad %w, %h, %g {epsilon = -1.0 : f32} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @update_slots(%w: tensor<4xf32>, %h: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adagrad: update_slots = 2 must be 0 or 1
  %0, %1 = ge.apply_adagrad %w, %h, %g {update_slots = 2 : i64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0 : tensor<4xf32>
}

// -----

func.func @result_type(%w: tensor<4xf32>, %h: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.apply_adagrad: result #1 has type tensor<2xf32> but its operands imply tensor<4xf32>
  %0, %1 = ge.apply_adagrad %w, %h, %g : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>)
  func.return %0 : tensor<4xf32>
}
