// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier error of the indexing ops, one per split.
func.func @ge_scalar_data(%x: tensor<f32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather_elements: operand 'data' must have rank 1 or more, got rank 0
  %0 = ge.gather_elements %x, %i : (tensor<f32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @ge_index_type(%x: tensor<3xf32>, %i: tensor<2xi16>) {
  // CHECK: ge.gather_elements: operand 'indices' has element type i16; expected one of i64, i32
  %0 = ge.gather_elements %x, %i : (tensor<3xf32>, tensor<2xi16>) -> tensor<2xf32>
  func.return
}

// -----

func.func @ge_axis(%x: tensor<3x4xf32>, %i: tensor<3x4xi64>) {
  // CHECK: ge.gather_elements: axis 2 is out of range for rank 2
  %0 = ge.gather_elements %x, %i {axis = 2 : i64} : (tensor<3x4xf32>, tensor<3x4xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @ge_rank(%x: tensor<3x4xf32>, %i: tensor<3xi64>) {
  // CHECK: ge.gather_elements: indices of rank 1 do not have the data's rank 2
  %0 = ge.gather_elements %x, %i : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<3xf32>
  func.return
}

// -----

func.func @ge_exceeds(%x: tensor<3x4xf32>, %i: tensor<2x5xi64>) {
  // CHECK: ge.gather_elements: indices of shape [2, 5] exceed data of shape [3, 4] in dimension 1
  %0 = ge.gather_elements %x, %i : (tensor<3x4xf32>, tensor<2x5xi64>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @ge_constant_index(%x: tensor<3x4xf32>) {
  // CHECK: ge.gather_elements: index -5 is out of range for a dimension of size 4
  %i = ge.constant dense<[[0, 3], [-5, 1]]> : tensor<2x2xi64>
  %0 = ge.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  func.return
}

// -----

func.func @gnd_rank(%x: tensor<f32>, %i: tensor<1xi64>) {
  // CHECK: ge.gather_nd: data and indices must have rank 1 or more, got ranks 0 and 1
  %0 = ge.gather_nd %x, %i : (tensor<f32>, tensor<1xi64>) -> tensor<f32>
  func.return
}

// -----

func.func @gnd_batch_dims(%x: tensor<3x4xf32>, %i: tensor<3x1xi64>) {
  // CHECK: ge.gather_nd: batch_dims 2 must lie in [0, 1] for data rank 2, indices rank 2
  %0 = ge.gather_nd %x, %i {batch_dims = 2 : i64} : (tensor<3x4xf32>, tensor<3x1xi64>) -> tensor<3xf32>
  func.return
}

// -----

func.func @gnd_dynamic_depth(%x: tensor<3x4xf32>, %i: tensor<2x?xi64>) {
  // CHECK: ge.gather_nd: the last dimension of indices (the index depth) must be static
  %0 = ge.gather_nd %x, %i : (tensor<3x4xf32>, tensor<2x?xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @gnd_depth(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>) {
  // CHECK: ge.gather_nd: the last dimension of indices is 2, it must lie in [1, 1]
  %0 = ge.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3xf32>
  func.return
}

// -----

func.func @gnd_batch(%x: tensor<3x4xf32>, %i: tensor<2x1xi64>) {
  // CHECK: ge.gather_nd: batch dimension 0 differs: data of shape [3, 4], indices of shape [2, 1]
  %0 = ge.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @gnd_constant_index(%x: tensor<3x4xf32>) {
  // CHECK: ge.gather_nd: index 3 is out of range for a dimension of size 3
  %i = ge.constant dense<[[2, 3], [3, 0]]> : tensor<2x2xi64>
  %0 = ge.gather_nd %x, %i : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @se_reduction(%x: tensor<3xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) {
  // CHECK: ge.scatter_elements: reduction "sum" is not one of none, add, mul, max, min
  %0 = ge.scatter_elements %x, %i, %u {reduction = "sum"} : (tensor<3xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @se_updates_type(%x: tensor<3xf32>, %i: tensor<2xi64>, %u: tensor<2xf16>) {
  // CHECK: ge.scatter_elements: operands 'data' and 'updates' must have one element type, got f32 and f16
  %0 = ge.scatter_elements %x, %i, %u : (tensor<3xf32>, tensor<2xi64>, tensor<2xf16>) -> tensor<3xf32>
  func.return
}

// -----

func.func @se_updates_shape(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x3xf32>) {
  // CHECK: ge.scatter_elements: updates have shape [2, 3], expected [2, 4]
  %0 = ge.scatter_elements %x, %i, %u : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x3xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @se_result(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x4xf32>) {
  // CHECK: ge.scatter_elements: result #0 has type tensor<2x4xf32> but its operands imply tensor<3x4xf32>
  %0 = ge.scatter_elements %x, %i, %u : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @snd_updates_shape(%x: tensor<3x4xf32>, %i: tensor<5x1xi64>, %u: tensor<5xf32>) {
  // CHECK: ge.scatter_nd: updates have shape [5], expected [5, 4]
  %0 = ge.scatter_nd %x, %i, %u : (tensor<3x4xf32>, tensor<5x1xi64>, tensor<5xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @snd_depth(%x: tensor<3x4xf32>, %i: tensor<5x3xi64>, %u: tensor<5xf32>) {
  // CHECK: ge.scatter_nd: the last dimension of indices is 3, it must lie in [1, 2]
  %0 = ge.scatter_nd %x, %i, %u : (tensor<3x4xf32>, tensor<5x3xi64>, tensor<5xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @snd_constant_index(%x: tensor<3x4xf32>, %u: tensor<2xf32>) {
  // CHECK: ge.scatter_nd: index 4 is out of range for a dimension of size 4
  %i = ge.constant dense<[[2, -4], [0, 4]]> : tensor<2x2xi32>
  %0 = ge.scatter_nd %x, %i, %u : (tensor<3x4xf32>, tensor<2x2xi32>, tensor<2xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @tile_length(%x: tensor<3x4xf32>, %r: tensor<3xi64>) {
  // CHECK: ge.tile: operand 'repeats' has 3 values for rank 2
  %0 = ge.tile %x, %r : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @tile_negative(%x: tensor<3x4xf32>) {
  // CHECK: ge.tile: repeats [2, -1] has a negative value
  %r = ge.constant dense<[2, -1]> : tensor<2xi64>
  %0 = ge.tile %x, %r : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  func.return
}

// -----

func.func @tile_type(%x: tensor<3x4xf32>, %r: tensor<2xi32>) {
  // CHECK: ge.tile: operand 'repeats' has element type i32; expected one of i64
  %0 = ge.tile %x, %r : (tensor<3x4xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @tile_rank(%x: tensor<3x4xf32>, %r: tensor<1x2xi64>) {
  // CHECK: ge.tile: operand 'repeats' must be 1-D, got rank 2
  %0 = ge.tile %x, %r : (tensor<3x4xf32>, tensor<1x2xi64>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @trilu_upper(%x: tensor<3x4xf32>) {
  // CHECK: ge.trilu: upper must be 0 or 1, got 2
  %0 = ge.trilu %x {upper = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @trilu_rank(%x: tensor<4xf32>) {
  // CHECK: ge.trilu: operand 'input' must have rank 2 or more, got rank 1
  %0 = ge.trilu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @trilu_k_type(%x: tensor<3x4xf32>, %k: tensor<i32>) {
  // CHECK: ge.trilu: operand 'k' has element type i32; expected one of i64
  %0 = ge.trilu %x, k = %k : (tensor<3x4xf32>, tensor<i32>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @trilu_k_shape(%x: tensor<3x4xf32>, %k: tensor<2xi64>) {
  // CHECK: ge.trilu: operand 'k' must hold one value (a scalar or 1 element), got shape [2]
  %0 = ge.trilu %x, k = %k : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  func.return
}

// -----

func.func @onehot_values(%i: tensor<3xi64>, %d: tensor<i64>, %v: tensor<3xf32>) {
  // CHECK: ge.one_hot: operand 'values' must be [off_value, on_value] (shape [2]), got shape [3]
  %0 = ge.one_hot %i, %d, %v : (tensor<3xi64>, tensor<i64>, tensor<3xf32>) -> tensor<3x?xf32>
  func.return
}

// -----

func.func @onehot_depth_shape(%i: tensor<3xi64>, %d: tensor<2xi64>, %v: tensor<2xf32>) {
  // CHECK: ge.one_hot: operand 'depth' must hold one value (a scalar or 1 element), got shape [2]
  %0 = ge.one_hot %i, %d, %v : (tensor<3xi64>, tensor<2xi64>, tensor<2xf32>) -> tensor<3x?xf32>
  func.return
}

// -----

func.func @onehot_indices_type(%i: tensor<3xi1>, %d: tensor<i64>, %v: tensor<2xf32>) {
  // CHECK: ge.one_hot: operand 'indices' has element type i1; expected one of
  %0 = ge.one_hot %i, %d, %v : (tensor<3xi1>, tensor<i64>, tensor<2xf32>) -> tensor<3x?xf32>
  func.return
}

// -----

func.func @onehot_axis(%i: tensor<3xi64>, %d: tensor<i64>, %v: tensor<2xf32>) {
  // CHECK: ge.one_hot: axis 2 is out of range for a result of rank 2
  %0 = ge.one_hot %i, %d, %v {axis = 2 : i64} : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x?xf32>
  func.return
}

// -----

func.func @onehot_depth_negative(%i: tensor<3xi64>, %v: tensor<2xf32>) {
  // CHECK: ge.one_hot: depth -2 is negative
  %d = ge.constant dense<-2> : tensor<i64>
  %0 = ge.one_hot %i, %d, %v : (tensor<3xi64>, tensor<i64>, tensor<2xf32>) -> tensor<3x?xf32>
  func.return
}

// -----

func.func @onehot_depth_nan(%i: tensor<3xi64>, %v: tensor<2xf32>) {
  // CHECK: ge.one_hot: depth nan is not finite
  %d = ge.constant dense<0x7FC00000> : tensor<f32>
  %0 = ge.one_hot %i, %d, %v : (tensor<3xi64>, tensor<f32>, tensor<2xf32>) -> tensor<3x?xf32>
  func.return
}

// -----

func.func @eyelike_rank(%x: tensor<3xf32>) {
  // CHECK: ge.eye_like: operand 'input' must have rank 2, got rank 1
  %0 = ge.eye_like %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @eyelike_dtype(%x: tensor<3x3xf32>) {
  // CHECK: ge.eye_like: dtype 17 (f8E4M3FN) is not a numeric or bool type
  %0 = ge.eye_like %x {dtype = 17 : i64} : (tensor<3x3xf32>) -> tensor<3x3xf8E4M3FN>
  func.return
}

// -----

func.func @eyelike_unknown_dtype(%x: tensor<3x3xf32>) {
  // CHECK: ge.eye_like: dtype 8 is not a numeric or bool type
  %0 = ge.eye_like %x {dtype = 8 : i64} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return
}
