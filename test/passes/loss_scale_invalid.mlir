// loss-scale's and mixed-precision keep_dtype's errors: one line naming the problem, exit code 1,
// no traceback, nothing written.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'fc.weight': np.ones((4, 2), np.float32)})"

// RUN: not ge-opt %t/m.mlir -p "autodiff,apply-optimizer,loss-scale{kind=adaptive}" 2>&1 | filecheck %s --check-prefix=KIND
// KIND: ge-opt: error: loss-scale: unknown kind 'adaptive'; expected one of static, dynamic
// KIND-NOT: Traceback
// KIND-EMPTY:

// RUN: not ge-opt %t/m.mlir -p "autodiff,apply-optimizer,loss-scale{scale=-1024}" 2>&1 | filecheck %s --check-prefix=NEGATIVE
// NEGATIVE: ge-opt: error: loss-scale: scale=-1024 must be a positive finite f32
// NEGATIVE-EMPTY:

// RUN: not ge-opt %t/m.mlir -p "autodiff,apply-optimizer,loss-scale{kind=dynamic scale=1e39}" 2>&1 | filecheck %s --check-prefix=HUGE
// HUGE: ge-opt: error: loss-scale: scale=1e+39 must be a positive finite f32

// RUN: not ge-opt %t/m.mlir -p "autodiff,apply-optimizer,loss-scale{kind=dynamic growth_interval=0}" 2>&1 | filecheck %s --check-prefix=INTERVAL
// INTERVAL: ge-opt: error: loss-scale: growth_interval=0 must be >= 1

// RUN: not ge-opt %t/m.mlir -p "autodiff,apply-optimizer,loss-scale{kind=dynamic growth_factor=0.5}" 2>&1 | filecheck %s --check-prefix=GROWTH
// GROWTH: ge-opt: error: loss-scale: growth_factor=0.5 must be >= 1

// RUN: not ge-opt %t/m.mlir -p "autodiff,apply-optimizer,loss-scale{kind=dynamic backoff_factor=1.5}" 2>&1 | filecheck %s --check-prefix=BACKOFF
// BACKOFF: ge-opt: error: loss-scale: backoff_factor=1.5 must be in (0, 1]

// Before apply-optimizer there is no update to unscale for; without autodiff, no seed to scale.
// RUN: not ge-opt %t/m.mlir -p "autodiff,loss-scale" 2>&1 | filecheck %s --check-prefix=ORDER
// ORDER: ge-opt: error: loss-scale: @main has no optimizer update ops; run apply-optimizer first
// ORDER-EMPTY:
// RUN: not ge-opt %t/m.mlir -p "loss-scale" 2>&1 | filecheck %s --check-prefix=SEED
// SEED: ge-opt: error: loss-scale: @main has no autodiff seed ('/autodiff/seed'); run autodiff and apply-optimizer first
// SEED-EMPTY:

// RUN: not ge-opt %t/m.mlir -p "autodiff,apply-optimizer,loss-scale,loss-scale" 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE: ge-opt: error: loss-scale: the loss is already scaled (was loss-scale applied twice?)

// RUN: not ge-opt %t/m.mlir -p "mixed-precision{mode=force_fp16 keep_dtype=\"/fc/MatMul,/nothing\"}" -o %t/out.mlir 2>&1 | filecheck %s --check-prefix=KEEP
// KEEP: ge-opt: error: mixed-precision: keep_dtype names '/nothing', which no ge op in the module has
// KEEP-EMPTY:
// RUN: not test -e %t/out.mlir
// RUN: not ge-opt %t/m.mlir -p "mixed-precision{keep_dtype=\"/fc/MatMul,\"}" 2>&1 | filecheck %s --check-prefix=EMPTY
// EMPTY: ge-opt: error: mixed-precision: keep_dtype="/fc/MatMul," has an empty op name

module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<3x4xf32> {ge.name = "x"}) -> (tensor<f32> {ge.name = "loss"}) {
    %w = ge.constant parameter #ge.weight<"fc.weight"> : tensor<4x2xf32> loc("/fc/weight")
    %y = ge.matmul %x, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32> loc("/fc/MatMul")
    %l = ge.reduce_sum %y {keepdims = 0 : i64} : (tensor<3x2xf32>) -> tensor<f32> loc("/loss")
    func.return %l : tensor<f32>
  }
}
