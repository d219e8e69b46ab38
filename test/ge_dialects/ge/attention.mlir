// RUN: ge-opt %s | ge-opt | filecheck %s

// ge.attention round-trips with every property and the optional mask.

// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x10x16xf32>, %kt: tensor<2x4x16x10xf32>, %v: tensor<2x4x10x32xf32>, %add: tensor<2x1x1x10xf32>, %keep: tensor<1x1x8x10xi1>, %q3: tensor<8x16xf16>, %k3: tensor<3x10x16xf16>, %v3: tensor<10x4xf16>) -> (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<3x8x4xf16>) {
  // CHECK: ge.attention %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>) -> tensor<2x4x8x32xf32>
  %0 = ge.attention %q, %k, %v : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>) -> tensor<2x4x8x32xf32>
  // CHECK: ge.attention %{{.*}}, %{{.*}}, %{{.*}}, mask = %{{.*}} {k_transposed = 1 : i64, scale = 4.000000e+00 : f32, scale_op = "div", scale_on = "scores", mask_kind = "additive"} : (tensor<2x4x8x16xf32>, tensor<2x4x16x10xf32>, tensor<2x4x10x32xf32>, tensor<2x1x1x10xf32>) -> tensor<2x4x8x32xf32> loc("/attn")
  %1 = ge.attention %q, %kt, %v, mask = %add {k_transposed = 1 : i64, scale = 4.0 : f32, scale_op = "div", scale_on = "scores", mask_kind = "additive"} : (tensor<2x4x8x16xf32>, tensor<2x4x16x10xf32>, tensor<2x4x10x32xf32>, tensor<2x1x1x10xf32>) -> tensor<2x4x8x32xf32> loc("/attn")
  // CHECK: ge.attention %{{.*}}, %{{.*}}, %{{.*}}, mask = %{{.*}} {scale = 2.500000e-01 : f32, scale_on = "q", mask_kind = "keep", fill = -3.40282347e+38 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>, tensor<1x1x8x10xi1>) -> tensor<2x4x8x32xf32>
  %2 = ge.attention %q, %k, %v, mask = %keep {scale = 0.25 : f32, scale_on = "q", mask_kind = "keep", fill = -3.40282347E+38 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x10x16xf32>, tensor<2x4x10x32xf32>, tensor<1x1x8x10xi1>) -> tensor<2x4x8x32xf32>
  // Batch dims broadcast like MatMul's: q [8, 16] and v [10, 4] against k [3, 10, 16].
  // CHECK: ge.attention %{{.*}}, %{{.*}}, %{{.*}} {scale_on = "k"} : (tensor<8x16xf16>, tensor<3x10x16xf16>, tensor<10x4xf16>) -> tensor<3x8x4xf16>
  %3 = ge.attention %q3, %k3, %v3 {scale_on = "k"} : (tensor<8x16xf16>, tensor<3x10x16xf16>, tensor<10x4xf16>) -> tensor<3x8x4xf16>
  func.return %0, %1, %2, %3 : tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<3x8x4xf16>
}
