// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @no_operands() -> tensor<i1> {
  // CHECK: ge.all_finite: needs at least one operand
  %0 = ge.all_finite : () -> tensor<i1>
  func.return %0 : tensor<i1>
}

// -----

func.func @int_operand(%g: tensor<4xi32>) -> tensor<i1> {
  // CHECK: ge.all_finite: operand #0 must be a float tensor, got tensor<4xi32>
  %0 = ge.all_finite %g : (tensor<4xi32>) -> tensor<i1>
  func.return %0 : tensor<i1>
}

// -----

func.func @flag_result(%g: tensor<4xf32>) -> tensor<f32> {
  // CHECK: ge.all_finite: result #0 has type tensor<f32> but its operands imply tensor<i1>
  %0 = ge.all_finite %g : (tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @scale_shape(%s: tensor<1xf32>, %n: tensor<f32>, %ok: tensor<i1>) -> tensor<1xf32> {
  // CHECK: ge.loss_scale_update: operand 'scale' must be a scalar tensor<f32>, got tensor<1xf32>
  %0, %1 = ge.loss_scale_update %s, %n, %ok : (tensor<1xf32>, tensor<f32>, tensor<i1>) -> (tensor<1xf32>, tensor<f32>)
  func.return %0 : tensor<1xf32>
}

// -----

func.func @good_steps_type(%s: tensor<f32>, %n: tensor<f16>, %ok: tensor<i1>) -> tensor<f32> {
  // CHECK: ge.loss_scale_update: operand 'good_steps' must be a scalar tensor<f32>, got tensor<f16>
  %0, %1 = ge.loss_scale_update %s, %n, %ok : (tensor<f32>, tensor<f16>, tensor<i1>) -> (tensor<f32>, tensor<f16>)
  func.return %0 : tensor<f32>
}

// -----

func.func @finite_type(%s: tensor<f32>, %n: tensor<f32>, %ok: tensor<f32>) -> tensor<f32> {
  // CHECK: ge.loss_scale_update: operand 'finite' must be a scalar tensor<i1>, got tensor<f32>
  %0, %1 = ge.loss_scale_update %s, %n, %ok : (tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  func.return %0 : tensor<f32>
}

// -----

func.func @interval(%s: tensor<f32>, %n: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  // CHECK: ge.loss_scale_update: growth_interval = 0 must be >= 1
  %0, %1 = ge.loss_scale_update %s, %n, %ok {growth_interval = 0 : i64} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  func.return %0 : tensor<f32>
}

// -----

func.func @growth(%s: tensor<f32>, %n: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  // CHECK: ge.loss_scale_update: growth_factor = 0.5 must be >= 1.0
  %0, %1 = ge.loss_scale_update %s, %n, %ok {growth_factor = 0.5 : f32} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  func.return %0 : tensor<f32>
}

// -----

func.func @backoff(%s: tensor<f32>, %n: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  // CHECK: ge.loss_scale_update: backoff_factor = 0.0 must be in (0, 1]
  %0, %1 = ge.loss_scale_update %s, %n, %ok {backoff_factor = 0.0 : f32} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  func.return %0 : tensor<f32>
}
