// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @bad_mode(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<1x1x?x?xf32> {
  // CHECK: ge.resize: mode must be one of nearest, linear, cubic, got "bilinear"
  %0 = ge.resize %x, scales = %s {mode = "bilinear"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x?x?xf32>
  func.return %0 : tensor<1x1x?x?xf32>
}

// -----

func.func @bad_transform(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: coordinate_transformation_mode must be one of half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize, got "tf_half_pixel_for_nn"
  %0 = ge.resize %x, scales = %s {coordinate_transformation_mode = "tf_half_pixel_for_nn"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @bad_nearest_mode(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: nearest_mode must be one of round_prefer_floor, round_prefer_ceil, floor, ceil, got "round"
  %0 = ge.resize %x, scales = %s {nearest_mode = "round"} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @bad_policy(%x: tensor<1x1x2x2xf32>, %s: tensor<4xi64>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: keep_aspect_ratio_policy must be one of stretch, not_larger, not_smaller, got "fit"
  %0 = ge.resize %x, sizes = %s {keep_aspect_ratio_policy = "fit"} : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @bad_flag(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: antialias must be 0 or 1, got 2
  %0 = ge.resize %x, scales = %s {mode = "linear", antialias = 2 : i64} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @bool_linear(%x: tensor<1x1x2x2xi1>, %s: tensor<4xf32>) -> tensor<?x?x?x?xi1> {
  // CHECK: ge.resize: operand 'X' has element type i1 in linear mode; expected one of f32, f16, bf16, f64, i64, i32, i16, i8, ui8
  %0 = ge.resize %x, scales = %s {mode = "linear"} : (tensor<1x1x2x2xi1>, tensor<4xf32>) -> tensor<?x?x?x?xi1>
  func.return %0 : tensor<?x?x?x?xi1>
}

// -----

func.func @axis_out_of_range(%x: tensor<1x1x2x2xf32>, %s: tensor<2xf32>) -> tensor<1x1x?x?xf32> {
  // CHECK: ge.resize: axes value 4 is out of range for rank 4
  %0 = ge.resize %x, scales = %s {axes = array<i64: 2, 4>} : (tensor<1x1x2x2xf32>, tensor<2xf32>) -> tensor<1x1x?x?xf32>
  func.return %0 : tensor<1x1x?x?xf32>
}

// -----

func.func @axis_repeated(%x: tensor<1x1x2x2xf32>, %s: tensor<2xf32>) -> tensor<1x1x?x?xf32> {
  // CHECK: ge.resize: axes [3, -1] repeat an axis
  %0 = ge.resize %x, scales = %s {axes = array<i64: 3, -1>} : (tensor<1x1x2x2xf32>, tensor<2xf32>) -> tensor<1x1x?x?xf32>
  func.return %0 : tensor<1x1x?x?xf32>
}

// -----

func.func @neither(%x: tensor<1x1x2x2xf32>, %roi: tensor<8xf32>) -> tensor<1x1x2x2xf32> {
  // CHECK: ge.resize: exactly one of 'scales' and 'sizes' must be given, got neither
  %0 = ge.resize %x, roi = %roi : (tensor<1x1x2x2xf32>, tensor<8xf32>) -> tensor<1x1x2x2xf32>
  func.return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @both(%x: tensor<1x1x2x2xf32>, %sc: tensor<4xf32>, %sz: tensor<4xi64>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: exactly one of 'scales' and 'sizes' must be given, got both
  %0 = ge.resize %x, scales = %sc, sizes = %sz : (tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @roi_dtype(%x: tensor<1x1x2x2xf32>, %roi: tensor<8xi64>, %s: tensor<4xf32>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: operand 'roi' has element type i64; expected one of f32, f16, bf16, f64
  %0 = ge.resize %x, roi = %roi, scales = %s : (tensor<1x1x2x2xf32>, tensor<8xi64>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @roi_length(%x: tensor<1x1x2x2xf32>, %roi: tensor<8xf32>, %s: tensor<2xi64>) -> tensor<1x1x?x?xf32> {
  // CHECK: ge.resize: operand 'roi' has 8 elements; expected 2 * 2 (start and end per resized axis)
  %0 = ge.resize %x, roi = %roi, sizes = %s {axes = array<i64: 2, 3>} : (tensor<1x1x2x2xf32>, tensor<8xf32>, tensor<2xi64>) -> tensor<1x1x?x?xf32>
  func.return %0 : tensor<1x1x?x?xf32>
}

// -----

func.func @scales_dtype(%x: tensor<1x1x2x2xf32>, %s: tensor<4xi64>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: operand 'scales' has element type i64; expected one of f32, f16, bf16, f64
  %0 = ge.resize %x, scales = %s : (tensor<1x1x2x2xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @scales_length(%x: tensor<1x1x2x2xf32>, %s: tensor<2xf32>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: operand 'scales' has 2 elements; expected 4 (one per resized axis)
  %0 = ge.resize %x, scales = %s : (tensor<1x1x2x2xf32>, tensor<2xf32>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @scales_not_positive(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x0x4xf32> {
  %s = ge.constant dense<[1.0, 1.0, 0.0, 2.0]> : tensor<4xf32>
  // CHECK: ge.resize: scales must be positive, got [1.0, 1.0, 0.0, 2.0]
  %0 = ge.resize %x, scales = %s : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x0x4xf32>
  func.return %0 : tensor<1x1x0x4xf32>
}

// -----

func.func @sizes_dtype(%x: tensor<1x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: operand 'sizes' has element type f32; expected one of i64
  %0 = ge.resize %x, sizes = %s : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @sizes_rank(%x: tensor<1x1x2x2xf32>, %s: tensor<2x2xi64>) -> tensor<?x?x?x?xf32> {
  // CHECK: ge.resize: operand 'sizes' must have rank 1, got rank 2
  %0 = ge.resize %x, sizes = %s : (tensor<1x1x2x2xf32>, tensor<2x2xi64>) -> tensor<?x?x?x?xf32>
  func.return %0 : tensor<?x?x?x?xf32>
}

// -----

func.func @sizes_length(%x: tensor<1x1x2x2xf32>, %s: tensor<3xi64>) -> tensor<1x1x?x?xf32> {
  // CHECK: ge.resize: operand 'sizes' has 3 elements; expected 2 (one per resized axis)
  %0 = ge.resize %x, sizes = %s {axes = array<i64: -2, -1>} : (tensor<1x1x2x2xf32>, tensor<3xi64>) -> tensor<1x1x?x?xf32>
  func.return %0 : tensor<1x1x?x?xf32>
}

// -----

func.func @sizes_not_positive(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x0x3xf32> {
  %s = ge.constant dense<[0, 3]> : tensor<2xi64>
  // CHECK: ge.resize: sizes must be positive, got [0, 3]
  %0 = ge.resize %x, sizes = %s {axes = array<i64: 2, 3>} : (tensor<1x1x2x2xf32>, tensor<2xi64>) -> tensor<1x1x0x3xf32>
  func.return %0 : tensor<1x1x0x3xf32>
}

// -----

func.func @wrong_result_shape(%x: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  %s = ge.constant dense<[1, 3]> : tensor<2xi64>
  // CHECK: ge.resize '/r': result #0 has type tensor<1x1x2x4xf32> but its operands imply tensor<1x1x1x2xf32>
  %0 = ge.resize %x, sizes = %s {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger"} : (tensor<1x1x2x4xf32>, tensor<2xi64>) -> tensor<1x1x2x4xf32> loc("/r")
  func.return %0 : tensor<1x1x2x4xf32>
}
