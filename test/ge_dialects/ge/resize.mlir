// RUN: ge-opt %s | ge-opt | filecheck %s

// ge.resize round-trips with each optional operand and property; constant scales/sizes fix the
// output shape, runtime ones leave the resized axes unknown.

// CHECK-LABEL: func.func @scales_nearest
func.func @scales_nearest(%x: tensor<1x3x2x2xf32, #ge.fmt<NCHW>>) -> tensor<1x3x4x6xf32, #ge.fmt<NCHW>> {
  %s = ge.constant dense<[1.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  // CHECK: ge.resize %{{.*}}, scales = %{{.*}} : (tensor<1x3x2x2xf32, #ge.fmt<NCHW>>, tensor<4xf32>) -> tensor<1x3x4x6xf32, #ge.fmt<NCHW>> loc("/up")
  %0 = ge.resize %x, scales = %s : (tensor<1x3x2x2xf32, #ge.fmt<NCHW>>, tensor<4xf32>) -> tensor<1x3x4x6xf32, #ge.fmt<NCHW>> loc("/up")
  func.return %0 : tensor<1x3x4x6xf32, #ge.fmt<NCHW>>
}

// CHECK-LABEL: func.func @downscale_floor
func.func @downscale_floor(%x: tensor<1x1x2x4xf16>) -> tensor<1x1x1x2xf16> {
  %s = ge.constant dense<[1.0, 1.0, 0.6, 0.6]> : tensor<4xf32>
  // CHECK: ge.resize %{{.*}}, scales = %{{.*}} {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x1x2x4xf16>, tensor<4xf32>) -> tensor<1x1x1x2xf16>
  %0 = ge.resize %x, scales = %s {mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x1x2x4xf16>, tensor<4xf32>) -> tensor<1x1x1x2xf16>
  func.return %0 : tensor<1x1x1x2xf16>
}

// CHECK-LABEL: func.func @sizes_cubic
func.func @sizes_cubic(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x9x10xf32> {
  %s = ge.constant dense<[1, 1, 9, 10]> : tensor<4xi64>
  // CHECK: ge.resize %{{.*}}, sizes = %{{.*}} {mode = "cubic", cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = 1 : i64, antialias = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<4xi64>) -> tensor<1x1x9x10xf32>
  %0 = ge.resize %x, sizes = %s {mode = "cubic", cubic_coeff_a = -0.5 : f32, exclude_outside = 1 : i64, antialias = 1 : i64} : (tensor<1x1x4x4xf32>, tensor<4xi64>) -> tensor<1x1x9x10xf32>
  func.return %0 : tensor<1x1x9x10xf32>
}

// CHECK-LABEL: func.func @crop_and_resize_axes
func.func @crop_and_resize_axes(%x: tensor<1x1x4x4xf32>, %roi: tensor<4xf32>) -> tensor<1x1x3x3xf32> {
  %s = ge.constant dense<[3, 3]> : tensor<2xi64>
  // CHECK: ge.resize %{{.*}}, roi = %{{.*}}, sizes = %{{.*}} {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 1.000000e+01 : f32, axes = array<i64: 3, -2>} : (tensor<1x1x4x4xf32>, tensor<4xf32>, tensor<2xi64>) -> tensor<1x1x3x3xf32>
  %0 = ge.resize %x, roi = %roi, sizes = %s {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 10.0 : f32, axes = array<i64: 3, -2>} : (tensor<1x1x4x4xf32>, tensor<4xf32>, tensor<2xi64>) -> tensor<1x1x3x3xf32>
  func.return %0 : tensor<1x1x3x3xf32>
}

// CHECK-LABEL: func.func @keep_aspect_ratio
func.func @keep_aspect_ratio(%x: tensor<1x1x2x4xf32>) -> (tensor<1x1x1x2xf32>, tensor<1x1x2x3xf32>) {
  %s = ge.constant dense<[1, 3]> : tensor<2xi64>
  // CHECK: ge.resize %{{.*}}, sizes = %{{.*}} {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger", nearest_mode = "floor"} : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<1x1x1x2xf32>
  %0 = ge.resize %x, sizes = %s {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger", nearest_mode = "floor"} : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<1x1x1x2xf32>
  // CHECK: keep_aspect_ratio_policy = "not_smaller"{{.*}} -> tensor<1x1x2x3xf32>
  %1 = ge.resize %x, sizes = %s {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_smaller"} : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<1x1x2x3xf32>
  func.return %0, %1 : tensor<1x1x1x2xf32>, tensor<1x1x2x3xf32>
}

// CHECK-LABEL: func.func @runtime_sizes
func.func @runtime_sizes(%x: tensor<?x3x8x8xui8>, %sizes: tensor<2xi64>, %scales: tensor<?xf32>) -> (tensor<?x3x?x?xui8>, tensor<?x?x?x?xui8>) {
  // CHECK: ge.resize %{{.*}}, sizes = %{{.*}} {axes = array<i64: 2, 3>} : (tensor<?x3x8x8xui8>, tensor<2xi64>) -> tensor<?x3x?x?xui8>
  %0 = ge.resize %x, sizes = %sizes {axes = array<i64: 2, 3>} : (tensor<?x3x8x8xui8>, tensor<2xi64>) -> tensor<?x3x?x?xui8>
  // CHECK: ge.resize %{{.*}}, scales = %{{.*}} : (tensor<?x3x8x8xui8>, tensor<?xf32>) -> tensor<?x?x?x?xui8>
  %1 = ge.resize %x, scales = %scales : (tensor<?x3x8x8xui8>, tensor<?xf32>) -> tensor<?x?x?x?xui8>
  func.return %0, %1 : tensor<?x3x?x?xui8>, tensor<?x?x?x?xui8>
}
