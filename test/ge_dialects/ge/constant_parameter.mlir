// A constant that holds a trainable parameter says so: `parameter<"key">` before an inline value,
// `parameter` alone before a sidecar weight (its key is the weight key). The text reads back to
// the same op and prints again unchanged; the generic form shows the `parameter` property.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'fc.weight': np.ones((3, 2), np.float32), 'table': np.ones((40,), np.float32)})"
// RUN: ge-opt %t/m.mlir -o %t/a.mlir
// RUN: filecheck %s < %t/a.mlir
// RUN: ge-opt %t/a.mlir | filecheck %s
// RUN: ge-opt %t/m.mlir --print-op-generic -o %t/g.mlir
// RUN: filecheck %s --check-prefix=GENERIC < %t/g.mlir
// RUN: ge-opt %t/g.mlir | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK-NEXT: %w = ge.constant parameter #ge.weight<"fc.weight"> : tensor<3x2xf32> loc("fc.weight")
// CHECK-NEXT: %b = ge.constant parameter<"fc.bias"> dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32> loc("fc.bias")
// CHECK-NEXT: %t = ge.constant parameter<"temperature"> dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT: %h = ge.constant parameter<"half"> dense<1.000000e+00> : tensor<4xf16>
// A literal: no marker, inline or in the sidecar.
// CHECK-NEXT: %s = ge.constant dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: %l = ge.constant #ge.weight<"table"> : tensor<40xf32>
// The weight key spelled out reads back as the short form.
// CHECK-NEXT: %w2 = ge.constant parameter #ge.weight<"fc.weight"> : tensor<3x2xf32>

// GENERIC: "ge.constant"() <{value = #ge.weight<"fc.weight">, parameter = "fc.weight"}> : () -> tensor<3x2xf32>
// GENERIC: "ge.constant"() <{value = dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>, parameter = "fc.bias"}> : () -> tensor<2xf32>
// GENERIC: "ge.constant"() <{value = dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>}> : () -> tensor<2xf32>
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main() -> (tensor<3x2xf32>, tensor<2xf32>, tensor<f32>, tensor<4xf16>, tensor<2xf32>, tensor<40xf32>, tensor<3x2xf32>) {
    %w = ge.constant parameter #ge.weight<"fc.weight"> : tensor<3x2xf32> loc("fc.weight")
    %b = ge.constant parameter<"fc.bias"> dense<[1.0, -2.0]> : tensor<2xf32> loc("fc.bias")
    %t = ge.constant parameter<"temperature"> dense<0.5> : tensor<f32>
    %h = ge.constant parameter<"half"> dense<1.0> : tensor<4xf16>
    %s = ge.constant dense<[1.0, -2.0]> : tensor<2xf32>
    %l = ge.constant #ge.weight<"table"> : tensor<40xf32>
    %w2 = ge.constant parameter<"fc.weight"> #ge.weight<"fc.weight"> : tensor<3x2xf32>
    func.return %w, %b, %t, %h, %s, %l, %w2 : tensor<3x2xf32>, tensor<2xf32>, tensor<f32>, tensor<4xf16>, tensor<2xf32>, tensor<40xf32>, tensor<3x2xf32>
  }
}
