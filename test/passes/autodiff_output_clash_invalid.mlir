// autodiff does not shadow an existing output with a gradient output of the same name.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'w': np.ones(3, np.float32)})"
// RUN: not ge-opt %t/m.mlir -p autodiff 2>&1 | filecheck %s

// CHECK: error: autodiff: the graph already has an output named 'w_grad'
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<3xf32> {ge.name = "x"}) -> (tensor<f32> {ge.name = "loss"}, tensor<3xf32> {ge.name = "w_grad"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<3xf32>
    %y = ge.mul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %s = ge.reduce_sum %y {keepdims = 0 : i64} : (tensor<3xf32>) -> tensor<f32>
    func.return %s, %x : tensor<f32>, tensor<3xf32>
  }
}
