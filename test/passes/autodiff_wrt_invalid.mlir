// autodiff{wrt=...} refuses a weight that reaches the loss only through values without a gradient
// (here an integer round trip), in one line.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'w': np.ones(3, np.float32), 'v': np.ones(3, np.float32)})"
// RUN: not ge-opt %t/m.mlir -p 'autodiff{wrt="v"}' 2>&1 | filecheck %s
// RUN: ge-opt %t/m.mlir -p autodiff | filecheck %s --check-prefix=DEFAULT

// CHECK: error: autodiff: no differentiable path leads from parameter 'v' to 'loss'
// Without wrt, v is simply not trainable: only w gets a gradient.
// DEFAULT: -> (tensor<f32> {ge.name = "loss"}, tensor<3xf32> {ge.name = "w_grad"})
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<3xf32> {ge.name = "x"}) -> (tensor<f32> {ge.name = "loss"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<3xf32>
    %v = ge.constant parameter #ge.weight<"v"> : tensor<3xf32>
    %i = ge.cast %v {to = 7 : i64} : (tensor<3xf32>) -> tensor<3xi64>
    %f = ge.cast %i {to = 1 : i64} : (tensor<3xi64>) -> tensor<3xf32>
    %y = ge.mul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %z = ge.add %y, %f : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %s = ge.reduce_sum %z {keepdims = 0 : i64} : (tensor<3xf32>) -> tensor<f32>
    func.return %s : tensor<f32>
  }
}
