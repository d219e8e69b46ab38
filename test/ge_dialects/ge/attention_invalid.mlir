// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @q_not_float(%q: tensor<8x16xi32>, %k: tensor<10x16xi32>, %v: tensor<10x4xi32>) -> tensor<8x4xi32> {
  // CHECK: ge.attention: operand 'q' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.attention %q, %k, %v : (tensor<8x16xi32>, tensor<10x16xi32>, tensor<10x4xi32>) -> tensor<8x4xi32>
  func.return %0 : tensor<8x4xi32>
}

// -----

func.func @dtypes_differ(%q: tensor<8x16xf32>, %k: tensor<10x16xf16>, %v: tensor<10x4xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: operands 'q' and 'k' must have one element type, got f32 and f16
  %0 = ge.attention %q, %k, %v : (tensor<8x16xf32>, tensor<10x16xf16>, tensor<10x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @rank(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10xf32>) -> tensor<8xf32> {
  // CHECK: ge.attention: operand 'v' must have rank >= 2, got rank 1
  %0 = ge.attention %q, %k, %v : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

func.func @scale_op(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: scale_op must be one of "mul", "div", got "pow"
  %0 = ge.attention %q, %k, %v {scale_op = "pow"} : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @scale_on(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: scale_on must be one of "scores", "q", "k", got "v"
  %0 = ge.attention %q, %k, %v {scale_on = "v"} : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @k_transposed(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: k_transposed must be one of 0, 1, got 2
  %0 = ge.attention %q, %k, %v {k_transposed = 2 : i64} : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @mask_kind(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>, %m: tensor<8x10xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: mask_kind must be one of "additive", "keep", got "multiplicative"
  %0 = ge.attention %q, %k, %v, mask = %m {mask_kind = "multiplicative"} : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>, tensor<8x10xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @div_by_zero(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: scale must not be 0 with scale_op = "div"
  %0 = ge.attention %q, %k, %v {scale = 0.0 : f32, scale_op = "div"} : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @head_dims(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: the head dims of q and k differ: 16 vs 10
  %0 = ge.attention %q, %k, %v {k_transposed = 1 : i64} : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @seq_lengths(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<12x4xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: k and v have different sequence lengths: 10 vs 12
  %0 = ge.attention %q, %k, %v : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<12x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @batch(%q: tensor<2x8x16xf32>, %k: tensor<3x10x16xf32>, %v: tensor<10x4xf32>) -> tensor<2x8x4xf32> {
  // CHECK: ge.attention: shapes (2,) and (3,) do not broadcast (dimension 0 of the result)
  %0 = ge.attention %q, %k, %v : (tensor<2x8x16xf32>, tensor<3x10x16xf32>, tensor<10x4xf32>) -> tensor<2x8x4xf32>
  func.return %0 : tensor<2x8x4xf32>
}

// -----

func.func @additive_mask_type(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>, %m: tensor<8x10xf16>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: the additive mask must have element type f32, got f16
  %0 = ge.attention %q, %k, %v, mask = %m : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>, tensor<8x10xf16>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @keep_mask_type(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>, %m: tensor<8x10xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: the keep mask must have element type i1, got f32
  %0 = ge.attention %q, %k, %v, mask = %m {mask_kind = "keep"} : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>, tensor<8x10xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @mask_shape(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>, %m: tensor<8x9xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: mask of shape (8, 9) does not broadcast to the scores (8, 10)
  %0 = ge.attention %q, %k, %v, mask = %m : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>, tensor<8x9xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @mask_widens(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>, %m: tensor<2x8x10xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.attention: mask of shape (2, 8, 10) does not broadcast to the scores (8, 10)
  %0 = ge.attention %q, %k, %v, mask = %m : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>, tensor<2x8x10xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @result_type(%q: tensor<8x16xf32>, %k: tensor<10x16xf32>, %v: tensor<10x4xf32>) -> tensor<8x5xf32> {
  // CHECK: ge.attention: result #0 has type tensor<8x5xf32> but its operands imply tensor<8x4xf32>
  %0 = ge.attention %q, %k, %v : (tensor<8x16xf32>, tensor<10x16xf32>, tensor<10x4xf32>) -> tensor<8x5xf32>
  func.return %0 : tensor<8x5xf32>
}
