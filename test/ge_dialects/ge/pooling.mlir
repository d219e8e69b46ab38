// RUN: ge-opt %s | ge-opt | filecheck %s

// The pools of pooling.py round-trip with their properties; ONNX's `p` is the property `p`.

// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<1x2x7x8xf32, #ge.fmt<NCHW>>, %y: tensor<2x3x11xf16>, %z: tensor<1x2x5x6x7xf32>) -> (tensor<1x2x1x1xf32, #ge.fmt<NCHW>>, tensor<2x3x1xf16>, tensor<1x2x4x3xf32, #ge.fmt<NCHW>>, tensor<2x3x6xf16>, tensor<1x2x1x1x1xf32>, tensor<1x2x1x1xf32, #ge.fmt<NCHW>>) {
  // CHECK: ge.global_max_pool %{{.*}} : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> tensor<1x2x1x1xf32, #ge.fmt<NCHW>>
  %0 = ge.global_max_pool %x : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> tensor<1x2x1x1xf32, #ge.fmt<NCHW>>
  // CHECK: ge.global_max_pool %{{.*}} : (tensor<2x3x11xf16>) -> tensor<2x3x1xf16>
  %1 = ge.global_max_pool %y : (tensor<2x3x11xf16>) -> tensor<2x3x1xf16>
  // CHECK: ge.lp_pool %{{.*}} {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 1>, ceil_mode = 1 : i64, p = 3 : i64} : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> tensor<1x2x4x3xf32, #ge.fmt<NCHW>>
  %2 = ge.lp_pool %x {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 1>, ceil_mode = 1 : i64, p = 3 : i64} : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> tensor<1x2x4x3xf32, #ge.fmt<NCHW>>
  // CHECK: ge.lp_pool %{{.*}} {kernel_shape = array<i64: 3>, strides = array<i64: 2>, auto_pad = "SAME_LOWER"} : (tensor<2x3x11xf16>) -> tensor<2x3x6xf16>
  %3 = ge.lp_pool %y {kernel_shape = array<i64: 3>, strides = array<i64: 2>, auto_pad = "SAME_LOWER"} : (tensor<2x3x11xf16>) -> tensor<2x3x6xf16>
  // CHECK: ge.global_lp_pool %{{.*}} {p = 1 : i64} : (tensor<1x2x5x6x7xf32>) -> tensor<1x2x1x1x1xf32>
  %4 = ge.global_lp_pool %z {p = 1 : i64} : (tensor<1x2x5x6x7xf32>) -> tensor<1x2x1x1x1xf32>
  // CHECK: ge.global_lp_pool %{{.*}} : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> tensor<1x2x1x1xf32, #ge.fmt<NCHW>>
  %5 = ge.global_lp_pool %x : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> tensor<1x2x1x1xf32, #ge.fmt<NCHW>>
  func.return %0, %1, %2, %3, %4, %5 : tensor<1x2x1x1xf32, #ge.fmt<NCHW>>, tensor<2x3x1xf16>, tensor<1x2x4x3xf32, #ge.fmt<NCHW>>, tensor<2x3x6xf16>, tensor<1x2x1x1x1xf32>, tensor<1x2x1x1xf32, #ge.fmt<NCHW>>
}

// CHECK-LABEL: func.func @max_unpool
func.func @max_unpool(%x: tensor<1x2x2x3xf32>, %i: tensor<1x2x2x3xi64>, %s: tensor<4xi64>, %x1: tensor<?x2x4xf16>, %i1: tensor<?x2x4xi64>) -> (tensor<1x2x4x6xf32, #ge.fmt<NCHW>>, tensor<1x2x5x7xf32>, tensor<1x2x?x?xf32, #ge.fmt<NCHW>>, tensor<?x2x7xf16>) {
  // CHECK: ge.max_unpool %{{.*}}, %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>) -> tensor<1x2x4x6xf32, #ge.fmt<NCHW>>
  %0 = ge.max_unpool %x, %i {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>) -> tensor<1x2x4x6xf32, #ge.fmt<NCHW>>
  // a constant output_shape gives the result's shape
  %shape = ge.constant dense<[1, 2, 5, 7]> : tensor<4xi64>
  // CHECK: ge.max_unpool %{{.*}}, %{{.*}}, output_shape = %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>, tensor<4xi64>) -> tensor<1x2x5x7xf32>
  %1 = ge.max_unpool %x, %i, output_shape = %shape {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>, tensor<4xi64>) -> tensor<1x2x5x7xf32>
  // a runtime one leaves the spatial dims unknown
  // CHECK: ge.max_unpool %{{.*}}, %{{.*}}, output_shape = %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>, tensor<4xi64>) -> tensor<1x2x?x?xf32, #ge.fmt<NCHW>>
  %2 = ge.max_unpool %x, %i, output_shape = %s {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x3xf32>, tensor<1x2x2x3xi64>, tensor<4xi64>) -> tensor<1x2x?x?xf32, #ge.fmt<NCHW>>
  // (4 - 1) * 2 + 3 - 1 - 1 = 7
  // CHECK: ge.max_unpool %{{.*}}, %{{.*}} {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>} : (tensor<?x2x4xf16>, tensor<?x2x4xi64>) -> tensor<?x2x7xf16>
  %3 = ge.max_unpool %x1, %i1 {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 1, 1>} : (tensor<?x2x4xf16>, tensor<?x2x4xi64>) -> tensor<?x2x7xf16>
  func.return %0, %1, %2, %3 : tensor<1x2x4x6xf32, #ge.fmt<NCHW>>, tensor<1x2x5x7xf32>, tensor<1x2x?x?xf32, #ge.fmt<NCHW>>, tensor<?x2x7xf16>
}
