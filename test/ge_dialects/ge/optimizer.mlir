// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s
// RUN: ge-opt %s -p fold-constants,merge-constants,cse,dce | filecheck %s --check-prefix=FOLD

// The training-state ops round-trip: ge.variable in its short form, the update ops with their
// hyper-parameters.

// CHECK-LABEL: func.func @state
func.func @state(%g: tensor<4x5xf32>, %t: tensor<f32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
  // CHECK-NEXT: %w = ge.variable "fc1.weight" : tensor<4x5xf32> loc("/fc1")
  %w = ge.variable "fc1.weight" : tensor<4x5xf32> loc("/fc1")
  // CHECK-NEXT: %m = ge.variable "fc1.weight.adam_m" : tensor<4x5xf32>
  %m = ge.variable "fc1.weight.adam_m" : tensor<4x5xf32>
  // CHECK-NEXT: %v = ge.variable "fc1.weight.adam_v" : tensor<4x5xf32>
  %v = ge.variable "fc1.weight.adam_v" : tensor<4x5xf32>
  // CHECK-NEXT: %sgd = ge.apply_gradient_descent %w, %g {alpha = 1.000000e-01 : f32} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %sgd = ge.apply_gradient_descent %w, %g {alpha = 0.1 : f32} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  // CHECK-NEXT: %mom, %acc = ge.apply_momentum %w, %m, %g {lr = 5.000000e-02 : f32, momentum = 8.000000e-01 : f32, use_nesterov = 1 : i64} : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>)
  %mom, %acc = ge.apply_momentum %w, %m, %g {lr = 0.05 : f32, momentum = 0.8 : f32, use_nesterov = 1 : i64} : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>)
  // CHECK-NEXT: %adam, %m1, %v1 = ge.apply_adam %w, %m, %v, %t, %g {lr = 1.000000e-03 : f32, weight_decay = 1.000000e-02 : f32, decoupled = 1 : i64} : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<f32>, tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
  %adam, %m1, %v1 = ge.apply_adam %w, %m, %v, %t, %g {lr = 0.001 : f32, weight_decay = 0.01 : f32, decoupled = 1 : i64} : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<f32>, tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>)
  func.return %sgd, %mom, %acc, %adam, %m1, %v1 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}

// A variable is state, not a constant: folding leaves what reads it an op, merge-constants
// leaves it alone, and two reads of one key within a step may merge (cse) into one.
// CHECK-LABEL: func.func @not_constant
// FOLD-LABEL: func.func @not_constant
func.func @not_constant() -> tensor<2xf32> {
  // FOLD-NEXT: %[[S:.*]] = ge.variable "s" : tensor<2xf32>
  // FOLD-NEXT: %[[C:.*]] = ge.constant dense<1.000000e+00> : tensor<2xf32>
  // FOLD-NEXT: %[[A:.*]] = ge.add %[[S]], %[[C]]
  // FOLD-NEXT: %[[B:.*]] = ge.add %[[A]], %[[S]]
  // FOLD-NEXT: func.return %[[B]]
  %s = ge.variable "s" : tensor<2xf32>
  %s2 = ge.variable "s" : tensor<2xf32>
  %one = ge.constant dense<1.0> : tensor<2xf32>
  %a = ge.add %s, %one : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %b = ge.add %a, %s2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %b : tensor<2xf32>
}
