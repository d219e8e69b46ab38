// RUN: ge-opt %s | ge-opt | filecheck %s

// ge.conv_transpose round-trips with its properties and bias; the result shapes follow the crop
// pads, auto_pad or output_shape decide (ge_dialects/ge/conv_transpose.py).

// CHECK-LABEL: func.func @conv_transpose
func.func @conv_transpose(%x: tensor<1x4x3x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<6xf32>, %x1: tensor<?x2x3xf16>, %w1: tensor<2x1x3xf16>, %x2: tensor<1x1x3x3xf32>, %w2: tensor<1x2x3x3xf32>, %x3: tensor<1x2x?x4xf32>, %w22: tensor<2x2x1x2xf32>, %w3: tensor<2x1x2xf32>, %x4: tensor<1x2x3xf32>) -> (tensor<1x6x7x7xf32, #ge.fmt<NCHW>>, tensor<?x1x6xf16>, tensor<1x2x9x5xf32, #ge.fmt<NCHW>>, tensor<1x2x?x6xf32, #ge.fmt<NCHW>>, tensor<1x1x8xf32>, tensor<?x1x8xf16>) {
  // CHECK: ge.conv_transpose %{{.*}}, %{{.*}}, B = %{{.*}} {group = 2 : i64, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x7x7xf32, #ge.fmt<NCHW>>
  %0 = ge.conv_transpose %x, %w, B = %b {group = 2 : i64, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x7x7xf32, #ge.fmt<NCHW>>
  // output_shape 6 of a full 7: one position cropped at the end (SAME_UPPER)
  // CHECK: ge.conv_transpose %{{.*}}, %{{.*}} {strides = array<i64: 2>, output_shape = array<i64: 6>, auto_pad = "SAME_UPPER"} : (tensor<?x2x3xf16>, tensor<2x1x3xf16>) -> tensor<?x1x6xf16>
  %1 = ge.conv_transpose %x1, %w1 {strides = array<i64: 2>, output_shape = array<i64: 6>, auto_pad = "SAME_UPPER"} : (tensor<?x2x3xf16>, tensor<2x1x3xf16>) -> tensor<?x1x6xf16>
  // full 3 * 2 + 1 + 3 = 10 and 2 * 2 + 1 + 3 = 8, less pads 1 + 0 and 2 + 1
  // CHECK: ge.conv_transpose %{{.*}}, %{{.*}} {strides = array<i64: 3, 2>, pads = array<i64: 1, 2, 0, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x9x5xf32, #ge.fmt<NCHW>>
  %2 = ge.conv_transpose %x2, %w2 {strides = array<i64: 3, 2>, pads = array<i64: 1, 2, 0, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x9x5xf32, #ge.fmt<NCHW>>
  // CHECK: ge.conv_transpose %{{.*}}, %{{.*}} {dilations = array<i64: 1, 2>} : (tensor<1x2x?x4xf32>, tensor<2x2x1x2xf32>) -> tensor<1x2x?x6xf32, #ge.fmt<NCHW>>
  %3 = ge.conv_transpose %x3, %w22 {dilations = array<i64: 1, 2>} : (tensor<1x2x?x4xf32>, tensor<2x2x1x2xf32>) -> tensor<1x2x?x6xf32, #ge.fmt<NCHW>>
  // SAME with a stride beyond the kernel: full 3 * 2 + 2 = 8 < 3 * 3, nothing to crop
  // CHECK: ge.conv_transpose %{{.*}}, %{{.*}} {strides = array<i64: 3>, auto_pad = "SAME_LOWER"} : (tensor<1x2x3xf32>, tensor<2x1x2xf32>) -> tensor<1x1x8xf32>
  %4 = ge.conv_transpose %x4, %w3 {strides = array<i64: 3>, auto_pad = "SAME_LOWER"} : (tensor<1x2x3xf32>, tensor<2x1x2xf32>) -> tensor<1x1x8xf32>
  // output_shape past the full output (7 + 1): extended with zeros
  // CHECK: ge.conv_transpose %{{.*}}, %{{.*}} {strides = array<i64: 2>, output_shape = array<i64: 8>} : (tensor<?x2x3xf16>, tensor<2x1x3xf16>) -> tensor<?x1x8xf16>
  %5 = ge.conv_transpose %x1, %w1 {strides = array<i64: 2>, output_shape = array<i64: 8>} : (tensor<?x2x3xf16>, tensor<2x1x3xf16>) -> tensor<?x1x8xf16>
  func.return %0, %1, %2, %3, %4, %5 : tensor<1x6x7x7xf32, #ge.fmt<NCHW>>, tensor<?x1x6xf16>, tensor<1x2x9x5xf32, #ge.fmt<NCHW>>, tensor<1x2x?x6xf32, #ge.fmt<NCHW>>, tensor<1x1x8xf32>, tensor<?x1x8xf16>
}
