// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @perm_not_permutation(%x: tensor<2x3x4xf32>) {
  // CHECK: ge.transpose: perm [0, 2] is not a permutation of 3 axes
  %0 = ge.transpose %x {perm = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

func.func @reshape_count(%x: tensor<2x3x4xf32>) {
  %s = ge.constant dense<[5, -1]> : tensor<2xi64>
  // CHECK: ge.reshape: cannot reshape 24 elements into [5, -1]
  %0 = ge.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x?xf32>
  func.return
}

// -----

func.func @reshape_count_static(%x: tensor<2x3x4xf32>) {
  %s = ge.constant dense<[5, 5]> : tensor<2xi64>
  // CHECK: ge.reshape: cannot reshape 24 elements into [5, 5]
  %0 = ge.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x5xf32>
  func.return
}

// -----

func.func @reshape_two_inferred(%x: tensor<2x3x4xf32>) {
  %s = ge.constant dense<[-1, -1]> : tensor<2xi64>
  // CHECK: ge.reshape: shape [-1, -1] has more than one -1
  %0 = ge.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @reshape_negative(%x: tensor<2x3x4xf32>) {
  %s = ge.constant dense<[-2, 12]> : tensor<2xi64>
  // CHECK: ge.reshape: shape [-2, 12] has a negative dimension other than -1
  %0 = ge.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x12xf32>
  func.return
}

// -----

func.func @reshape_allowzero(%x: tensor<2x3x4xf32>) {
  %s = ge.constant dense<[0, -1]> : tensor<2xi64>
  // CHECK: ge.reshape: shape [0, -1] has both 0 and -1 while allowzero is 1
  %0 = ge.reshape %x, %s {allowzero = 1 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<0x?xf32>
  func.return
}

// -----

func.func @reshape_copy_out_of_rank(%x: tensor<2x3x4xf32>) {
  %s = ge.constant dense<[2, 3, 4, 0]> : tensor<4xi64>
  // CHECK: ge.reshape: shape [2, 3, 4, 0] copies dimension 3, but the input has rank 3
  %0 = ge.reshape %x, %s : (tensor<2x3x4xf32>, tensor<4xi64>) -> tensor<2x3x4x?xf32>
  func.return
}

// -----

func.func @reshape_shape_type(%x: tensor<2x3x4xf32>, %s: tensor<2xi32>) {
  // CHECK: ge.reshape: operand 'shape' has element type i32; expected one of i64
  %0 = ge.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @reshape_shape_rank(%x: tensor<2x3x4xf32>, %s: tensor<1x2xi64>) {
  // CHECK: ge.reshape: operand 'shape' must be 1-D, got rank 2
  %0 = ge.reshape %x, %s : (tensor<2x3x4xf32>, tensor<1x2xi64>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @reshape_dynamic_length(%x: tensor<2x3x4xf32>, %s: tensor<?xi64>) {
  // CHECK: ge.reshape: operand 'shape' needs a static length to give the result a known rank
  %0 = ge.reshape %x, %s : (tensor<2x3x4xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @flatten_axis(%x: tensor<2x3x4xf32>) {
  // CHECK: ge.flatten: axis 4 is out of range for rank 3 (Flatten allows [-3, 3])
  %0 = ge.flatten %x {axis = 4 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
  func.return
}

// -----

func.func @concat_dims(%a: tensor<2x3x4xf32>, %b: tensor<2x3x5xf32>) {
  // CHECK: ge.concat: concat inputs 0 and 1 differ in dimension 2: 4 vs 5
  %0 = ge.concat %a, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x5xf32>) -> tensor<2x6x4xf32>
  func.return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // CHECK: ge.concat: axis 3 is out of range for rank 2
  %0 = ge.concat %a, %a {axis = 3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

func.func @concat_no_axis(%a: tensor<2x3xf32>) {
  // CHECK: ge.concat: property 'axis' is required
  %0 = ge.concat %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_no_inputs() {
  // CHECK: ge.concat: needs at least one input
  %0 = ge.concat {axis = 0 : i64} : () -> tensor<0xf32>
  func.return
}

// -----

func.func @concat_types(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // CHECK: ge.concat: concat inputs 0 and 1 have element types f32 and f16
  %0 = ge.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_ranks(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // CHECK: ge.concat: concat inputs 0 and 1 have ranks 2 and 1
  %0 = ge.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

func.func @split_both(%x: tensor<4xf32>) {
  %s = ge.constant dense<[2, 2]> : tensor<2xi64>
  // CHECK: ge.split: split and num_outputs must not both be given
  %0:2 = ge.split %x, split = %s {num_outputs = 2 : i64} : (tensor<4xf32>, tensor<2xi64>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}

// -----

func.func @split_count(%x: tensor<4xf32>) {
  %s = ge.constant dense<[1, 1, 2]> : tensor<3xi64>
  // CHECK: ge.split: split [1, 1, 2] has 3 sizes for 2 outputs
  %0:2 = ge.split %x, split = %s : (tensor<4xf32>, tensor<3xi64>) -> (tensor<1xf32>, tensor<1xf32>)
  func.return
}

// -----

func.func @split_runtime_count(%x: tensor<4xf32>, %s: tensor<3xi64>) {
  // CHECK: ge.split: split has 3 sizes for 2 outputs
  %0:2 = ge.split %x, split = %s : (tensor<4xf32>, tensor<3xi64>) -> (tensor<?xf32>, tensor<?xf32>)
  func.return
}

// -----

func.func @split_negative(%x: tensor<4xf32>) {
  %s = ge.constant dense<[5, -1]> : tensor<2xi64>
  // CHECK: ge.split: split [5, -1] has a negative size
  %0:2 = ge.split %x, split = %s : (tensor<4xf32>, tensor<2xi64>) -> (tensor<5xf32>, tensor<1xf32>)
  func.return
}

// -----

func.func @split_sum(%x: tensor<4xf32>) {
  %s = ge.constant dense<[1, 2]> : tensor<2xi64>
  // CHECK: ge.split: split [1, 2] sums to 3, but the dimension is 4
  %0:2 = ge.split %x, split = %s : (tensor<4xf32>, tensor<2xi64>) -> (tensor<1xf32>, tensor<2xf32>)
  func.return
}

// -----

func.func @split_num_outputs_positive(%x: tensor<4xf32>) {
  // CHECK: ge.split: num_outputs must be positive, got 0
  %0:2 = ge.split %x {num_outputs = 0 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}

// -----

func.func @split_num_outputs_results(%x: tensor<4xf32>) {
  // CHECK: ge.split: num_outputs 3 does not match the 2 results
  %0:2 = ge.split %x {num_outputs = 3 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return
}

// -----

func.func @split_uneven_impossible(%x: tensor<5xf32>) {
  // CHECK: ge.split: cannot split dimension 5 into 4 parts of 2
  %0:4 = ge.split %x {num_outputs = 4 : i64} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1xf32>)
  func.return
}

// -----

func.func @split_equal_parts(%x: tensor<5xf32>) {
  // CHECK: ge.split: cannot split dimension 5 into 2 equal parts
  %0:2 = ge.split %x : (tensor<5xf32>) -> (tensor<3xf32>, tensor<2xf32>)
  func.return
}

// -----

func.func @split_no_results(%x: tensor<5xf32>) {
  // CHECK: ge.split: needs at least one result
  ge.split %x : (tensor<5xf32>) -> ()
  func.return
}

// -----

func.func @slice_step_zero(%x: tensor<2x3xf32>) {
  %b = ge.constant dense<[0]> : tensor<1xi64>
  %a = ge.constant dense<[1]> : tensor<1xi64>
  // CHECK: ge.slice: step 0 on axis 1 is invalid
  %0 = ge.slice %x, %b, %a, axes = %a, steps = %b : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xf32>
  func.return
}

// -----

func.func @slice_lengths(%x: tensor<2x3xf32>, %s: tensor<1xi64>, %e: tensor<2xi64>) {
  // CHECK: ge.slice: starts, ends, axes and steps must have one length, got starts 1, ends 2
  %0 = ge.slice %x, %s, %e : (tensor<2x3xf32>, tensor<1xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @slice_index_types(%x: tensor<2x3xf32>, %s: tensor<1xi64>, %e: tensor<1xi32>) {
  // CHECK: ge.slice: operand 'ends' has element type i32 (all of starts, ends, axes and steps share one type); expected one of i64
  %0 = ge.slice %x, %s, %e : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi32>) -> tensor<?x3xf32>
  func.return
}

// -----

func.func @slice_repeated_axis(%x: tensor<2x3xf32>) {
  %b = ge.constant dense<[0, 0]> : tensor<2xi64>
  %a = ge.constant dense<[1, -1]> : tensor<2xi64>
  // CHECK: ge.slice: axes [1, -1] name an axis twice
  %0 = ge.slice %x, %b, %a, axes = %a : (tensor<2x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x?xf32>
  func.return
}

// -----

func.func @slice_axis_range(%x: tensor<2x3xf32>) {
  %b = ge.constant dense<[0]> : tensor<1xi64>
  %a = ge.constant dense<[2]> : tensor<1xi64>
  // CHECK: ge.slice: axis 2 is out of range for rank 2
  %0 = ge.slice %x, %b, %a, axes = %a : (tensor<2x3xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @gather_scalar_data(%x: tensor<f32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather: operand 'data' must have rank 1 or more, got rank 0
  %0 = ge.gather %x, %i : (tensor<f32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @gather_index_type(%x: tensor<3xf32>, %i: tensor<2xf32>) {
  // CHECK: ge.gather: operand 'indices' has element type f32; expected one of i64, i32
  %0 = ge.gather %x, %i : (tensor<3xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @gather_axis(%x: tensor<3x4xf32>, %i: tensor<2xi64>) {
  // CHECK: ge.gather: axis -3 is out of range for rank 2
  %0 = ge.gather %x, %i {axis = -3 : i64} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @unsqueeze_axis(%x: tensor<2x3xf32>) {
  %a = ge.constant dense<[0, 4]> : tensor<2xi64>
  // CHECK: ge.unsqueeze: axis 4 is out of range for rank 4
  %0 = ge.unsqueeze %x, %a : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<1x2x3x1xf32>
  func.return
}

// -----

func.func @unsqueeze_repeated(%x: tensor<2x3xf32>) {
  %a = ge.constant dense<[1, -3]> : tensor<2xi64>
  // CHECK: ge.unsqueeze: axes [1, -3] name an axis twice
  %0 = ge.unsqueeze %x, %a : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x1x1x3xf32>
  func.return
}

// -----

func.func @squeeze_size(%x: tensor<1x3xf32>) {
  %a = ge.constant dense<[1]> : tensor<1xi64>
  // CHECK: ge.squeeze: cannot squeeze axis 1 of size 3
  %0 = ge.squeeze %x, axes = %a : (tensor<1x3xf32>, tensor<1xi64>) -> tensor<1xf32>
  func.return
}

// -----

func.func @squeeze_dynamic(%x: tensor<1x?xf32>) {
  // CHECK: ge.squeeze: squeezing without axes needs static dims, got [1, ?]
  %0 = ge.squeeze %x : (tensor<1x?xf32>) -> tensor<?xf32>
  func.return
}

// -----

func.func @squeeze_too_many_axes(%x: tensor<1x1xf32>, %a: tensor<3xi64>) {
  // CHECK: ge.squeeze: operand 'axes' has 3 values, but the input has rank 2
  %0 = ge.squeeze %x, axes = %a : (tensor<1x1xf32>, tensor<3xi64>) -> tensor<f32>
  func.return
}

// -----

func.func @reduce_mean_bool(%x: tensor<2xi1>) {
  // CHECK: ge.reduce_mean: operand 'data' has element type i1; expected one of
  %0 = ge.reduce_mean %x : (tensor<2xi1>) -> tensor<1xi1>
  func.return
}

// -----

func.func @reduce_sum_shape(%x: tensor<2x3xf32>) {
  %axes = ge.constant dense<[1]> : tensor<1xi64>
  // CHECK: ge.reduce_sum: result #0 has type tensor<2x3xf32> but its operands imply tensor<2x1xf32>
  %0 = ge.reduce_sum %x, axes = %axes : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @reduce_mean_axis(%x: tensor<2x3xf32>) {
  %a = ge.constant dense<[2]> : tensor<1xi64>
  // CHECK: ge.reduce_mean: axis 2 is out of range for rank 2
  %0 = ge.reduce_mean %x, axes = %a : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @cast_string(%x: tensor<2xf32>) {
  // CHECK: ge.cast: Cast to data type 8 (STRING) is not supported
  %0 = ge.cast %x {to = 8 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @cast_no_to(%x: tensor<2xf32>) {
  // CHECK: ge.cast: property 'to' is required
  %0 = ge.cast %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @cast_wrong_result(%x: tensor<2xf32>) {
  // CHECK: ge.cast: result #0 has type tensor<2xf32> but its operands imply tensor<2xf16>
  %0 = ge.cast %x {to = 10 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @where_condition(%c: tensor<2xf32>, %x: tensor<2xf32>) {
  // CHECK: ge.where: operand 'condition' has element type f32; expected one of i1
  %0 = ge.where %c, %x, %x : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @where_types(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<2xi64>) {
  // CHECK: ge.where: operands 'X' and 'Y' must have one element type, got f32 and i64
  %0 = ge.where %c, %x, %y : (tensor<2xi1>, tensor<2xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return
}

// -----

func.func @where_broadcast(%c: tensor<2xi1>, %x: tensor<3xf32>) {
  // CHECK: ge.where: shapes (2,) and (3,) and (3,) do not broadcast (dimension 0 of the result)
  %0 = ge.where %c, %x, %x : (tensor<2xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

func.func @expand_broadcast(%x: tensor<3x2xf32>) {
  %s = ge.constant dense<[4, 4]> : tensor<2xi64>
  // CHECK: ge.expand: shapes (3, 2) and (4, 4) do not broadcast (dimension 0 of the result)
  %0 = ge.expand %x, %s : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<4x4xf32>
  func.return
}

// -----

func.func @expand_negative(%x: tensor<3x2xf32>) {
  %s = ge.constant dense<[-1, 2]> : tensor<2xi64>
  // CHECK: ge.expand: shape [-1, 2] has a negative dimension
  %0 = ge.expand %x, %s : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  func.return
}

// -----

func.func @shape_wrong_length(%x: tensor<2x3x4xf32>) {
  // CHECK: ge.shape: result #0 has type tensor<3xi64> but its operands imply tensor<1xi64>
  %0 = ge.shape %x {start = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<3xi64>
  func.return
}

// -----

func.func @constant_of_shape_value(%s: tensor<2xi64>) {
  // CHECK: ge.constant_of_shape: value must hold exactly one element, got tensor<2xf32>
  %0 = ge.constant_of_shape %s {value = dense<[1.0, 2.0]> : tensor<2xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  func.return
}

// -----

func.func @constant_of_shape_negative() {
  %s = ge.constant dense<[4, -1]> : tensor<2xi64>
  // CHECK: ge.constant_of_shape: shape [4, -1] has a negative dimension
  %0 = ge.constant_of_shape %s : (tensor<2xi64>) -> tensor<4x?xf32>
  func.return
}

// -----

func.func @pad_mode(%x: tensor<3xf32>, %p: tensor<2xi64>) {
  // CHECK: ge.pad: mode "symmetric" is not one of constant, reflect, edge, wrap
  %0 = ge.pad %x, %p {mode = "symmetric"} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?xf32>
  func.return
}

// -----

func.func @pad_value_type(%x: tensor<3xf32>, %p: tensor<2xi64>, %v: tensor<f16>) {
  // CHECK: ge.pad: operands 'data' and 'constant_value' must have one element type, got f32 and f16
  %0 = ge.pad %x, %p, constant_value = %v : (tensor<3xf32>, tensor<2xi64>, tensor<f16>) -> tensor<?xf32>
  func.return
}

// -----

func.func @pad_value_scalar(%x: tensor<3xf32>, %p: tensor<2xi64>, %v: tensor<2xf32>) {
  // CHECK: ge.pad: constant_value must be a scalar, got shape [2]
  %0 = ge.pad %x, %p, constant_value = %v : (tensor<3xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<?xf32>
  func.return
}

// -----

func.func @pad_length(%x: tensor<3xf32>, %p: tensor<4xi64>) {
  // CHECK: ge.pad: pads has 4 values, expected 2 * 1
  %0 = ge.pad %x, %p : (tensor<3xf32>, tensor<4xi64>) -> tensor<?xf32>
  func.return
}

// -----

func.func @pad_negative_size(%x: tensor<3xf32>) {
  %p = ge.constant dense<[-2, -2]> : tensor<2xi64>
  // CHECK: ge.pad: pads [-2, -2] make dimension 0 of size 3 negative
  %0 = ge.pad %x, %p : (tensor<3xf32>, tensor<2xi64>) -> tensor<0xf32>
  func.return
}

// -----

func.func @range_not_scalar(%s: tensor<1xi64>, %l: tensor<i64>) -> tensor<?xi64> {
  // CHECK: ge.range: operand 'start' must be a scalar, got rank 1
  %0 = ge.range %s, %l, %l : (tensor<1xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %0 : tensor<?xi64>
}

// -----

func.func @range_zero_delta(%l: tensor<i64>) -> tensor<?xi64> {
  %z = ge.constant dense<0> : tensor<i64>
  // CHECK: ge.range: delta must not be 0
  %0 = ge.range %z, %z, %z : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %0 : tensor<?xi64>
}

// -----

func.func @cast_saturate_not_bool(%x: tensor<2xf32>) {
  // CHECK: ge.cast: saturate must be 0 or 1, got 2
  %0 = ge.cast %x {to = 17 : i64, saturate = 2 : i64} : (tensor<2xf32>) -> tensor<2xf8E4M3FN>
  func.return
}

// -----

func.func @cast_unknown_round_mode(%x: tensor<2xf32>) {
  // CHECK: ge.cast: round_mode must be one of up, down, nearest, got 'zero'
  %0 = ge.cast %x {to = 24 : i64, round_mode = "zero"} : (tensor<2xf32>) -> tensor<2xf8E8M0FNU>
  func.return
}

// -----

func.func @cast_wrong_narrow_result(%x: tensor<2xf32>) {
  // CHECK: ge.cast: result #0 has type tensor<2xf8E5M2> but its operands imply tensor<2xf8E4M3FN>
  %0 = ge.cast %x {to = 17 : i64} : (tensor<2xf32>) -> tensor<2xf8E5M2>
  func.return
}

// -----

// The narrow storage types are only held, moved and converted: ops that compute refuse them.
func.func @add_float8(%a: tensor<4xf8E4M3FN>) {
  // CHECK: ge.add: operand 'a' has element type f8E4M3FN; expected one of f32, f16, bf16, f64, i64, i32, i16, i8, ui8, ui16, ui32, ui64
  %0 = ge.add %a, %a : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  func.return
}

// -----

func.func @sqrt_int4(%a: tensor<4xi4>) {
  // CHECK: ge.sqrt: operand 'x' has element type i4; expected one of f32, f16, bf16, f64
  %0 = ge.sqrt %a : (tensor<4xi4>) -> tensor<4xi4>
  func.return
}

// -----

func.func @matmul_float4(%a: tensor<2x2xf4E2M1FN>) {
  // CHECK: ge.matmul: operand 'A' has element type f4E2M1FN
  %0 = ge.matmul %a, %a : (tensor<2x2xf4E2M1FN>, tensor<2x2xf4E2M1FN>) -> tensor<2x2xf4E2M1FN>
  func.return
}
