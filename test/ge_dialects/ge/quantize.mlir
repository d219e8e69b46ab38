// RUN: ge-opt %s | ge-opt | filecheck %s
// The quantization ops print and parse back with their inferred types: per tensor, per axis and
// blocked scales, the optional zero points, and the integer products.

func.func @linear(%x: tensor<2x6xf32>, %s: tensor<f32>, %z: tensor<i8>, %sa: tensor<6xf32>, %za: tensor<6xui8>, %sb: tensor<2x2xf16>, %q: tensor<2x6xi8>, %q4: tensor<2x6xi4>) -> (tensor<2x6xi8>, tensor<2x6xui8>, tensor<2x6xui8>, tensor<2x6xf16>, tensor<2x6xf32>, tensor<2x6xf16>) {
  // CHECK: ge.quantize_linear %{{.*}}, %{{.*}}, y_zero_point = %{{.*}} : (tensor<2x6xf32>, tensor<f32>, tensor<i8>) -> tensor<2x6xi8>
  %0 = ge.quantize_linear %x, %s, y_zero_point = %z : (tensor<2x6xf32>, tensor<f32>, tensor<i8>) -> tensor<2x6xi8>
  // CHECK: ge.quantize_linear %{{.*}}, %{{.*}} : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xui8>
  %1 = ge.quantize_linear %x, %s : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xui8>
  // CHECK: ge.quantize_linear %{{.*}}, %{{.*}}, y_zero_point = %{{.*}} {axis = -1 : i64} : (tensor<2x6xf32>, tensor<6xf32>, tensor<6xui8>) -> tensor<2x6xui8>
  %2 = ge.quantize_linear %x, %sa, y_zero_point = %za {axis = -1 : i64} : (tensor<2x6xf32>, tensor<6xf32>, tensor<6xui8>) -> tensor<2x6xui8>
  // CHECK: ge.dequantize_linear %{{.*}}, %{{.*}} {axis = 1 : i64, block_size = 3 : i64} : (tensor<2x6xi8>, tensor<2x2xf16>) -> tensor<2x6xf16>
  %3 = ge.dequantize_linear %q, %sb {axis = 1 : i64, block_size = 3 : i64} : (tensor<2x6xi8>, tensor<2x2xf16>) -> tensor<2x6xf16>
  // CHECK: ge.dequantize_linear %{{.*}}, %{{.*}} {axis = 1 : i64, block_size = 3 : i64, output_dtype = 1 : i64} : (tensor<2x6xi4>, tensor<2x2xf16>) -> tensor<2x6xf32>
  %4 = ge.dequantize_linear %q4, %sb {axis = 1 : i64, block_size = 3 : i64, output_dtype = 1 : i64} : (tensor<2x6xi4>, tensor<2x2xf16>) -> tensor<2x6xf32>
  // CHECK: ge.quantize_linear %{{.*}}, %{{.*}} {output_dtype = 17 : i64, saturate = 0 : i64} : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xf8E4M3FN>
  %5 = ge.quantize_linear %x, %s {output_dtype = 17 : i64, saturate = 0 : i64} : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xf8E4M3FN>
  %6 = ge.dequantize_linear %5, %s {output_dtype = 10 : i64} : (tensor<2x6xf8E4M3FN>, tensor<f32>) -> tensor<2x6xf16>
  func.return %0, %1, %2, %3, %4, %6 : tensor<2x6xi8>, tensor<2x6xui8>, tensor<2x6xui8>, tensor<2x6xf16>, tensor<2x6xf32>, tensor<2x6xf16>
}

func.func @dynamic(%x: tensor<3x4xf32>) -> (tensor<3x4xui8>, tensor<f32>, tensor<ui8>) {
  // CHECK: ge.dynamic_quantize_linear %{{.*}} : (tensor<3x4xf32>) -> (tensor<3x4xui8>, tensor<f32>, tensor<ui8>)
  %y, %s, %z = ge.dynamic_quantize_linear %x : (tensor<3x4xf32>) -> (tensor<3x4xui8>, tensor<f32>, tensor<ui8>)
  func.return %y, %s, %z : tensor<3x4xui8>, tensor<f32>, tensor<ui8>
}

func.func @products(%a: tensor<2x5x7xui8>, %b: tensor<7x6xi8>, %za: tensor<ui8>, %zb: tensor<6xi8>, %s: tensor<f32>, %x: tensor<1x4x6x6xui8>, %w: tensor<8x2x3x3xi8>, %zw: tensor<8xi8>, %sw: tensor<8xf32>, %bias: tensor<8xi32>, %sc: tensor<6xf32>) -> (tensor<2x5x6xi32>, tensor<2x5x6xui8>, tensor<1x8x2x4xi32>, tensor<1x8x4x4xui8>) {
  // CHECK: ge.matmul_integer %{{.*}}, %{{.*}}, a_zero_point = %{{.*}}, b_zero_point = %{{.*}} : (tensor<2x5x7xui8>, tensor<7x6xi8>, tensor<ui8>, tensor<6xi8>) -> tensor<2x5x6xi32>
  %0 = ge.matmul_integer %a, %b, a_zero_point = %za, b_zero_point = %zb : (tensor<2x5x7xui8>, tensor<7x6xi8>, tensor<ui8>, tensor<6xi8>) -> tensor<2x5x6xi32>
  // CHECK: ge.qlinear_matmul %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x5x7xui8>, tensor<f32>, tensor<ui8>, tensor<7x6xi8>, tensor<6xf32>, tensor<6xi8>, tensor<f32>, tensor<ui8>) -> tensor<2x5x6xui8>
  %1 = ge.qlinear_matmul %a, %s, %za, %b, %sc, %zb, %s, %za : (tensor<2x5x7xui8>, tensor<f32>, tensor<ui8>, tensor<7x6xi8>, tensor<6xf32>, tensor<6xi8>, tensor<f32>, tensor<ui8>) -> tensor<2x5x6xui8>
  // CHECK: ge.conv_integer %{{.*}}, %{{.*}}, x_zero_point = %{{.*}}, w_zero_point = %{{.*}} {group = 2 : i64, strides = array<i64: 2, 1>} : (tensor<1x4x6x6xui8>, tensor<8x2x3x3xi8>, tensor<ui8>, tensor<8xi8>) -> tensor<1x8x2x4xi32>
  %2 = ge.conv_integer %x, %w, x_zero_point = %za, w_zero_point = %zw {group = 2 : i64, strides = array<i64: 2, 1>} : (tensor<1x4x6x6xui8>, tensor<8x2x3x3xi8>, tensor<ui8>, tensor<8xi8>) -> tensor<1x8x2x4xi32>
  // CHECK: ge.qlinear_conv %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, B = %{{.*}} {group = 2 : i64} : (tensor<1x4x6x6xui8>, tensor<f32>, tensor<ui8>, tensor<8x2x3x3xi8>, tensor<8xf32>, tensor<8xi8>, tensor<f32>, tensor<ui8>, tensor<8xi32>) -> tensor<1x8x4x4xui8>
  %3 = ge.qlinear_conv %x, %s, %za, %w, %sw, %zw, %s, %za, B = %bias {group = 2 : i64} : (tensor<1x4x6x6xui8>, tensor<f32>, tensor<ui8>, tensor<8x2x3x3xi8>, tensor<8xf32>, tensor<8xi8>, tensor<f32>, tensor<ui8>, tensor<8xi32>) -> tensor<1x8x4x4xui8>
  func.return %0, %1, %2, %3 : tensor<2x5x6xi32>, tensor<2x5x6xui8>, tensor<1x8x2x4xi32>, tensor<1x8x4x4xui8>
}
