// RUN: ge-opt %s | ge-opt | filecheck %s

// The normalization and softmax backward ops round-trip with their properties and result types.

// CHECK-LABEL: func.func @batch_norm_grad
func.func @batch_norm_grad(%dy: tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, %x: tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, %c: tensor<3xf32>, %s: tensor<3xf64>, %dh: tensor<4x3xf16>, %h: tensor<4x3xf16>) -> (tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<3xf32>, tensor<3xf32>, tensor<4x3xf16>) {
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = ge.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32, training_mode = 1 : i64} : (tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<3xf32>, tensor<3xf64>, tensor<3xf64>) -> (tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<3xf32>, tensor<3xf32>) loc("/bn/grad")
  %0, %1, %2 = ge.batch_norm_grad %dy, %x, %c, %s, %s {epsilon = 1.0e-3 : f32, training_mode = 1 : i64} : (tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<3xf32>, tensor<3xf64>, tensor<3xf64>) -> (tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<3xf32>, tensor<3xf32>) loc("/bn/grad")
  // An f16 input with f32 scale and statistics (the mixed-precision BN), inference mode by default.
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = ge.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x3xf16>, tensor<4x3xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf16>, tensor<3xf32>, tensor<3xf32>)
  %3, %4, %5 = ge.batch_norm_grad %dh, %h, %c, %c, %c : (tensor<4x3xf16>, tensor<4x3xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3xf16>, tensor<3xf32>, tensor<3xf32>)
  func.return %0, %1, %2, %3 : tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<3xf32>, tensor<3xf32>, tensor<4x3xf16>
}

// CHECK-LABEL: func.func @layer_norm_grad
func.func @layer_norm_grad(%dy: tensor<2x?x8xbf16>, %x: tensor<2x?x8xbf16>, %g: tensor<8xbf16>, %d: tensor<2x3x4xf64>, %w: tensor<1x4xf64>) -> (tensor<2x?x8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<2x3x4xf64>, tensor<1x4xf64>) {
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = ge.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x?x8xbf16>, tensor<2x?x8xbf16>, tensor<8xbf16>) -> (tensor<2x?x8xbf16>, tensor<8xbf16>, tensor<8xbf16>)
  %0, %1, %2 = ge.layer_norm_grad %dy, %x, %g : (tensor<2x?x8xbf16>, tensor<2x?x8xbf16>, tensor<8xbf16>) -> (tensor<2x?x8xbf16>, tensor<8xbf16>, tensor<8xbf16>)
  // dscale and dbias have the shape of the scale, which broadcasts to x.
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = ge.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 1.000000e-02 : f32} : (tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<1x4xf64>) -> (tensor<2x3x4xf64>, tensor<1x4xf64>, tensor<1x4xf64>)
  %3, %4, %5 = ge.layer_norm_grad %d, %d, %w {axis = 1 : i64, epsilon = 1.0e-2 : f32} : (tensor<2x3x4xf64>, tensor<2x3x4xf64>, tensor<1x4xf64>) -> (tensor<2x3x4xf64>, tensor<1x4xf64>, tensor<1x4xf64>)
  func.return %0, %1, %2, %3, %4 : tensor<2x?x8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<2x3x4xf64>, tensor<1x4xf64>
}

// CHECK-LABEL: func.func @softmax_grad
func.func @softmax_grad(%y: tensor<2x5xf32>, %dy: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  // CHECK: ge.softmax_grad %{{.*}}, %{{.*}} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %0 = ge.softmax_grad %y, %dy : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  // CHECK: ge.softmax_grad %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = ge.softmax_grad %y, %dy {axis = 0 : i64} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}

// CHECK-LABEL: func.func @lrn_grad
func.func @lrn_grad(%dy: tensor<1x8x4x4xf16, #ge.fmt<NCHW>>, %x: tensor<1x8x4x4xf16, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf16, #ge.fmt<NCHW>> {
  // CHECK: ge.lrn_grad %{{.*}}, %{{.*}} {size = 5 : i64, beta = 5.000000e-01 : f32} : (tensor<1x8x4x4xf16, #ge.fmt<NCHW>>, tensor<1x8x4x4xf16, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf16, #ge.fmt<NCHW>>
  %0 = ge.lrn_grad %dy, %x {size = 5 : i64, beta = 0.5 : f32} : (tensor<1x8x4x4xf16, #ge.fmt<NCHW>>, tensor<1x8x4x4xf16, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf16, #ge.fmt<NCHW>>
  func.return %0 : tensor<1x8x4x4xf16, #ge.fmt<NCHW>>
}
