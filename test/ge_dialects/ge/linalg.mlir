// RUN: ge-opt %s | ge-opt | filecheck %s
// Einsum and Det print and parse back with their inferred types.

func.func @linalg(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %m: tensor<3x4x4xf32>) -> (tensor<2x3x5xf32>, tensor<4x3xf32>, tensor<3xf32>) {
  // CHECK: ge.einsum %{{.*}}, %{{.*}} {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %0 = ge.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  // CHECK: ge.einsum %{{.*}} {equation = "...ij->ji"} : (tensor<2x3x4xf32>) -> tensor<4x3xf32>
  %1 = ge.einsum %a {equation = "...ij->ji"} : (tensor<2x3x4xf32>) -> tensor<4x3xf32>
  // CHECK: ge.det %{{.*}} : (tensor<3x4x4xf32>) -> tensor<3xf32>
  %2 = ge.det %m : (tensor<3x4x4xf32>) -> tensor<3xf32>
  func.return %0, %1, %2 : tensor<2x3x5xf32>, tensor<4x3xf32>, tensor<3xf32>
}
