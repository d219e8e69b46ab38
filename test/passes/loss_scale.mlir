// loss-scale after autodiff and apply-optimizer: the seed times the scale, each gradient divided
// by it before its update (both kept f32 by ge.keep_dtype); dynamic adds the overflow check, a
// select of every state output back to its variable, and the scale's update as two state outputs.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'fc.weight': np.ones((4, 2), np.float32)})"
// RUN: ge-opt %t/m.mlir -p "autodiff,apply-optimizer{kind=sgd lr=0.5},loss-scale{scale=1024}" | filecheck %s --check-prefix=STATIC
// RUN: ge-opt %t/m.mlir -p "autodiff,apply-optimizer{kind=adam},loss-scale{kind=dynamic scale=256.0 growth_interval=3}" -o %t/d.mlir
// RUN: filecheck %s --check-prefix=DYNAMIC < %t/d.mlir
// RUN: python -c "from pathlib import Path; from ge.frontend.sidecar import WeightStore; w = WeightStore(Path('%t/d.safetensors')); print(sorted(w)); print(w['loss_scale.scale'].dtype, w['loss_scale.scale'].shape, float(w['loss_scale.scale']), float(w['loss_scale.good_steps']))" | filecheck %s --check-prefix=SIDECAR
// RUN: ge-opt %t/d.mlir -p "ge-optimize{level=1 precision_mode=force_fp16}" | filecheck %s --check-prefix=FP16

// STATIC: %[[SEED:.*]] = ge.constant dense<1.000000e+00> : tensor<f32> loc("/autodiff/seed")
// STATIC-NEXT: %[[S:.*]] = ge.constant dense<1.024000e+03> : tensor<f32> loc("/loss_scale/scale")
// STATIC-NEXT: %[[SCALED:.*]] = ge.mul %[[SEED]], %[[S]] {ge.keep_dtype} : {{.*}} loc("/loss_scale/seed")
// STATIC: ge.reshape %[[SCALED]]
// STATIC: %[[G:.*]] = ge.matmul
// STATIC-NEXT: %[[U:.*]] = ge.div %[[G]], %[[S]] {ge.keep_dtype} : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32> loc("fc.weight/sgd/loss_scale/unscale")
// STATIC-NEXT: %[[W:.*]] = ge.apply_gradient_descent %w, %[[U]]
// STATIC-NEXT: func.return %l, %[[W]] : tensor<f32>, tensor<4x2xf32>

// DYNAMIC: func.func @main
// DYNAMIC-SAME: tensor<f32> {ge.name = "loss_scale.scale", ge.state = "loss_scale.scale"}, tensor<f32> {ge.name = "loss_scale.good_steps", ge.state = "loss_scale.good_steps"})
// DYNAMIC: %[[SEED:.*]] = ge.constant dense<1.000000e+00> : tensor<f32> loc("/autodiff/seed")
// DYNAMIC-NEXT: %[[S:.*]] = ge.variable "loss_scale.scale" : tensor<f32>
// DYNAMIC-NEXT: %[[GOOD:.*]] = ge.variable "loss_scale.good_steps" : tensor<f32>
// DYNAMIC-NEXT: ge.mul %[[SEED]], %[[S]] {ge.keep_dtype}
// DYNAMIC: %[[STEP:.*]] = ge.variable "optimizer.step"
// DYNAMIC: %[[T:.*]] = ge.add %[[STEP]], %{{.*}} {ge.keep_dtype}
// DYNAMIC: %[[M:.*]] = ge.variable "fc.weight.adam_m"
// DYNAMIC-NEXT: %[[V:.*]] = ge.variable "fc.weight.adam_v"
// DYNAMIC-NEXT: %[[U:.*]] = ge.div %{{.*}}, %[[S]] {ge.keep_dtype}
// DYNAMIC-NEXT: %[[W1:.*]], %[[M1:.*]], %[[V1:.*]] = ge.apply_adam %w, %[[M]], %[[V]], %[[T]], %[[U]]
// DYNAMIC-NEXT: %[[OK:.*]] = ge.all_finite %[[U]] : (tensor<4x2xf32>) -> tensor<i1> loc("/loss_scale/all_finite")
// DYNAMIC-NEXT: %[[W2:.*]] = ge.where %[[OK]], %[[W1]], %w {ge.keep_dtype} : {{.*}} loc("fc.weight/loss_scale/skip")
// DYNAMIC-NEXT: %[[M2:.*]] = ge.where %[[OK]], %[[M1]], %[[M]] {ge.keep_dtype}
// DYNAMIC-NEXT: %[[V2:.*]] = ge.where %[[OK]], %[[V1]], %[[V]] {ge.keep_dtype}
// DYNAMIC-NEXT: %[[T2:.*]] = ge.where %[[OK]], %[[T]], %[[STEP]] {ge.keep_dtype}
// DYNAMIC-NEXT: %[[S2:.*]], %[[GOOD2:.*]] = ge.loss_scale_update %[[S]], %[[GOOD]], %[[OK]] {growth_interval = 3 : i64, growth_factor = 2.000000e+00 : f32, backoff_factor = 5.000000e-01 : f32} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>) loc("/loss_scale/update")
// DYNAMIC-NEXT: func.return %l, %[[W2]], %[[M2]], %[[V2]], %[[T2]], %[[S2]], %[[GOOD2]]

// The initial scale and a zero count of good steps are in the sidecar, as f32 scalars.
// SIDECAR: ['fc.weight', 'fc.weight.adam_m', 'fc.weight.adam_v', 'loss_scale.good_steps', 'loss_scale.scale', 'optimizer.step']
// SIDECAR-NEXT: float32 () 256.0 0.0

// Under force_fp16 the backward is f16, but the unscale, the selects and the step count stay f32.
// FP16: ge.matmul {{.*}} -> tensor<4x2xf16>
// FP16: ge.add {{.*}} {ge.keep_dtype} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// FP16: ge.div {{.*}} {ge.keep_dtype} : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
// FP16: ge.where {{.*}} {ge.keep_dtype} : (tensor<i1>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>

module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<3x4xf32> {ge.name = "x"}) -> (tensor<f32> {ge.name = "loss"}) {
    %w = ge.constant parameter #ge.weight<"fc.weight"> : tensor<4x2xf32> loc("/fc/weight")
    %y = ge.matmul %x, %w : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32> loc("/fc/MatMul")
    %l = ge.reduce_sum %y {keepdims = 0 : i64} : (tensor<3x2xf32>) -> tensor<f32> loc("/loss")
    func.return %l : tensor<f32>
  }
}
