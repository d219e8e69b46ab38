// autodiff refuses an op without a gradient (relu_grad: no second derivatives) on the path from a weight to the loss, naming it.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'w': np.ones(3, np.float32)})"
// RUN: not ge-opt %t/m.mlir -p autodiff 2>&1 | filecheck %s

// CHECK: error: autodiff: ge.relu_grad '/act' has no gradient: it is a backward op, and second derivatives are not built (it lies on a path from the weights to the loss)
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<3xf32> {ge.name = "x"}) -> (tensor<f32> {ge.name = "loss"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<3xf32>
    %y = ge.mul %x, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %h = ge.relu_grad %y, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> loc("/act")
    %s = ge.reduce_sum %h {keepdims = 0 : i64} : (tensor<3xf32>) -> tensor<f32>
    func.return %s : tensor<f32>
  }
}

