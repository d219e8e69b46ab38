// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier error of ge.gather_grad, one per split.

func.func @no_data_shape(%dy: tensor<2x8xf32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather_grad: property 'data_shape' is required
  %0 = ge.gather_grad %dy, %i : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @scalar_data(%dy: tensor<f32>, %i: tensor<i64>) {
  // CHECK: ge.gather_grad: data_shape must have rank 1 or more (Gather's data does), got []
  %0 = ge.gather_grad %dy, %i {data_shape = array<i64>} : (tensor<f32>, tensor<i64>) -> tensor<f32>
  func.return
}

// -----

func.func @negative_dim(%dy: tensor<2x8xf32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather_grad: data_shape [10, -8] has a negative dimension
  %0 = ge.gather_grad %dy, %i {data_shape = array<i64: 10, -8>} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @axis_out_of_range(%dy: tensor<2x8xf32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather_grad: axis -3 is out of range for rank 2
  %0 = ge.gather_grad %dy, %i {axis = -3 : i64, data_shape = array<i64: 10, 8>} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @dy_rank(%dy: tensor<2x8xf32>, %i: tensor<2x5xi64>) {
  // CHECK: ge.gather_grad: operand 'dy' has shape [2, 8], but gathering indices of shape [2, 5] from data_shape [10, 8] along axis 0 gives [2, 5, 8]
  %0 = ge.gather_grad %dy, %i {data_shape = array<i64: 10, 8>} : (tensor<2x8xf32>, tensor<2x5xi64>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @dy_dim(%dy: tensor<2x7xf32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather_grad: operand 'dy' has shape [2, 7], but gathering indices of shape [2] from data_shape [10, 8] along axis 0 gives [2, 8]
  %0 = ge.gather_grad %dy, %i {data_shape = array<i64: 10, 8>} : (tensor<2x7xf32>, tensor<2xi64>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @dy_on_the_other_axis(%dy: tensor<2x8xf32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather_grad: operand 'dy' has shape [2, 8], but gathering indices of shape [2] from data_shape [10, 8] along axis 1 gives [10, 2]
  %0 = ge.gather_grad %dy, %i {axis = 1 : i64, data_shape = array<i64: 10, 8>} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @index_out_of_range() {
  %dy = ge.constant dense<1.0> : tensor<3x8xf32>
  %i = ge.constant dense<[0, -11, 9]> : tensor<3xi64>
  // CHECK: ge.gather_grad: index -11 is out of range for axis 0 of data_shape [10, 8]
  %0 = ge.gather_grad %dy, %i {data_shape = array<i64: 10, 8>} : (tensor<3x8xf32>, tensor<3xi64>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @integer_dy(%dy: tensor<2x8xi32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather_grad: operand 'dy' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.gather_grad %dy, %i {data_shape = array<i64: 10, 8>} : (tensor<2x8xi32>, tensor<2xi64>) -> tensor<10x8xi32>
  func.return
}

// -----

func.func @float_indices(%dy: tensor<2x8xf32>, %i: tensor<2xf32>) {
  // CHECK: ge.gather_grad: operand 'indices' has element type f32; expected one of i64, i32
  %0 = ge.gather_grad %dy, %i {data_shape = array<i64: 10, 8>} : (tensor<2x8xf32>, tensor<2xf32>) -> tensor<10x8xf32>
  func.return
}

// -----

func.func @result_not_data_shape(%dy: tensor<2x8xf32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather_grad: result #0 has type tensor<12x8xf32> but its operands imply tensor<10x8xf32>
  %0 = ge.gather_grad %dy, %i {data_shape = array<i64: 10, 8>} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<12x8xf32>
  func.return
}
