// RUN: ge-opt %s | ge-opt | filecheck %s
// The comparison and logic ops print and parse back; results are bool with broadcasting.

func.func @compare(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %p: tensor<2x3xi1>, %q: tensor<1x3xi1>) -> tensor<2x3xi1> {
  // CHECK: ge.greater %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %0 = ge.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: ge.less %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = ge.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: ge.greater_equal
  %2 = ge.greater_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: ge.less_equal
  %3 = ge.less_equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: ge.logical_and %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
  %4 = ge.logical_and %p, %q : (tensor<2x3xi1>, tensor<1x3xi1>) -> tensor<2x3xi1>
  // CHECK: ge.logical_or
  %5 = ge.logical_or %4, %0 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: ge.logical_xor
  %6 = ge.logical_xor %5, %1 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: ge.logical_not %{{.*}} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %7 = ge.logical_not %6 : (tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return %7 : tensor<2x3xi1>
}
