// RUN: ge-opt %s | ge-opt | filecheck %s

// Every nn op round-trips with its properties, optional operands and optional results.

// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<1x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>, %x1: tensor<?x3x17xf16>, %w1: tensor<5x3x4xf16>) -> (tensor<1x6x5x5xf32, #ge.fmt<NCHW>>, tensor<?x5x6xf16>) {
  // CHECK: ge.conv %{{.*}}, %{{.*}}, B = %{{.*}} {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, auto_pad = "NOTSET"} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32, #ge.fmt<NCHW>> loc("/conv")
  %0 = ge.conv %x, %w, B = %b {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, auto_pad = "NOTSET"} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32, #ge.fmt<NCHW>> loc("/conv")
  // CHECK: ge.conv %{{.*}}, %{{.*}} {auto_pad = "SAME_UPPER", strides = array<i64: 3>} : (tensor<?x3x17xf16>, tensor<5x3x4xf16>) -> tensor<?x5x6xf16>
  %1 = ge.conv %x1, %w1 {auto_pad = "SAME_UPPER", strides = array<i64: 3>} : (tensor<?x3x17xf16>, tensor<5x3x4xf16>) -> tensor<?x5x6xf16>
  func.return %0, %1 : tensor<1x6x5x5xf32, #ge.fmt<NCHW>>, tensor<?x5x6xf16>
}

// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<1x2x7x8xf32, #ge.fmt<NCHW>>, %v: tensor<1x2x5x6x7xui8>, %y: tensor<2x3x11xf32>) -> (tensor<1x2x4x3xf32, #ge.fmt<NCHW>>, tensor<1x2x4x3xi64, #ge.fmt<NCHW>>, tensor<1x2x3x2x3xui8>, tensor<2x3x6xf32>, tensor<1x2x1x1xf32, #ge.fmt<NCHW>>, tensor<2x3x1xf32>) {
  // CHECK: %{{.*}}, %{{.*}} = ge.max_pool %{{.*}} {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 1>, ceil_mode = 1 : i64, storage_order = 1 : i64} : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> (tensor<1x2x4x3xf32, #ge.fmt<NCHW>>, tensor<1x2x4x3xi64, #ge.fmt<NCHW>>)
  %0, %1 = ge.max_pool %x {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 3>, pads = array<i64: 1, 0, 1, 1>, ceil_mode = 1 : i64, storage_order = 1 : i64} : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> (tensor<1x2x4x3xf32, #ge.fmt<NCHW>>, tensor<1x2x4x3xi64, #ge.fmt<NCHW>>)
  // CHECK: ge.max_pool %{{.*}} {kernel_shape = array<i64: 2, 2, 2>, dilations = array<i64: 2, 2, 2>, auto_pad = "VALID", strides = array<i64: 1, 2, 2>} : (tensor<1x2x5x6x7xui8>) -> tensor<1x2x3x2x3xui8>
  %2 = ge.max_pool %v {kernel_shape = array<i64: 2, 2, 2>, dilations = array<i64: 2, 2, 2>, auto_pad = "VALID", strides = array<i64: 1, 2, 2>} : (tensor<1x2x5x6x7xui8>) -> tensor<1x2x3x2x3xui8>
  // CHECK: ge.avg_pool %{{.*}} {kernel_shape = array<i64: 3>, strides = array<i64: 2>, auto_pad = "SAME_LOWER", count_include_pad = 1 : i64} : (tensor<2x3x11xf32>) -> tensor<2x3x6xf32>
  %3 = ge.avg_pool %y {kernel_shape = array<i64: 3>, strides = array<i64: 2>, auto_pad = "SAME_LOWER", count_include_pad = 1 : i64} : (tensor<2x3x11xf32>) -> tensor<2x3x6xf32>
  // CHECK: ge.global_avg_pool %{{.*}} : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> tensor<1x2x1x1xf32, #ge.fmt<NCHW>>
  %4 = ge.global_avg_pool %x : (tensor<1x2x7x8xf32, #ge.fmt<NCHW>>) -> tensor<1x2x1x1xf32, #ge.fmt<NCHW>>
  // CHECK: ge.global_avg_pool %{{.*}} : (tensor<2x3x11xf32>) -> tensor<2x3x1xf32>
  %5 = ge.global_avg_pool %y : (tensor<2x3x11xf32>) -> tensor<2x3x1xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<1x2x4x3xf32, #ge.fmt<NCHW>>, tensor<1x2x4x3xi64, #ge.fmt<NCHW>>, tensor<1x2x3x2x3xui8>, tensor<2x3x6xf32>, tensor<1x2x1x1xf32, #ge.fmt<NCHW>>, tensor<2x3x1xf32>
}

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<2x3x4x5xf32>, %c: tensor<3xf32>, %s: tensor<3xf64>, %h: tensor<2x?x8xf16>, %g: tensor<8xf16>) -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<3xf64>, tensor<3xf64>, tensor<2x?x8xf16>, tensor<2x?x1xf32>, tensor<2x?x1xf32>, tensor<2x?x8xf16>) {
  // CHECK: ge.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  %0 = ge.batch_norm %x, %c, %c, %c, %c {epsilon = 1.000000e-03 : f32} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = ge.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {training_mode = 1 : i64, momentum = 8.000000e-01 : f32} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf64>, tensor<3xf64>) -> (tensor<2x3x4x5xf32>, tensor<3xf64>, tensor<3xf64>)
  %1, %2, %3 = ge.batch_norm %x, %c, %c, %s, %s {training_mode = 1 : i64, momentum = 8.000000e-01 : f32} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf64>, tensor<3xf64>) -> (tensor<2x3x4x5xf32>, tensor<3xf64>, tensor<3xf64>)
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = ge.layer_norm %{{.*}}, %{{.*}}, B = %{{.*}} {axis = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x?x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x?x8xf16>, tensor<2x?x1xf32>, tensor<2x?x1xf32>)
  %4, %5, %6 = ge.layer_norm %h, %g, B = %g {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<2x?x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x?x8xf16>, tensor<2x?x1xf32>, tensor<2x?x1xf32>)
  // CHECK: ge.layer_norm %{{.*}}, %{{.*}} {stash_type = 10 : i64} : (tensor<2x?x8xf16>, tensor<8xf16>) -> tensor<2x?x8xf16>
  %7 = ge.layer_norm %h, %g {stash_type = 10 : i64} : (tensor<2x?x8xf16>, tensor<8xf16>) -> tensor<2x?x8xf16>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<3xf64>, tensor<3xf64>, tensor<2x?x8xf16>, tensor<2x?x1xf32>, tensor<2x?x1xf32>, tensor<2x?x8xf16>
}

// CHECK-LABEL: func.func @dropout_clip_softmax
func.func @dropout_clip_softmax(%x: tensor<3x4xf32>, %r: tensor<f32>, %t: tensor<i1>, %i: tensor<5xi8>, %lo: tensor<i8>) -> (tensor<3x4xf32>, tensor<3x4xi1>, tensor<3x4xf32>, tensor<5xi8>, tensor<5xi8>, tensor<3x4xf32>) {
  // CHECK: %{{.*}}, %{{.*}} = ge.dropout %{{.*}}, ratio = %{{.*}}, training_mode = %{{.*}} {seed = 7 : i64} : (tensor<3x4xf32>, tensor<f32>, tensor<i1>) -> (tensor<3x4xf32>, tensor<3x4xi1>)
  %0, %1 = ge.dropout %x, ratio = %r, training_mode = %t {seed = 7 : i64} : (tensor<3x4xf32>, tensor<f32>, tensor<i1>) -> (tensor<3x4xf32>, tensor<3x4xi1>)
  // CHECK: ge.dropout %{{.*}}, training_mode = %{{.*}} : (tensor<3x4xf32>, tensor<i1>) -> tensor<3x4xf32>
  %2 = ge.dropout %x, training_mode = %t : (tensor<3x4xf32>, tensor<i1>) -> tensor<3x4xf32>
  // CHECK: ge.clip %{{.*}}, max = %{{.*}} : (tensor<5xi8>, tensor<i8>) -> tensor<5xi8>
  %3 = ge.clip %i, max = %lo : (tensor<5xi8>, tensor<i8>) -> tensor<5xi8>
  // CHECK: ge.clip %{{.*}}, min = %{{.*}}, max = %{{.*}} : (tensor<5xi8>, tensor<i8>, tensor<i8>) -> tensor<5xi8>
  %4 = ge.clip %i, min = %lo, max = %lo : (tensor<5xi8>, tensor<i8>, tensor<i8>) -> tensor<5xi8>
  // CHECK: ge.softmax %{{.*}} {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %5 = ge.softmax %x {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<3x4xf32>, tensor<3x4xi1>, tensor<3x4xf32>, tensor<5xi8>, tensor<5xi8>, tensor<3x4xf32>
}

// CHECK-LABEL: func.func @products
func.func @products(%a: tensor<4x3xf32>, %b: tensor<5x4xf32>, %c: tensor<5xf32>, %p: tensor<2x1x3x4xf32>, %q: tensor<?x4x6xf32>, %v: tensor<4xi32>, %m: tensor<2x4x3xi32>) -> (tensor<3x5xf32>, tensor<2x?x3x6xf32>, tensor<2x3xi32>) {
  // CHECK: ge.gemm %{{.*}}, %{{.*}}, C = %{{.*}} {transA = 1 : i64, transB = 1 : i64, alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32} : (tensor<4x3xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %0 = ge.gemm %a, %b, C = %c {transA = 1 : i64, transB = 1 : i64, alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32} : (tensor<4x3xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  // CHECK: ge.matmul %{{.*}}, %{{.*}} : (tensor<2x1x3x4xf32>, tensor<?x4x6xf32>) -> tensor<2x?x3x6xf32>
  %1 = ge.matmul %p, %q : (tensor<2x1x3x4xf32>, tensor<?x4x6xf32>) -> tensor<2x?x3x6xf32>
  // CHECK: ge.matmul %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<2x4x3xi32>) -> tensor<2x3xi32>
  %2 = ge.matmul %v, %m : (tensor<4xi32>, tensor<2x4x3xi32>) -> tensor<2x3xi32>
  func.return %0, %1, %2 : tensor<3x5xf32>, tensor<2x?x3x6xf32>, tensor<2x3xi32>
}

// CHECK-LABEL: func.func @lrn
func.func @lrn(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: ge.lrn %{{.*}} {size = 5 : i64, alpha = 2.000000e-04 : f32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %0 = ge.lrn %x {size = 5 : i64, alpha = 2.0e-04 : f32} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}
