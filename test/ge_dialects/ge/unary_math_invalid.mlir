// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @sin_of_integers(%a: tensor<3xi32>) -> tensor<3xi32> {
  // CHECK: ge.sin: operand 'x' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.sin %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @is_nan_result_is_bool(%a: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: ge.is_nan: result #0 has type tensor<3xf32> but its operands imply tensor<3xi1>
  %0 = ge.is_nan %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @bitwise_of_floats(%a: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: ge.bitwise_and: operand 'a' has element type f32; expected one of i64, i32, i16, i8, ui8, ui16, ui32, ui64
  %0 = ge.bitwise_and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @shift_without_direction(%a: tensor<3xui8>) -> tensor<3xui8> {
  // CHECK: ge.bit_shift: direction must be LEFT or RIGHT, got None
  %0 = ge.bit_shift %a, %a : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  func.return %0 : tensor<3xui8>
}

// -----

func.func @shift_sideways(%a: tensor<3xui8>) -> tensor<3xui8> {
  // CHECK: ge.bit_shift: direction must be LEFT or RIGHT, got 'UP'
  %0 = ge.bit_shift %a, %a {direction = "UP"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  func.return %0 : tensor<3xui8>
}

// -----

func.func @bit_cast_to_another_width(%a: tensor<3xf32>) -> tensor<3xf16> {
  // CHECK: ge.bit_cast: f32 has 32 bits and f16 16: BitCast needs equal widths
  %0 = ge.bit_cast %a {to = 10 : i64} : (tensor<3xf32>) -> tensor<3xf16>
  func.return %0 : tensor<3xf16>
}

// -----

func.func @bit_cast_to_nothing(%a: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: ge.bit_cast: 'to' must be an ONNX data type ge has, got None
  %0 = ge.bit_cast %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
