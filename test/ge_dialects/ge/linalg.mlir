// RUN: ge-opt %s | ge-opt | filecheck %s
// Einsum, Det, DFT and GridSample print and parse back with their inferred types.

func.func @linalg(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %m: tensor<3x4x4xf32>) -> (tensor<2x3x5xf32>, tensor<4x3xf32>, tensor<3xf32>) {
  // CHECK: ge.einsum %{{.*}}, %{{.*}} {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %0 = ge.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // CHECK: ge.einsum %{{.*}} {equation = "...ij->ji"} : (tensor<2x3x4xf32>) -> tensor<4x3xf32>
  %1 = ge.einsum %a {equation = "...ij->ji"} : (tensor<2x3x4xf32>) -> tensor<4x3xf32>
  // CHECK: ge.det %{{.*}} : (tensor<3x4x4xf32>) -> tensor<3xf32>
  %2 = ge.det %m : (tensor<3x4x4xf32>) -> tensor<3xf32>
  func.return %0, %1, %2 : tensor<2x3x5xf32>, tensor<4x3xf32>, tensor<3xf32>
}

func.func @grid_sample(%x: tensor<2x3x5x6xf32>, %g: tensor<2x4x7x2xf32>) -> tensor<2x3x4x7xf32> {
  // CHECK: ge.grid_sample %{{.*}}, %{{.*}} {mode = "cubic", padding_mode = "border"} : (tensor<2x3x5x6xf32>, tensor<2x4x7x2xf32>) -> tensor<2x3x4x7xf32>
  %0 = ge.grid_sample %x, %g {mode = "cubic", padding_mode = "border"} : (tensor<2x3x5x6xf32>, tensor<2x4x7x2xf32>) -> tensor<2x3x4x7xf32>
  func.return %0 : tensor<2x3x4x7xf32>
}

func.func @dft(%x: tensor<2x6x5x1xf32>, %c: tensor<2x6x5x2xf16>) -> (tensor<2x4x5x2xf32>, tensor<2x10x5x1xf16>, tensor<2x6x5x2xf16>) {
  %axis = ge.constant dense<1> : tensor<i64>
  // A one-sided forward transform keeps 6 // 2 + 1 frequencies.
  // CHECK: ge.dft %{{.*}}, axis = %{{.*}} {onesided = 1 : i64} : (tensor<2x6x5x1xf32>, tensor<i64>) -> tensor<2x4x5x2xf32>
  %0 = ge.dft %x, axis = %axis {onesided = 1 : i64} : (tensor<2x6x5x1xf32>, tensor<i64>) -> tensor<2x4x5x2xf32>
  // Its inverse gives 2 * (6 - 1) real points.
  // CHECK: ge.dft %{{.*}}, axis = %{{.*}} {inverse = 1 : i64, onesided = 1 : i64} : (tensor<2x6x5x2xf16>, tensor<i64>) -> tensor<2x10x5x1xf16>
  %1 = ge.dft %c, axis = %axis {inverse = 1 : i64, onesided = 1 : i64} : (tensor<2x6x5x2xf16>, tensor<i64>) -> tensor<2x10x5x1xf16>
  // CHECK: ge.dft %{{.*}} : (tensor<2x6x5x2xf16>) -> tensor<2x6x5x2xf16>
  %2 = ge.dft %c : (tensor<2x6x5x2xf16>) -> tensor<2x6x5x2xf16>
  func.return %0, %1, %2 : tensor<2x4x5x2xf32>, tensor<2x10x5x1xf16>, tensor<2x6x5x2xf16>
}
