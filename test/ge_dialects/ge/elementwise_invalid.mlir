// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @not_broadcastable(%a: tensor<4x3xf32>, %b: tensor<5xf32>) -> tensor<4x3xf32> {
  // CHECK: ge.add: shapes (4, 3) and (5,) do not broadcast (dimension 1 of the result)
  %0 = ge.add %a, %b : (tensor<4x3xf32>, tensor<5xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @mixed_dtypes(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // CHECK: ge.mul: operands 'a' and 'b' must have one element type, got f32 and f16
  %0 = ge.mul %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @wrong_result_shape(%x: tensor<4xf32>) -> tensor<5xf32> {
  // CHECK: ge.relu '/r': result #0 has type tensor<5xf32> but its operands imply tensor<4xf32>
  %0 = ge.relu %x : (tensor<4xf32>) -> tensor<5xf32> loc("/r")
  func.return %0 : tensor<5xf32>
}

// -----

func.func @int_sqrt(%x: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: ge.sqrt: operand 'x' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.sqrt %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @unsigned_relu(%x: tensor<4xui8>) -> tensor<4xui8> {
  // CHECK: ge.relu: operand 'x' has element type ui8
  %0 = ge.relu %x : (tensor<4xui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @bad_gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.gelu: approximate must be "none" or "tanh", got "erf"
  %0 = ge.gelu %x {approximate = "erf"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @bool_result(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.equal: result #0 has type tensor<4xf32> but its operands imply tensor<4xi1>
  %0 = ge.equal %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @bad_format_rank(%a: tensor<4xf32, #ge.fmt<NCHW>>) -> tensor<4xf32, #ge.fmt<NCHW>> {
  // CHECK: origin format NCHW needs rank 4, got tensor<4xf32, #ge.fmt<NCHW>>
  %0 = ge.relu %a : (tensor<4xf32, #ge.fmt<NCHW>>) -> tensor<4xf32, #ge.fmt<NCHW>>
  func.return %0 : tensor<4xf32, #ge.fmt<NCHW>>
}

// -----

func.func @int_exp(%x: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: ge.exp: operand 'x' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.exp %x : (tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @int_log(%x: tensor<4xi64>) -> tensor<4xi64> {
  // CHECK: ge.log '/log': operand 'x' has element type i64; expected one of f32, f16, bf16, f64
  %0 = ge.log %x : (tensor<4xi64>) -> tensor<4xi64> loc("/log")
  func.return %0 : tensor<4xi64>
}

// -----

func.func @relu_grad_shapes(%dy: tensor<4x3xf32>, %y: tensor<4x1xf32>) -> tensor<4x3xf32> {
  // CHECK: ge.relu_grad: operands 'dy' and 'y' must have one shape, got (4, 3) and (4, 1)
  %0 = ge.relu_grad %dy, %y : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @relu_grad_ranks(%dy: tensor<4x?xf32>, %y: tensor<4xf32>) -> tensor<4x?xf32> {
  // CHECK: ge.relu_grad: operands 'dy' and 'y' must have one shape, got (4, ?) and (4,)
  %0 = ge.relu_grad %dy, %y : (tensor<4x?xf32>, tensor<4xf32>) -> tensor<4x?xf32>
  func.return %0 : tensor<4x?xf32>
}

// -----

func.func @relu_grad_dtypes(%dy: tensor<4xf32>, %y: tensor<4xf16>) -> tensor<4xf32> {
  // CHECK: ge.relu_grad: operands 'dy' and 'y' must have one element type, got f32 and f16
  %0 = ge.relu_grad %dy, %y : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @relu_grad_int(%dy: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: ge.relu_grad: operand 'dy' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.relu_grad %dy, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @relu_grad_result(%dy: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf16> {
  // CHECK: ge.relu_grad: result #0 has type tensor<4xf16> but its operands imply tensor<4xf32>
  %0 = ge.relu_grad %dy, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

func.func @gelu_grad_approximate(%dy: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.gelu_grad '/g': approximate must be "none" or "tanh", got "erf"
  %0 = ge.gelu_grad %dy, %x {approximate = "erf"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("/g")
  func.return %0 : tensor<4xf32>
}

// -----

func.func @gelu_grad_shapes(%dy: tensor<2x4xf32>, %x: tensor<4xf32>) -> tensor<2x4xf32> {
  // CHECK: ge.gelu_grad: operands 'dy' and 'x' must have one shape, got (2, 4) and (4,)
  %0 = ge.gelu_grad %dy, %x : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @mod_fmod(%a: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: ge.mod: fmod must be 0 or 1, got 2
  %0 = ge.mod %a, %a {fmod = 2 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @neg_unsigned(%a: tensor<3xui8>) -> tensor<3xui8> {
  // CHECK: ge.neg: operand 'x' has element type ui8; expected one of f32, f16, bf16, f64, i64, i32, i16, i8
  %0 = ge.neg %a : (tensor<3xui8>) -> tensor<3xui8>
  func.return %0 : tensor<3xui8>
}

// -----

func.func @reciprocal_integer(%a: tensor<3xi32>) -> tensor<3xi32> {
  // CHECK: ge.reciprocal: operand 'x' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.reciprocal %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}
