// apply-optimizer: weight constants become variables, one update op per gradient output, and
// the gradient outputs are replaced by the new state, named by key and marked ge.state.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'fc.weight': np.ones((4, 2), np.float32), 'fc.bias': np.zeros(2, np.float32)})"
// RUN: ge-opt %t/m.mlir -p "apply-optimizer{kind=sgd lr=0.5}" | filecheck %s --check-prefix=SGD
// RUN: ge-opt %t/m.mlir -p "apply-optimizer{kind=adam lr=0.001 weight_decay=0.25}" -o %t/adam.mlir
// RUN: filecheck %s --check-prefix=ADAM < %t/adam.mlir
// RUN: python -c "from pathlib import Path; from ge.frontend.sidecar import WeightStore; import numpy as np; w = WeightStore(Path('%t/adam.safetensors')); print(sorted(w)); print(w['optimizer.step'].shape, float(np.abs(w['fc.weight.adam_v']).sum()))" | filecheck %s --check-prefix=SIDECAR
// RUN: ge-opt %t/m.mlir -p "apply-optimizer{kind=momentum nesterov=true},lower-to-tasks,plan-memory,lower-to-streams" -o %t/lowered.mlir
// RUN: filecheck %s --check-prefix=LOWERED < %t/lowered.mlir

// SGD-LABEL: func.func @main
// SGD-SAME: (tensor<f32> {ge.name = "loss"}, tensor<4x2xf32> {ge.name = "fc.weight", ge.state = "fc.weight"}, tensor<2xf32> {ge.name = "fc.bias", ge.state = "fc.bias"})
// SGD-NEXT: %w = ge.variable "fc.weight" : tensor<4x2xf32> loc("/fc/weight")
// SGD-NEXT: %b = ge.variable "fc.bias" : tensor<2xf32>
// SGD-NOT: ge.constant parameter
// SGD: %[[W:.*]] = ge.apply_gradient_descent %w, %gw {alpha = 5.000000e-01 : f32} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32> loc("fc.weight/sgd")
// SGD-NEXT: %[[B:.*]] = ge.apply_gradient_descent %b, %gb {alpha = 5.000000e-01 : f32} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("fc.bias/sgd")
// SGD-NEXT: func.return %l, %[[W]], %[[B]] : tensor<f32>, tensor<4x2xf32>, tensor<2xf32>

// ADAM: builtin.module attributes {ge.weights = "adam.safetensors"}
// ADAM-LABEL: func.func @main
// ADAM-SAME: {ge.name = "loss"}
// ADAM-SAME: {ge.name = "fc.weight", ge.state = "fc.weight"}, tensor<4x2xf32> {ge.name = "fc.weight.adam_m", ge.state = "fc.weight.adam_m"}, tensor<4x2xf32> {ge.name = "fc.weight.adam_v", ge.state = "fc.weight.adam_v"}
// ADAM-SAME: {ge.name = "fc.bias", ge.state = "fc.bias"}, tensor<2xf32> {ge.name = "fc.bias.adam_m", ge.state = "fc.bias.adam_m"}, tensor<2xf32> {ge.name = "fc.bias.adam_v", ge.state = "fc.bias.adam_v"}
// ADAM-SAME: tensor<f32> {ge.name = "optimizer.step", ge.state = "optimizer.step"})
// ADAM: %[[STEP:.*]] = ge.variable "optimizer.step" : tensor<f32>
// ADAM-NEXT: %[[ONE:.*]] = ge.constant dense<1.000000e+00> : tensor<f32>
// ADAM-NEXT: %[[T:.*]] = ge.add %[[STEP]], %[[ONE]]
// ADAM-NEXT: %[[M:.*]] = ge.variable "fc.weight.adam_m" : tensor<4x2xf32>
// ADAM-NEXT: %[[V:.*]] = ge.variable "fc.weight.adam_v" : tensor<4x2xf32>
// ADAM-NEXT: %[[W:.*]], %[[M1:.*]], %[[V1:.*]] = ge.apply_adam %w, %[[M]], %[[V]], %[[T]], %gw {lr = 1.000000e-03 : f32, beta1 = 9.000000e-01 : f32, beta2 = 9.990000e-01 : f32, epsilon = 1.000000e-08 : f32, weight_decay = 2.500000e-01 : f32, decoupled = 0 : i64}
// ADAM-NEXT: %[[BM:.*]] = ge.variable "fc.bias.adam_m" : tensor<2xf32>
// ADAM-NEXT: %[[BV:.*]] = ge.variable "fc.bias.adam_v" : tensor<2xf32>
// ADAM-NEXT: %[[B:.*]], %[[BM1:.*]], %[[BV1:.*]] = ge.apply_adam %b, %[[BM]], %[[BV]], %[[T]], %gb
// ADAM-NEXT: func.return %l, %[[W]], %[[M1]], %[[V1]], %[[B]], %[[BM1]], %[[BV1]], %[[T]]

// The sidecar written with -o holds the parameters and the zero slots.
// SIDECAR: ['fc.bias', 'fc.bias.adam_m', 'fc.bias.adam_v', 'fc.weight', 'fc.weight.adam_m', 'fc.weight.adam_v', 'optimizer.step']
// SIDECAR-NEXT: () 0.0

// Lowered: the variables stay outside tasks (device memory the loader fills), the updates are
// Vector kernels, and plan-memory counts the state apart from the weights (fc.weight 32 bytes,
// fc.bias 8, their momentum as much: 80), its new values written in place over it.
// LOWERED: task.memory = {{{.*}}weights = 0 : i64{{.*}}state = 80 : i64, state_in_place = 4 : i64, state_copies_avoided = 80 : i64
// LOWERED: ge.variable "fc.weight"
// LOWERED: task.kernel "fc.weight/momentum" {{.*}}engine = "vector"
// LOWERED: ge.apply_momentum {{.*}}use_nesterov = 1 : i64

module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<3x4xf32> {ge.name = "x"}) -> (tensor<f32> {ge.name = "loss"}, tensor<4x2xf32> {ge.name = "fc.weight_grad"}, tensor<2xf32> {ge.name = "fc.bias_grad"}) {
    %w = ge.constant parameter #ge.weight<"fc.weight"> : tensor<4x2xf32> loc("/fc/weight")
    %b = ge.constant parameter #ge.weight<"fc.bias"> : tensor<2xf32>
    %y = ge.matmul %x, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
    %z = ge.add %y, %b : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
    %l = ge.reduce_sum %z {keepdims = 0 : i64} : (tensor<3x2xf32>) -> tensor<f32>
    %gw = ge.mul %w, %w : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %gb = ge.sub %b, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    func.return %l, %gw, %gb : tensor<f32>, tensor<4x2xf32>, tensor<2xf32>
  }
}
