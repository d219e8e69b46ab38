// RUN: ge-opt %s | ge-opt | filecheck %s
// The one-float functions and the bitwise ops print and parse back with their inferred types.

func.func @functions(%x: tensor<2x3xf32>, %h: tensor<4xf16>) -> (tensor<2x3xf32>, tensor<4xi1>, tensor<2x3xi1>) {
  // CHECK: ge.sin %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = ge.sin %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.cos
  %1 = ge.cos %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.tan
  %2 = ge.tan %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.asin
  %3 = ge.asin %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.acos
  %4 = ge.acos %3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.atan
  %5 = ge.atan %4 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.sinh
  %6 = ge.sinh %5 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.cosh
  %7 = ge.cosh %6 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.asinh
  %8 = ge.asinh %7 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.acosh
  %9 = ge.acosh %8 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.atanh
  %10 = ge.atanh %9 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.round %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = ge.round %10 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.is_nan %{{.*}} : (tensor<4xf16>) -> tensor<4xi1>
  %12 = ge.is_nan %h : (tensor<4xf16>) -> tensor<4xi1>
  // CHECK: ge.is_inf %{{.*}} {detect_negative = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %13 = ge.is_inf %11 {detect_negative = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi1>
  func.return %11, %12, %13 : tensor<2x3xf32>, tensor<4xi1>, tensor<2x3xi1>
}

func.func @bitwise(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %u: tensor<3xui8>) -> (tensor<2x3xi32>, tensor<3xui8>) {
  // CHECK: ge.bitwise_and %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %0 = ge.bitwise_and %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK: ge.bitwise_or
  %1 = ge.bitwise_or %0, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK: ge.bitwise_xor
  %2 = ge.bitwise_xor %1, %a : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK: ge.bitwise_not %{{.*}} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %3 = ge.bitwise_not %2 : (tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK: ge.bit_shift %{{.*}}, %{{.*}} {direction = "LEFT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  %4 = ge.bit_shift %u, %u {direction = "LEFT"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  func.return %3, %4 : tensor<2x3xi32>, tensor<3xui8>
}

func.func @bit_cast(%x: tensor<2x3xf32>, %q: tensor<4xi4>) -> (tensor<2x3xi32>, tensor<4xui4>) {
  // CHECK: ge.bit_cast %{{.*}} {to = 6 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %0 = ge.bit_cast %x {to = 6 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // CHECK: ge.bit_cast %{{.*}} {to = 21 : i64} : (tensor<4xi4>) -> tensor<4xui4>
  %1 = ge.bit_cast %q {to = 21 : i64} : (tensor<4xi4>) -> tensor<4xui4>
  func.return %0, %1 : tensor<2x3xi32>, tensor<4xui4>
}
