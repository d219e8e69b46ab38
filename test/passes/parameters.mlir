// Parameters through the passes: merge-constants keeps each parameter its own constant (two equal
// zero biases stay two parameters; a literal of the same value stays a literal), fold-constants
// makes literals, autodiff differentiates the inline parameters, and apply-optimizer makes them
// variables whose initial values join the sidecar.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'w': np.full((2, 3), 0.5, np.float32)})"
// RUN: ge-opt %t/m.mlir -p merge-constants,cse,dce | filecheck %s --check-prefix=MERGE
// RUN: ge-opt %t/m.mlir -p "merge-constants{parameters=true},cse,dce" | filecheck %s --check-prefix=INFERENCE
// RUN: ge-opt %t/m.mlir -p fold-constants,dce | filecheck %s --check-prefix=FOLD
// RUN: ge-opt %t/m.mlir -p autodiff | filecheck %s --check-prefix=GRAD
// RUN: ge-opt %t/m.mlir -p "autodiff{frozen=b2},apply-optimizer{kind=sgd lr=0.5}" -o %t/step.mlir
// RUN: filecheck %s --check-prefix=STEP < %t/step.mlir
// RUN: python -c "from ge.frontend.sidecar import WeightStore; w = WeightStore('%t/step.safetensors'); print(sorted(w), w['b1'].tolist())" | filecheck %s --check-prefix=SIDECAR

// MERGE: %w = ge.constant parameter #ge.weight<"w">
// MERGE-NEXT: %b1 = ge.constant parameter<"b1"> dense<0.000000e+00> : tensor<3xf32>
// MERGE-NEXT: %b2 = ge.constant parameter<"b2"> dense<0.000000e+00> : tensor<3xf32>
// MERGE-NEXT: %z = ge.constant dense<0.000000e+00> : tensor<3xf32>
// MERGE-NEXT: %n = ge.constant dense<[-1.000000e+00, 1.000000e+00]> : tensor<2xf32>
// MERGE-NEXT: %z2 = ge.constant dense<0.000000e+00> : tensor<2xf32>
// MERGE-NOT: ge.constant

// Run as it is (ge-optimize's cleanup): equal constants merge, and the merged one is a literal.
// INFERENCE: %w = ge.constant parameter #ge.weight<"w">
// INFERENCE-NEXT: %b1 = ge.constant dense<0.000000e+00> : tensor<3xf32>
// INFERENCE-NEXT: %n = ge.constant dense<[-1.000000e+00, 1.000000e+00]> : tensor<2xf32>
// INFERENCE-NEXT: %z2 = ge.constant dense<0.000000e+00> : tensor<2xf32>
// INFERENCE-NOT: ge.constant

// The negation of the literal folds into a literal (its location: the folded op's).
// FOLD: ge.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32> loc("/neg")
// FOLD-NOT: parameter<"/neg">

// GRAD: {ge.name = "loss"}, tensor<3xf32> {ge.name = "b1_grad"}, tensor<3xf32> {ge.name = "b2_grad"}, tensor<2x3xf32> {ge.name = "w_grad"})

// STEP: ge.variable "w"
// STEP: %b1 = ge.variable "b1" : tensor<3xf32>
// STEP-NEXT: %b2 = ge.constant parameter<"b2"> dense<0.000000e+00> : tensor<3xf32>
// STEP: ge.apply_gradient_descent
// SIDECAR: ['b1', 'w'] [0.0, 0.0, 0.0]
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<4x2xf32> {ge.name = "x"}) -> (tensor<f32> {ge.name = "loss"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<2x3xf32>
    %b1 = ge.constant parameter<"b1"> dense<0.0> : tensor<3xf32>
    %b2 = ge.constant parameter<"b2"> dense<0.0> : tensor<3xf32>
    %z = ge.constant dense<0.0> : tensor<3xf32>
    %n = ge.constant dense<[-1.0, 1.0]> : tensor<2xf32>
    %z2 = ge.constant dense<0.0> : tensor<2xf32>
    %m = ge.sub %z2, %n : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("/neg")
    %xm = ge.mul %x, %m : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
    %y = ge.matmul %xm, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %y1 = ge.add %y, %b1 : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %y2 = ge.add %y1, %b2 : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %y3 = ge.add %y2, %z : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    %sq = ge.mul %y3, %y3 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %loss = ge.reduce_sum %sq {keepdims = 0 : i64} : (tensor<4x3xf32>) -> tensor<f32>
    func.return %loss : tensor<f32>
  }
}
