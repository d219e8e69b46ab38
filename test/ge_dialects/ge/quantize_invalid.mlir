// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @per_axis_length(%x: tensor<2x3xf32>, %s: tensor<4xf32>) -> tensor<2x3xui8> {
  // CHECK: ge.quantize_linear: y_scale has 4 values, but axis 1 of the data has 3
  %0 = ge.quantize_linear %x, %s : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xui8>
  func.return %0 : tensor<2x3xui8>
}

// -----

func.func @zero_point_shape(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<2xi8>) -> tensor<2x3xi8> {
  // CHECK: ge.quantize_linear: y_zero_point of shape (2,) must have y_scale's shape (3,)
  %0 = ge.quantize_linear %x, %s, y_zero_point = %z : (tensor<2x3xf32>, tensor<3xf32>, tensor<2xi8>) -> tensor<2x3xi8>
  func.return %0 : tensor<2x3xi8>
}

// -----

func.func @blocks(%x: tensor<2x8xi8>, %s: tensor<2x3xf32>) -> tensor<2x8xf32> {
  // CHECK: ge.dequantize_linear: x_scale has 3 blocks along axis 1, but 8 indices in blocks of 2 make 4
  %0 = ge.dequantize_linear %x, %s {block_size = 2 : i64} : (tensor<2x8xi8>, tensor<2x3xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @rank_2_without_blocks(%x: tensor<2x8xi8>, %s: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // CHECK: ge.dequantize_linear: x_scale of rank 2 needs block_size (blocked quantization); per axis it is 1-D
  %0 = ge.dequantize_linear %x, %s : (tensor<2x8xi8>, tensor<2x4xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @zero_scale() -> tensor<3xui8> {
  %x = ge.constant dense<1.0> : tensor<3xf32>
  %s = ge.constant dense<0.0> : tensor<f32>
  // CHECK: ge.quantize_linear: y_scale holds 0, and the data is divided by it
  %0 = ge.quantize_linear %x, %s : (tensor<3xf32>, tensor<f32>) -> tensor<3xui8>
  func.return %0 : tensor<3xui8>
}

// -----

func.func @nan_scale(%x: tensor<3xi8>) -> tensor<3xf32> {
  %s = ge.constant dense<0x7FC00000> : tensor<f32>
  // CHECK: ge.dequantize_linear: x_scale holds NaN
  %0 = ge.dequantize_linear %x, %s : (tensor<3xi8>, tensor<f32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @int32_zero_point(%x: tensor<3xi32>, %s: tensor<f32>) -> tensor<3xf32> {
  %z = ge.constant dense<2> : tensor<i32>
  // CHECK: ge.dequantize_linear: x_zero_point of an int32 x must be 0, got 2
  %0 = ge.dequantize_linear %x, %s, x_zero_point = %z : (tensor<3xi32>, tensor<f32>, tensor<i32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @output_dtype_disagrees(%x: tensor<3xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<3xi8> {
  // CHECK: ge.quantize_linear: output_dtype names ui8, but y_zero_point is i8
  %0 = ge.quantize_linear %x, %s, y_zero_point = %z {output_dtype = 2 : i64} : (tensor<3xf32>, tensor<f32>, tensor<i8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}

// -----

func.func @float_to_quantize(%x: tensor<3xi8>, %s: tensor<f32>) -> tensor<3xi8> {
  // CHECK: ge.quantize_linear: operand 'x' has element type i8; expected one of f32, f16, bf16, f64
  %0 = ge.quantize_linear %x, %s : (tensor<3xi8>, tensor<f32>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}

// -----

func.func @dynamic_f32_only(%x: tensor<3xf16>) -> (tensor<3xui8>, tensor<f32>, tensor<ui8>) {
  // CHECK: ge.dynamic_quantize_linear: operand 'x' has element type f16; expected one of f32
  %y, %s, %z = ge.dynamic_quantize_linear %x : (tensor<3xf16>) -> (tensor<3xui8>, tensor<f32>, tensor<ui8>)
  func.return %y, %s, %z : tensor<3xui8>, tensor<f32>, tensor<ui8>
}

// -----

func.func @matmul_integer_zero_point(%a: tensor<2x3xui8>, %b: tensor<3x5xi8>, %z: tensor<4xi8>) -> tensor<2x5xi32> {
  // CHECK: ge.matmul_integer: b_zero_point of shape (4,) does not fit B of shape (3, 5): one value, or one per column (5,) or (1, 5)
  %0 = ge.matmul_integer %a, %b, b_zero_point = %z : (tensor<2x3xui8>, tensor<3x5xi8>, tensor<4xi8>) -> tensor<2x5xi32>
  func.return %0 : tensor<2x5xi32>
}

// -----

func.func @matmul_integer_floats(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x5xi32> {
  // CHECK: ge.matmul_integer: operand 'A' has element type f32; expected one of i8, ui8
  %0 = ge.matmul_integer %a, %b : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xi32>
  func.return %0 : tensor<2x5xi32>
}

// -----

func.func @matmul_integer_inner(%a: tensor<2x3xui8>, %b: tensor<4x5xi8>) -> tensor<2x5xi32> {
  // CHECK: ge.matmul_integer: inner dimensions 3 and 4 do not match
  %0 = ge.matmul_integer %a, %b : (tensor<2x3xui8>, tensor<4x5xi8>) -> tensor<2x5xi32>
  func.return %0 : tensor<2x5xi32>
}

// -----

func.func @conv_integer_channels(%x: tensor<1x3x4x4xui8>, %w: tensor<4x3x1x1xi8>, %z: tensor<3xi8>) -> tensor<1x4x4x4xi32> {
  // CHECK: ge.conv_integer: w_zero_point of shape (3,) must be one value or one per output channel (4)
  %0 = ge.conv_integer %x, %w, w_zero_point = %z : (tensor<1x3x4x4xui8>, tensor<4x3x1x1xi8>, tensor<3xi8>) -> tensor<1x4x4x4xi32>
  func.return %0 : tensor<1x4x4x4xi32>
}

// -----

func.func @qlinear_conv_bias(%x: tensor<1x3x4x4xui8>, %s: tensor<f32>, %zx: tensor<ui8>, %w: tensor<4x3x1x1xi8>, %zw: tensor<i8>, %b: tensor<4xf32>) -> tensor<1x4x4x4xui8> {
  // CHECK: ge.qlinear_conv: operand 'B' has element type f32; expected one of i32
  %0 = ge.qlinear_conv %x, %s, %zx, %w, %s, %zw, %s, %zx, B = %b : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<4x3x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>, tensor<4xf32>) -> tensor<1x4x4x4xui8>
  func.return %0 : tensor<1x4x4x4xui8>
}

// -----

func.func @qlinear_matmul_zero_y_scale(%a: tensor<2x3xui8>, %s: tensor<f32>, %za: tensor<ui8>, %b: tensor<3x5xi8>, %zb: tensor<i8>) -> tensor<2x5xui8> {
  %ys = ge.constant dense<0.0> : tensor<f32>
  // CHECK: ge.qlinear_matmul: y_scale holds 0, and the data is divided by it
  %0 = ge.qlinear_matmul %a, %s, %za, %b, %s, %zb, %ys, %za : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>, tensor<3x5xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<2x5xui8>
  func.return %0 : tensor<2x5xui8>
}
