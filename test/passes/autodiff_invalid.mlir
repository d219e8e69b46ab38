// autodiff's user errors: one line each, naming the pass and the reason, exit 1.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'w': np.ones(3, np.float32), 'n': np.ones(3, np.int64)})"
// RUN: not ge-opt %t/m.mlir -p 'autodiff{loss=vec}' 2>&1 | filecheck %s --check-prefix=SCALAR
// RUN: not ge-opt %t/m.mlir -p 'autodiff{wrt="v"}' 2>&1 | filecheck %s --check-prefix=WRT
// RUN: not ge-opt %t/m.mlir -p 'autodiff{wrt="n"}' 2>&1 | filecheck %s --check-prefix=INT
// RUN: not ge-opt %t/m.mlir -p 'autodiff{wrt=","}' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not ge-opt %t/m.mlir -p 'autodiff{loss=nope}' 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not ge-opt %t/m.mlir -p 'autodiff,autodiff' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not ge-opt %t/m.mlir -p 'autodiff{wrt="c"}' 2>&1 | filecheck %s --check-prefix=LITERAL
// RUN: not ge-opt %t/m.mlir -p 'autodiff{frozen="v"}' 2>&1 | filecheck %s --check-prefix=FROZEN
// RUN: not ge-opt %t/m.mlir -p 'autodiff{frozen=","}' 2>&1 | filecheck %s --check-prefix=FROZEN-EMPTY
// RUN: not ge-opt %t/m.mlir -p 'autodiff{frozen="w"}' 2>&1 | filecheck %s --check-prefix=FROZEN-ALL
// RUN: not ge-opt %t/m.mlir -p 'autodiff{wrt="w" frozen="w"}' 2>&1 | filecheck %s --check-prefix=BOTH
// Without the marker the sidecar constants are literals: nothing to differentiate.
// RUN: sed -e 's/ge.constant parameter/ge.constant/' %t/m.mlir > %t/plain.mlir
// RUN: not ge-opt %t/plain.mlir -p autodiff 2>&1 | filecheck %s --check-prefix=NONE
// A parameter that does not reach the loss: no gradient at all is an error.
// RUN: sed -e 's/ge.mul %%x, %%w/ge.mul %%x, %%c/' %t/m.mlir > %t/unreached.mlir
// RUN: not ge-opt %t/unreached.mlir -p autodiff 2>&1 | filecheck %s --check-prefix=UNREACHED

// SCALAR: ge-opt: error: autodiff: the loss 'vec' must be a float scalar, got tensor<3xf32>
// SCALAR-EMPTY:
// WRT: ge-opt: error: autodiff: wrt names 'v', which is not a parameter of the graph (parameters: 'w')
// INT: ge-opt: error: autodiff: wrt names 'n', which is not a parameter of the graph (parameters: 'w')
// EMPTY: ge-opt: error: autodiff: wrt names no parameter
// NAME: ge-opt: error: autodiff: the graph has no output 'nope' (outputs: 'vec', 'loss')
// TWICE: ge-opt: error: autodiff: the graph already has an output named 'w_grad'
// LITERAL: ge-opt: error: autodiff: wrt names 'c', which is not a parameter of the graph (parameters: 'w')
// FROZEN: ge-opt: error: autodiff: frozen names 'v', which is not a parameter of the graph (parameters: 'w')
// FROZEN-EMPTY: ge-opt: error: autodiff: frozen names no parameter
// FROZEN-ALL: ge-opt: error: autodiff: frozen leaves no parameter to train (parameters: 'w')
// BOTH: ge-opt: error: autodiff: give wrt (the parameters to train) or frozen (the ones not to), not both
// NONE: ge-opt: error: autodiff: the graph has no parameters to differentiate (constants marked `parameter`: ONNX initializers, Graph.const)
// UNREACHED: ge-opt: error: autodiff: no differentiable path leads from any parameter to 'loss' (parameters: 'w')
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<3xf32> {ge.name = "x"}) -> (tensor<3xf32> {ge.name = "vec"}, tensor<f32> {ge.name = "loss"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<3xf32>
    %n = ge.constant #ge.weight<"n"> : tensor<3xi64>
    %c = ge.constant dense<2.0> : tensor<3xf32> loc("c")
    %y = ge.mul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %s = ge.reduce_sum %y {keepdims = 0 : i64} : (tensor<3xf32>) -> tensor<f32>
    func.return %y, %s : tensor<3xf32>, tensor<f32>
  }
}
