// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier error of the reduction and selection ops, one per split.
func.func @reduce_axis(%x: tensor<3x4xf32>) {
  %c = ge.constant dense<[2]> : tensor<1xi64>
  // CHECK: ge.reduce_max: axis 2 is out of range for rank 2
  %0 = ge.reduce_max %x, axes = %c : (tensor<3x4xf32>, tensor<1xi64>) -> tensor<3x1xf32>
  func.return
}

// -----

func.func @reduce_prod_bool(%x: tensor<3x4xi1>) {
  // CHECK: ge.reduce_prod: operand 'data' has element type i1; expected one of
  %0 = ge.reduce_prod %x : (tensor<3x4xi1>) -> tensor<1x1xi1>
  func.return
}

// -----

func.func @arg_empty_axis(%x: tensor<3x0xf32>) {
  // CHECK: ge.arg_max: axis 1 of shape [3, 0] is empty: it has no extreme element
  %0 = ge.arg_max %x {axis = 1 : i64} : (tensor<3x0xf32>) -> tensor<3x1xi64>
  func.return
}

// -----

func.func @arg_last_index(%x: tensor<3x4xf32>) {
  // CHECK: ge.arg_min: select_last_index must be 0 or 1, got 2
  %0 = ge.arg_min %x {select_last_index = 2 : i64} : (tensor<3x4xf32>) -> tensor<1x4xi64>
  func.return
}

// -----

func.func @arg_result(%x: tensor<3x4xf32>) {
  // CHECK: ge.arg_max: result #0 has type tensor<1x4xi32> but its operands imply tensor<1x4xi64>
  %0 = ge.arg_max %x : (tensor<3x4xf32>) -> tensor<1x4xi32>
  func.return
}

// -----

func.func @top_k_too_many(%x: tensor<3x4xf32>) {
  %k = ge.constant dense<[5]> : tensor<1xi64>
  // CHECK: ge.top_k: K 5 is larger than axis 1 of size 4
  %v, %i = ge.top_k %x, %k : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  func.return
}

// -----

func.func @top_k_negative(%x: tensor<3x4xf32>) {
  %k = ge.constant dense<[-1]> : tensor<1xi64>
  // CHECK: ge.top_k: K -1 is negative
  %v, %i = ge.top_k %x, %k : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  func.return
}

// -----

func.func @top_k_scalar_k(%x: tensor<3x4xf32>, %k: tensor<i64>) {
  // CHECK: ge.top_k: operand 'K' must be a 1-D tensor of one element, got shape []
  %v, %i = ge.top_k %x, %k : (tensor<3x4xf32>, tensor<i64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  func.return
}

// -----

func.func @top_k_scalar(%x: tensor<f32>, %k: tensor<1xi64>) {
  // CHECK: ge.top_k: operand 'X' must have rank 1 or more, got rank 0
  %v, %i = ge.top_k %x, %k : (tensor<f32>, tensor<1xi64>) -> (tensor<f32>, tensor<i64>)
  func.return
}

// -----

func.func @cum_sum_axis(%x: tensor<3x4xf32>) {
  %a = ge.constant dense<2> : tensor<i64>
  // CHECK: ge.cum_sum: axis 2 is out of range for rank 2
  %0 = ge.cum_sum %x, %a : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @cum_sum_axes(%x: tensor<3x4xf32>, %a: tensor<2xi64>) {
  // CHECK: ge.cum_sum: operand 'axis' must be a scalar or one element, got shape [2]
  %0 = ge.cum_sum %x, %a : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @cum_prod_flag(%x: tensor<3xf32>, %a: tensor<i64>) {
  // CHECK: ge.cum_prod: exclusive must be 0 or 1, got 3
  %0 = ge.cum_prod %x, %a {exclusive = 3 : i64} : (tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
  func.return
}

// -----

func.func @hardmax_int(%x: tensor<3xi32>) {
  // CHECK: ge.hardmax: operand 'input' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.hardmax %x : (tensor<3xi32>) -> tensor<3xi32>
  func.return
}

// -----

func.func @size_result(%x: tensor<3xf32>) {
  // CHECK: ge.size: result #0 has type tensor<1xi64> but its operands imply tensor<i64>
  %0 = ge.size %x : (tensor<3xf32>) -> tensor<1xi64>
  func.return
}
