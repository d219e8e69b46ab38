// RUN: ge-opt %s -p fuse-ops --split-input-file --strip-debuginfo | filecheck %s
// RUN: ge-opt %s -p fuse-ops --split-input-file --remarks -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK

// bias_grad: the ReLU mask applied to the incoming gradient and the bias gradient summed from it
// are one kernel; the masked gradient is shared (the weight and input backprops read it too), so
// the group also writes it out.
// CHECK-LABEL: func.func @linear_bias_grad
// CHECK:      %[[MASKED:.*]], %[[BIAS:.*]] = fused.group "reduce+elementwise" "bias_grad" (%dy, %y)
// CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<64x256xf32>, %{{.*}}: tensor<64x256xf32>):
// CHECK:        %[[R:.*]] = ge.relu_grad
// CHECK-NEXT:   ge.reduce_sum %[[R]]
// CHECK-NEXT:   %[[S:.*]] = ge.reshape
// CHECK-NEXT:   fused.yield %[[R]], %[[S]]
// CHECK:      %[[DX:.*]] = ge.matmul %[[MASKED]], %w
// CHECK-NEXT: func.return %[[DX]], %[[BIAS]]
// REMARK: remark: fuse-ops: applied bias_grad on [/relu/grad, /bias/grad/sum, /bias/grad/reshape]: fused 3 ops into one kernel
func.func @linear_bias_grad(%dy: tensor<64x256xf32>, %y: tensor<64x256xf32>, %w: tensor<256x128xf32>) -> (tensor<64x128xf32>, tensor<256xf32>) {
  %0 = ge.relu_grad %dy, %y : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32> loc("/relu/grad")
  %1 = ge.matmul %0, %w : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32> loc("/fc/grad")
  %axes = ge.constant dense<0> : tensor<1xi64>
  %2 = ge.reduce_sum %0, axes = %axes {keepdims = 1 : i64} : (tensor<64x256xf32>, tensor<1xi64>) -> tensor<1x256xf32> loc("/bias/grad/sum")
  %shape = ge.constant dense<256> : tensor<1xi64>
  %3 = ge.reshape %2, %shape : (tensor<1x256xf32>, tensor<1xi64>) -> tensor<256xf32> loc("/bias/grad/reshape")
  func.return %1, %3 : tensor<64x128xf32>, tensor<256xf32>
}

// -----

// bias-reduction: a sum over the last axis (a row reduction, not sum-to-shape of a bias) is not
// a bias gradient.
// REMARK: remark: fuse-ops: rejected bias_grad on [/relu/grad, /rowsum]: constraint bias-reduction: reduce_sum over axes [1] of a rank-2 tensor is not a bias gradient
func.func @row_sum(%dy: tensor<64x256xf32>, %y: tensor<64x256xf32>, %w: tensor<256x128xf32>) -> (tensor<64x128xf32>, tensor<64x1xf32>) {
  %0 = ge.relu_grad %dy, %y : (tensor<64x256xf32>, tensor<64x256xf32>) -> tensor<64x256xf32> loc("/relu/grad")
  %1 = ge.matmul %0, %w : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32> loc("/fc/grad")
  %axes = ge.constant dense<1> : tensor<1xi64>
  %2 = ge.reduce_sum %0, axes = %axes {keepdims = 1 : i64} : (tensor<64x256xf32>, tensor<1xi64>) -> tensor<64x1xf32> loc("/rowsum")
  func.return %1, %2 : tensor<64x128xf32>, tensor<64x1xf32>
}

// -----

// layout-at-reduction: the sum reads the masked gradient's FRACTAL_NZ tiles (a BiasAddGrad reads
// NZ), so the TransData in front of it joins the group; the TransData that brings dy into NZ feeds
// the relu_grad, not the reduction, and stays a kernel of its own (the engine retries without it).
// CHECK-LABEL: func.func @nz_bias_grad
// CHECK:      ge.trans_data %dy {src_format = "ND", dst_format = "FRACTAL_NZ"}
// CHECK:      fused.group "reduce+elementwise" "bias_grad"
// CHECK:        ge.relu_grad
// CHECK-NEXT:   ge.trans_data {{.*}} {src_format = "FRACTAL_NZ", dst_format = "ND"}
// CHECK:        ge.reduce_sum
// REMARK: remark: fuse-ops: rejected bias_grad on [/dy/nz, /relu/grad, /to_nd, /bias/grad/sum, /bias/grad/reshape]: constraint layout-at-reduction: ge.trans_data ND->FRACTAL_NZ feeds more than the reduction
// REMARK: remark: fuse-ops: applied bias_grad on [/relu/grad, /to_nd, /bias/grad/sum, /bias/grad/reshape]: fused 4 ops into one kernel
func.func @nz_bias_grad(%dy: tensor<64x256xf32>, %y: tensor<64x256xf32, #ge.fmt<ND, FRACTAL_NZ>>, %w: tensor<256x128xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> (tensor<64x128xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<256xf32>) {
  %d = ge.trans_data %dy {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<64x256xf32>) -> tensor<64x256xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/dy/nz")
  %0 = ge.relu_grad %d, %y : (tensor<64x256xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x256xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<64x256xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/relu/grad")
  %1 = ge.matmul %0, %w : (tensor<64x256xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<256x128xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<64x128xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/fc/grad")
  %nd = ge.trans_data %0 {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<64x256xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<64x256xf32> loc("/to_nd")
  %axes = ge.constant dense<0> : tensor<1xi64>
  %2 = ge.reduce_sum %nd, axes = %axes {keepdims = 1 : i64} : (tensor<64x256xf32>, tensor<1xi64>) -> tensor<1x256xf32> loc("/bias/grad/sum")
  %shape = ge.constant dense<256> : tensor<1xi64>
  %3 = ge.reshape %2, %shape : (tensor<1x256xf32>, tensor<1xi64>) -> tensor<256xf32> loc("/bias/grad/reshape")
  func.return %1, %3 : tensor<64x128xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<256xf32>
}

// -----

// norm_grad: batch_norm_grad with the relu_grad that feeds it; the masked gradient is shared with
// a residual branch.
// CHECK-LABEL: func.func @bn_grad
// CHECK:      fused.group "reduce+elementwise" "norm_grad"
// CHECK-NEXT: ^{{.*}}:
// CHECK-NEXT:   %[[M:.*]] = ge.relu_grad
// CHECK-NEXT:   ge.batch_norm_grad %[[M]]
// CHECK-NEXT:   fused.yield %[[M]],
// REMARK: remark: fuse-ops: applied norm_grad on [/relu/grad, /bn/grad]: fused 2 ops into one kernel
func.func @bn_grad(%dy: tensor<8x64x28x28xf32>, %y: tensor<8x64x28x28xf32>, %x: tensor<8x64x28x28xf32>, %s: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) -> (tensor<8x64x28x28xf32>, tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>) {
  %0 = ge.relu_grad %dy, %y : (tensor<8x64x28x28xf32>, tensor<8x64x28x28xf32>) -> tensor<8x64x28x28xf32> loc("/relu/grad")
  %1, %2, %3 = ge.batch_norm_grad %0, %x, %s, %m, %v {training_mode = 1 : i64} : (tensor<8x64x28x28xf32>, tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>) loc("/bn/grad")
  func.return %0, %1, %2, %3 : tensor<8x64x28x28xf32>, tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// norm_grad: layer_norm_grad with the residual gradient add before it and the output projection's
// bias gradient after it (the per-feature sum of its dx).
// CHECK-LABEL: func.func @ln_grad
// CHECK:      fused.group "reduce+elementwise" "norm_grad"
// CHECK:        ge.add
// CHECK-NEXT:   ge.layer_norm_grad
// CHECK:        ge.reduce_sum
// CHECK:        ge.reshape
// CHECK-NEXT:   fused.yield
// REMARK: remark: fuse-ops: applied norm_grad on [/residual/grad, /ln/grad, /bias/grad/sum, /bias/grad/reshape]: fused 4 ops into one kernel
func.func @ln_grad(%a: tensor<2x128x768xf32>, %b: tensor<2x128x768xf32>, %x: tensor<2x128x768xf32>, %s: tensor<768xf32>, %w: tensor<768x768xf32>) -> (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>) {
  %0 = ge.add %a, %b : (tensor<2x128x768xf32>, tensor<2x128x768xf32>) -> tensor<2x128x768xf32> loc("/residual/grad")
  %1, %2, %3 = ge.layer_norm_grad %0, %x, %s {axis = -1 : i64} : (tensor<2x128x768xf32>, tensor<2x128x768xf32>, tensor<768xf32>) -> (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) loc("/ln/grad")
  %4 = ge.matmul %1, %w : (tensor<2x128x768xf32>, tensor<768x768xf32>) -> tensor<2x128x768xf32> loc("/out/grad")
  %axes = ge.constant dense<[0, 1]> : tensor<2xi64>
  %5 = ge.reduce_sum %1, axes = %axes {keepdims = 1 : i64} : (tensor<2x128x768xf32>, tensor<2xi64>) -> tensor<1x1x768xf32> loc("/bias/grad/sum")
  %shape = ge.constant dense<768> : tensor<1xi64>
  %6 = ge.reshape %5, %shape : (tensor<1x1x768xf32>, tensor<1xi64>) -> tensor<768xf32> loc("/bias/grad/reshape")
  func.return %4, %2, %3, %6 : tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>
}

// -----

// batch_norm_activation: a training-mode batch_norm computes its batch statistics and applies the
// ReLU in one pass; an inference batch_norm does not qualify (training-batch-norm).
// CHECK-LABEL: func.func @bn_relu
// CHECK:      fused.group "reduce+elementwise" "batch_norm_activation"
// CHECK-NEXT: ^{{.*}}:
// CHECK-NEXT:   ge.batch_norm
// CHECK-NEXT:   ge.relu
// CHECK-NEXT:   fused.yield
// CHECK-NEXT: }
// CHECK-NEXT: ge.batch_norm %x
// CHECK-NEXT: ge.relu
// REMARK: remark: fuse-ops: applied batch_norm_activation on [/bn, /relu]: fused 2 ops into one kernel
// REMARK: remark: fuse-ops: rejected batch_norm_activation on [/bn_infer, /relu_infer]: constraint training-batch-norm: batch_norm is in inference mode (training_mode=0)
func.func @bn_relu(%x: tensor<8x64x28x28xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<64xf32>, %v: tensor<64xf32>) -> (tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x64x28x28xf32>) {
  %0, %1, %2 = ge.batch_norm %x, %s, %b, %m, %v {training_mode = 1 : i64} : (tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>) loc("/bn")
  %3 = ge.relu %0 : (tensor<8x64x28x28xf32>) -> tensor<8x64x28x28xf32> loc("/relu")
  %4 = ge.batch_norm %x, %s, %b, %m, %v : (tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64x28x28xf32> loc("/bn_infer")
  %5 = ge.relu %4 : (tensor<8x64x28x28xf32>) -> tensor<8x64x28x28xf32> loc("/relu_infer")
  func.return %3, %1, %2, %5 : tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>, tensor<8x64x28x28xf32>
}
