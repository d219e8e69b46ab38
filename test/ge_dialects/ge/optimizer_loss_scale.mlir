// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// ge.all_finite (GE's NPUGetFloatStatus as a value) and ge.loss_scale_update round-trip, with and
// without their properties.

// CHECK-LABEL: func.func @loss_scale
func.func @loss_scale(%g1: tensor<4x5xf16>, %g2: tensor<3xf32>, %s: tensor<f32>, %n: tensor<f32>) -> (tensor<i1>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  // CHECK-NEXT: %ok = ge.all_finite %g1, %g2 : (tensor<4x5xf16>, tensor<3xf32>) -> tensor<i1>
  %ok = ge.all_finite %g1, %g2 : (tensor<4x5xf16>, tensor<3xf32>) -> tensor<i1>
  // CHECK-NEXT: %s1, %n1 = ge.loss_scale_update %s, %n, %ok : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  %s1, %n1 = ge.loss_scale_update %s, %n, %ok : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  // CHECK-NEXT: %s2, %n2 = ge.loss_scale_update %s, %n, %ok {growth_interval = 10 : i64, growth_factor = 4.000000e+00 : f32, backoff_factor = 2.500000e-01 : f32} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  %s2, %n2 = ge.loss_scale_update %s, %n, %ok {growth_interval = 10 : i64, growth_factor = 4.0 : f32, backoff_factor = 0.25 : f32} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  func.return %ok, %s1, %n1, %s2, %n2 : tensor<i1>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
