// Mistakes in IR text are one line naming file:line:col and the reason.
// RUN: ge-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @hex_too_wide() -> tensor<1xf32> {
  // CHECK: constant_text_invalid.mlir:[[# @LINE + 2]]:27
  // CHECK: 0x1FFFFFFFF has more than the 32 bits of f32
  %0 = ge.constant dense<[0x1FFFFFFFF]> : tensor<1xf32>
  func.return %0 : tensor<1xf32>
}

// -----

func.func @signed_hex_float() -> tensor<1xf16> {
  // CHECK: constant_text_invalid.mlir:[[# @LINE + 2]]:27
  // CHECK: a hex float literal is a bit pattern and takes no sign: -0x7E00
  %0 = ge.constant dense<[-0x7E00]> : tensor<1xf16>
  func.return %0 : tensor<1xf16>
}

// -----

func.func @float_overflow() -> tensor<f32> {
  // CHECK: constant_text_invalid.mlir:[[# @LINE + 2]]:26
  // CHECK: 1.0e39 is out of range for type f32
  %0 = ge.constant dense<1.0e39> : tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @f8_overflow() -> tensor<f8E4M3FN> {
  // CHECK: 1000.0 is out of range for type f8E4M3FN
  %0 = ge.constant dense<1000.0> : tensor<f8E4M3FN>
  func.return %0 : tensor<f8E4M3FN>
}

// -----

func.func @int_range() -> tensor<2xui8> {
  // CHECK: constant_text_invalid.mlir:[[# @LINE + 2]]:32
  // CHECK: -1 is out of range for type ui8 ([0, 255])
  %0 = ge.constant dense<[255, -1]> : tensor<2xui8>
  func.return %0 : tensor<2xui8>
}

// -----

func.func @i4_range() -> tensor<2xi4> {
  // CHECK: 16 is out of range for type i4 ([-8, 15])
  %0 = ge.constant dense<[-8, 16]> : tensor<2xi4>
  func.return %0 : tensor<2xi4>
}

// -----

func.func @float_for_int() -> tensor<1xi32> {
  // CHECK: 1.5 is not an integer; i32 holds integers
  %0 = ge.constant dense<[1.5]> : tensor<1xi32>
  func.return %0 : tensor<1xi32>
}

// -----

func.func @not_rectangular() -> tensor<2x2xf32> {
  // CHECK: the dense literal is not rectangular: this item has shape [1], the first has [2]
  %0 = ge.constant dense<[[1.0, 2.0], [3.0]]> : tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @shape_mismatch() -> tensor<3xf32> {
  // CHECK: the dense literal has shape [2] but its type tensor<3xf32> has shape [3]
  %0 = ge.constant dense<[1.0, 2.0]> : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @too_large() -> tensor<2000000000xf32> {
  // CHECK: tensor<2000000000xf32> holds 8000000000 bytes, more than the limit of 4294967296 bytes
  %0 = ge.constant dense<1.0> : tensor<2000000000xf32>
  func.return %0 : tensor<2000000000xf32>
}

// -----

func.func @hex_data_length() -> tensor<3xf32> {
  // CHECK: the hex data holds 8 bytes; tensor<3xf32> needs 12 (or 4 for a splat)
  %0 = ge.constant dense<"0x0000803F0000803F"> : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @hex_data_i4() -> tensor<2xi4> {
  // CHECK: the hex data holds values outside i4
  %0 = ge.constant dense<"0x0710"> : tensor<2xi4>
  func.return %0 : tensor<2xi4>
}

// -----

func.func @bad_name() {
  // CHECK: constant_text_invalid.mlir:[[# @LINE + 2]]:3
  // CHECK: a name after '%' must be a number or start with a letter or one of $._- (ASCII only); got 'ü'
  %ü = ge.constant dense<1.0> : tensor<f32>
  func.return
}

// -----

func.func @return_mismatch() -> tensor<i8> {
  %0 = ge.constant dense<3.0> : tensor<f32>
  // CHECK: constant_text_invalid.mlir:[[# @LINE + 1]]:3: Expected arguments to have the same types as the function output types
  func.return %0 : tensor<f32>
}

// -----

func.func @calls_itself(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: constant_text_invalid.mlir:[[# @LINE + 1]]:3: @calls_itself calls itself (directly or through other functions); recursion is not supported
  %0 = func.call @calls_itself(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @ping(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @pong(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
func.func @pong(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK: constant_text_invalid.mlir:[[# @LINE + 1]]:3: @ping calls itself (directly or through other functions)
  %0 = func.call @ping(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
