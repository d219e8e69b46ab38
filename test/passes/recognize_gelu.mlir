// RUN: ge-opt %s -p recognize-gelu --split-input-file | filecheck %s
// RUN: ge-opt %s -p recognize-gelu --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// The erf form as the exporter writes F.gelu: (x * (erf(x / sqrt 2) + 1)) * 0.5.

// CHECK-LABEL: func.func @erf_exported
// CHECK-NEXT:    %[[Y:.*]] = ge.gelu %x {approximate = "none"} : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("/act/Mul_1")
// CHECK-NEXT:    func.return %[[Y]]
func.func @erf_exported(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = ge.constant dense<1.41421354> : tensor<f32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %half = ge.constant dense<0.5> : tensor<f32>
  %0 = ge.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("/act/Div")
  %1 = ge.erf %0 : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("/act/Erf")
  %2 = ge.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("/act/Add")
  %3 = ge.mul %x, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("/act/Mul")
  %4 = ge.mul %3, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("/act/Mul_1")
  func.return %4 : tensor<2x8xf32>
}
// REMARK: remark: recognize-gelu: applied gelu-erf on [/act/Mul_1, /act/Mul, /act/Add, /act/Erf, /act/Div]: replaced by ge.gelu

// -----

// Other orders: (x * 0.5) * (1 + erf(x * (1/sqrt 2))) and x * (0.5 * (erf(x / sqrt 2) + 1)).

// CHECK-LABEL: func.func @erf_orders
// CHECK-NEXT:    %[[A:.*]] = ge.gelu %x {approximate = "none"}
// CHECK-NEXT:    %[[B:.*]] = ge.gelu %x {approximate = "none"}
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @erf_orders(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %rsqrt2 = ge.constant dense<0.707106769> : tensor<f32>
  %sqrt2 = ge.constant dense<1.41421354> : tensor<f32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %half = ge.constant dense<0.5> : tensor<f32>
  %0 = ge.mul %rsqrt2, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = ge.erf %0 : (tensor<8xf32>) -> tensor<8xf32>
  %2 = ge.add %one, %1 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = ge.mul %x, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %4 = ge.mul %3, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %5 = ge.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %6 = ge.erf %5 : (tensor<8xf32>) -> tensor<8xf32>
  %7 = ge.add %6, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %8 = ge.mul %half, %7 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %9 = ge.mul %x, %8 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %4, %9 : tensor<8xf32>, tensor<8xf32>
}

// -----

// The tanh form of HF's NewGELU: (x * 0.5) * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), and with
// x * x * x for the cube.

// CHECK-LABEL: func.func @tanh
// CHECK-NEXT:    %[[A:.*]] = ge.gelu %x {approximate = "tanh"} : (tensor<8xf32>) -> tensor<8xf32> loc("/act/Mul_3")
// CHECK-NEXT:    %[[B:.*]] = ge.gelu %x {approximate = "tanh"}
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @tanh(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %half = ge.constant dense<0.5> : tensor<f32>
  %three = ge.constant dense<3.0> : tensor<f32>
  %k = ge.constant dense<0.044715> : tensor<f32>
  %s = ge.constant dense<0.797884583> : tensor<f32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %0 = ge.mul %x, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32> loc("/act/Mul")
  %1 = ge.pow %x, %three : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32> loc("/act/Pow")
  %2 = ge.mul %1, %k : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32> loc("/act/Mul_1")
  %3 = ge.add %x, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> loc("/act/Add")
  %4 = ge.mul %3, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32> loc("/act/Mul_2")
  %5 = ge.tanh %4 : (tensor<8xf32>) -> tensor<8xf32> loc("/act/Tanh")
  %6 = ge.add %5, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32> loc("/act/Add_1")
  %7 = ge.mul %0, %6 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> loc("/act/Mul_3")
  %8 = ge.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %9 = ge.mul %8, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %10 = ge.mul %k, %9 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %11 = ge.add %10, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %12 = ge.mul %s, %11 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %13 = ge.tanh %12 : (tensor<8xf32>) -> tensor<8xf32>
  %14 = ge.add %one, %13 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %15 = ge.mul %x, %14 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %16 = ge.mul %15, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return %7, %16 : tensor<8xf32>, tensor<8xf32>
}
// REMARK: remark: recognize-gelu: applied gelu-tanh on [/act/Mul_3, /act/Mul, /act/Add_1, /act/Tanh, /act/Mul_2, /act/Add, /act/Mul_1, /act/Pow]: replaced by ge.gelu

// -----

// Not GELU: 0.6 instead of 0.5, 1.5 instead of sqrt 2, erf of another tensor. No candidate, no remark.

// CHECK-LABEL: func.func @wrong_constants
// CHECK-NOT:     ge.gelu
func.func @wrong_constants(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = ge.constant dense<1.41421354> : tensor<f32>
  %wrong = ge.constant dense<1.5> : tensor<f32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %half = ge.constant dense<0.5> : tensor<f32>
  %point6 = ge.constant dense<0.6> : tensor<f32>
  %0 = ge.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = ge.erf %0 : (tensor<8xf32>) -> tensor<8xf32>
  %2 = ge.add %1, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = ge.mul %x, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = ge.mul %3, %point6 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %5 = ge.div %x, %wrong : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %6 = ge.erf %5 : (tensor<8xf32>) -> tensor<8xf32>
  %7 = ge.add %6, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %8 = ge.mul %x, %7 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %9 = ge.mul %8, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %10 = ge.div %y, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %11 = ge.erf %10 : (tensor<8xf32>) -> tensor<8xf32>
  %12 = ge.add %11, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %13 = ge.mul %x, %12 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %14 = ge.mul %13, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return %4, %9, %14 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
// REMARK-NOT: remark

// -----

// Kept with a reason: the erf is also a graph result; a constant that broadcasts x to a larger shape.

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     ge.gelu
func.func @kept(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<2x8xf32>) {
  %sqrt2 = ge.constant dense<1.41421354> : tensor<f32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %half = ge.constant dense<0.5> : tensor<f32>
  %halves = ge.constant dense<0.5> : tensor<2x8xf32>
  %0 = ge.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = ge.erf %0 : (tensor<8xf32>) -> tensor<8xf32> loc("/Erf")
  %2 = ge.add %1, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = ge.mul %x, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = ge.mul %3, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32> loc("/Escapes")
  %5 = ge.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %6 = ge.erf %5 : (tensor<8xf32>) -> tensor<8xf32>
  %7 = ge.add %6, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %8 = ge.mul %x, %7 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %9 = ge.mul %8, %halves : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("/Widens")
  func.return %4, %1, %9 : tensor<8xf32>, tensor<8xf32>, tensor<2x8xf32>
}
// REMARK-DAG: remark: recognize-gelu: rejected gelu-erf on [/Widens, {{.*}}]: the replacement has type tensor<8xf32>, the root has tensor<2x8xf32>
// REMARK-DAG: remark: recognize-gelu: rejected gelu-erf on [/Escapes, {{.*}}]: ge.erf '/Erf' has a user outside the pattern (func.return)
