// RUN: ge-opt %s | ge-opt | filecheck %s

// The backward conv and pool ops round-trip with their properties: 1-D/2-D/3-D, groups, dilations,
// strides, pads, ceil mode, f16, an unknown batch dim, and a result declared without the NCHW
// annotation the op infers (as a VJP declares an unannotated operand's cotangent).

// CHECK-LABEL: func.func @conv_backprop_input
func.func @conv_backprop_input(%dy: tensor<1x6x5x5xf32, #ge.fmt<NCHW>>, %w: tensor<6x2x3x3xf32>, %dy1: tensor<?x5x6xf16>, %w1: tensor<5x3x4xf16>) -> (tensor<1x4x9x9xf32, #ge.fmt<NCHW>>, tensor<1x4x9x9xf32>, tensor<2x3x17xf16>) {
  // CHECK: ge.conv_backprop_input %{{.*}}, %{{.*}} {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, input_shape = array<i64: 1, 4, 9, 9>} : (tensor<1x6x5x5xf32, #ge.fmt<NCHW>>, tensor<6x2x3x3xf32>) -> tensor<1x4x9x9xf32, #ge.fmt<NCHW>>
  %0 = ge.conv_backprop_input %dy, %w {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, input_shape = array<i64: 1, 4, 9, 9>} : (tensor<1x6x5x5xf32, #ge.fmt<NCHW>>, tensor<6x2x3x3xf32>) -> tensor<1x4x9x9xf32, #ge.fmt<NCHW>>
  // CHECK: ge.conv_backprop_input %{{.*}}, %{{.*}} {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, input_shape = array<i64: 1, 4, 9, 9>} : (tensor<1x6x5x5xf32, #ge.fmt<NCHW>>, tensor<6x2x3x3xf32>) -> tensor<1x4x9x9xf32>
  %1 = ge.conv_backprop_input %dy, %w {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, input_shape = array<i64: 1, 4, 9, 9>} : (tensor<1x6x5x5xf32, #ge.fmt<NCHW>>, tensor<6x2x3x3xf32>) -> tensor<1x4x9x9xf32>
  // CHECK: ge.conv_backprop_input %{{.*}}, %{{.*}} {strides = array<i64: 3>, pads = array<i64: 2, 1>, input_shape = array<i64: 2, 3, 17>} : (tensor<?x5x6xf16>, tensor<5x3x4xf16>) -> tensor<2x3x17xf16>
  %2 = ge.conv_backprop_input %dy1, %w1 {strides = array<i64: 3>, pads = array<i64: 2, 1>, input_shape = array<i64: 2, 3, 17>} : (tensor<?x5x6xf16>, tensor<5x3x4xf16>) -> tensor<2x3x17xf16>
  func.return %0, %1, %2 : tensor<1x4x9x9xf32, #ge.fmt<NCHW>>, tensor<1x4x9x9xf32>, tensor<2x3x17xf16>
}

// CHECK-LABEL: func.func @conv_backprop_filter
func.func @conv_backprop_filter(%x: tensor<1x4x9x9xf32, #ge.fmt<NCHW>>, %dy: tensor<1x6x5x5xf32, #ge.fmt<NCHW>>, %x3: tensor<1x2x5x6x4xf64>, %dy3: tensor<1x3x5x3x3xf64>) -> (tensor<6x2x3x3xf32>, tensor<3x2x2x3x2xf64>) {
  // CHECK: ge.conv_backprop_filter %{{.*}}, %{{.*}} {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, filter_shape = array<i64: 6, 2, 3, 3>} : (tensor<1x4x9x9xf32, #ge.fmt<NCHW>>, tensor<1x6x5x5xf32, #ge.fmt<NCHW>>) -> tensor<6x2x3x3xf32>
  %0 = ge.conv_backprop_filter %x, %dy {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, filter_shape = array<i64: 6, 2, 3, 3>} : (tensor<1x4x9x9xf32, #ge.fmt<NCHW>>, tensor<1x6x5x5xf32, #ge.fmt<NCHW>>) -> tensor<6x2x3x3xf32>
  // CHECK: ge.conv_backprop_filter %{{.*}}, %{{.*}} {pads = array<i64: 1, 0, 1, 0, 1, 1>, strides = array<i64: 1, 2, 2>, dilations = array<i64: 1, 1, 1>, filter_shape = array<i64: 3, 2, 2, 3, 2>} : (tensor<1x2x5x6x4xf64>, tensor<1x3x5x3x3xf64>) -> tensor<3x2x2x3x2xf64>
  %1 = ge.conv_backprop_filter %x3, %dy3 {pads = array<i64: 1, 0, 1, 0, 1, 1>, strides = array<i64: 1, 2, 2>, dilations = array<i64: 1, 1, 1>, filter_shape = array<i64: 3, 2, 2, 3, 2>} : (tensor<1x2x5x6x4xf64>, tensor<1x3x5x3x3xf64>) -> tensor<3x2x2x3x2xf64>
  func.return %0, %1 : tensor<6x2x3x3xf32>, tensor<3x2x2x3x2xf64>
}

// CHECK-LABEL: func.func @pool_grads
func.func @pool_grads(%x: tensor<1x2x7x8xf32, #ge.fmt<NCHW>>, %dy: tensor<1x2x4x3xf32, #ge.fmt<NCHW>>, %v: tensor<1x2x5x6x7xf16>, %dv: tensor<1x2x3x2x3xf16>, %dy1: tensor<2x3x6xf32>) -> (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>, tensor<1x2x5x6x7xf16>, tensor<2x3x11xf32>, tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) {
  // CHECK: ge.max_pool_grad %{{.*}}, %{{.*}} {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 1>, ceil_mode = 1 : i64} : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>, tensor<1x2x4x3xf32, #ge.fmt<NCHW>>) -> tensor<1x2x7x8xf32, #ge.fmt<NCHW>>
  %0 = ge.max_pool_grad %x, %dy {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 1>, ceil_mode = 1 : i64} : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>, tensor<1x2x4x3xf32, #ge.fmt<NCHW>>) -> tensor<1x2x7x8xf32, #ge.fmt<NCHW>>
  // CHECK: ge.max_pool_grad %{{.*}}, %{{.*}} {kernel_shape = array<i64: 2, 2, 2>, dilations = array<i64: 2, 2, 2>, strides = array<i64: 1, 2, 2>} : (tensor<1x2x5x6x7xf16>, tensor<1x2x3x2x3xf16>) -> tensor<1x2x5x6x7xf16>
  %1 = ge.max_pool_grad %v, %dv {kernel_shape = array<i64: 2, 2, 2>, dilations = array<i64: 2, 2, 2>, strides = array<i64: 1, 2, 2>} : (tensor<1x2x5x6x7xf16>, tensor<1x2x3x2x3xf16>) -> tensor<1x2x5x6x7xf16>
  // CHECK: ge.avg_pool_grad %{{.*}} {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>, count_include_pad = 1 : i64, input_shape = array<i64: 2, 3, 11>} : (tensor<2x3x6xf32>) -> tensor<2x3x11xf32>
  %2 = ge.avg_pool_grad %dy1 {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>, count_include_pad = 1 : i64, input_shape = array<i64: 2, 3, 11>} : (tensor<2x3x6xf32>) -> tensor<2x3x11xf32>
  // CHECK: ge.avg_pool_grad %{{.*}} {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 1>, ceil_mode = 1 : i64, input_shape = array<i64: 1, 2, 7, 8>} : (tensor<1x2x4x3xf32, #ge.fmt<NCHW>>) -> tensor<1x2x7x8xf32, #ge.fmt<NCHW>>
  %3 = ge.avg_pool_grad %dy {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 1>, ceil_mode = 1 : i64, input_shape = array<i64: 1, 2, 7, 8>} : (tensor<1x2x4x3xf32, #ge.fmt<NCHW>>) -> tensor<1x2x7x8xf32, #ge.fmt<NCHW>>
  func.return %0, %1, %2, %3 : tensor<1x2x7x8xf32, #ge.fmt<NCHW>>, tensor<1x2x5x6x7xf16>, tensor<2x3x11xf32>, tensor<1x2x7x8xf32, #ge.fmt<NCHW>>
}
