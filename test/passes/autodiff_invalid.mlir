// autodiff's user errors: one line each, naming the pass and the reason, exit 1.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'w': np.ones(3, np.float32), 'n': np.ones(3, np.int64)})"
// RUN: not ge-opt %t/m.mlir -p 'autodiff{loss=vec}' 2>&1 | filecheck %s --check-prefix=SCALAR
// RUN: not ge-opt %t/m.mlir -p 'autodiff{wrt="v"}' 2>&1 | filecheck %s --check-prefix=WRT
// RUN: not ge-opt %t/m.mlir -p 'autodiff{wrt="n"}' 2>&1 | filecheck %s --check-prefix=INT
// RUN: not ge-opt %t/m.mlir -p 'autodiff{wrt=","}' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not ge-opt %t/m.mlir -p 'autodiff{loss=nope}' 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not ge-opt %t/m.mlir -p 'autodiff,autodiff' 2>&1 | filecheck %s --check-prefix=TWICE

// SCALAR: ge-opt: error: autodiff: the loss 'vec' must be a float scalar, got tensor<3xf32>
// SCALAR-EMPTY:
// WRT: ge-opt: error: autodiff: wrt names 'v', which is not a float weight of the graph (weights: 'w')
// INT: ge-opt: error: autodiff: wrt names 'n', which is not a float weight of the graph (weights: 'w')
// EMPTY: ge-opt: error: autodiff: wrt names no weight
// NAME: ge-opt: error: autodiff: the graph has no output 'nope' (outputs: 'vec', 'loss')
// TWICE: ge-opt: error: autodiff: the graph already has an output named 'w_grad'
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<3xf32> {ge.name = "x"}) -> (tensor<3xf32> {ge.name = "vec"}, tensor<f32> {ge.name = "loss"}) {
    %w = ge.constant #ge.weight<"w"> : tensor<3xf32>
    %n = ge.constant #ge.weight<"n"> : tensor<3xi64>
    %y = ge.mul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %s = ge.reduce_sum %y {keepdims = 0 : i64} : (tensor<3xf32>) -> tensor<f32>
    func.return %y, %s : tensor<3xf32>, tensor<f32>
  }
}
