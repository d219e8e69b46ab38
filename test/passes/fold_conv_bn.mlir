// RUN: ge-opt %s -p fold-conv-bn --split-input-file | filecheck %s
// RUN: ge-opt %s -p fold-conv-bn --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// f = scale / sqrt(var + eps) = [1, 0.5]; W' = W * f per output channel; B' = (b - mean) * f + beta.

// CHECK-LABEL: func.func @fold
// CHECK-NEXT:    %[[W:.*]] = ge.constant dense<{{\[}}{{\[}}{{\[}}[1.000000e+00]], {{\[}}[2.000000e+00]]], {{\[}}{{\[}}[1.500000e+00]], {{\[}}[2.000000e+00]]]]> : tensor<2x2x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = ge.constant dense<[5.000000e-01, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = ge.conv %x, %[[W]], B = %[[B]] {pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv/Conv")
// CHECK-NEXT:    func.return %[[Y]]
func.func @fold(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> {
  %w = ge.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %scale = ge.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %beta = ge.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %mean = ge.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %var = ge.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %0 = ge.conv %x, %w {pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv/Conv")
  %1 = ge.batch_norm %0, %scale, %beta, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/bn/BatchNormalization")
  func.return %1 : tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
}
// REMARK: remark: fold-conv-bn: applied conv-bn on [/bn/BatchNormalization, /conv/Conv]: replaced by ge.conv

// -----

// The conv's own bias is folded too: B' = (b - mean) * f + beta = [(1 - 0.5) * 1 + 1, (4 - 0) * 0.5 - 1].

// CHECK-LABEL: func.func @fold_with_bias
// CHECK:         ge.constant dense<[1.500000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    ge.conv
// CHECK-NOT:     ge.batch_norm
func.func @fold_with_bias(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> {
  %w = ge.constant dense<1.0> : tensor<2x2x1x1xf32>
  %b = ge.constant dense<[1.0, 4.0]> : tensor<2xf32>
  %scale = ge.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %beta = ge.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %mean = ge.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %var = ge.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %0 = ge.conv %x, %w, B = %b : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
  %1 = ge.batch_norm %0, %scale, %beta, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
  func.return %1 : tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
}

// -----

// Training-mode BN (batch statistics) is left alone.

// CHECK-LABEL: func.func @training
// CHECK:         ge.batch_norm
func.func @training(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> {
  %w = ge.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = ge.constant dense<1.0> : tensor<2xf32>
  %0 = ge.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv")
  %1 = ge.batch_norm %0, %c, %c, %c, %c {training_mode = 1 : i64} : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/bn")
  func.return %1 : tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
}
// REMARK: remark: fold-conv-bn: rejected conv-bn on [/bn, /conv]: batch_norm is in training mode (training_mode = 1)

// -----

// The conv result has a second user: folding would change what that user sees.

// CHECK-LABEL: func.func @two_users
// CHECK:         ge.batch_norm
func.func @two_users(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>) {
  %w = ge.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = ge.constant dense<1.0> : tensor<2xf32>
  %0 = ge.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv")
  %1 = ge.batch_norm %0, %c, %c, %c, %c : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/bn")
  %2 = ge.relu %0 : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/relu")
  func.return %1, %2 : tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
}
// REMARK: remark: fold-conv-bn: rejected conv-bn on [/bn, /conv]: ge.conv '/conv' has a user outside the pattern (ge.relu '/relu')

// -----

// Weights that are not constants (a graph input) cannot be folded into.

// CHECK-LABEL: func.func @weights_not_constant
// CHECK:         ge.batch_norm
func.func @weights_not_constant(%x: tensor<1x2x3x3xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> {
  %c = ge.constant dense<1.0> : tensor<2xf32>
  %0 = ge.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv")
  %1 = ge.batch_norm %0, %c, %c, %c, %c : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/bn")
  func.return %1 : tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
}
// REMARK: remark: fold-conv-bn: rejected conv-bn on [/bn, /conv]: conv weights are not constant

// -----

// Neither can BN statistics that are not constants.

// CHECK-LABEL: func.func @stats_not_constant
// CHECK:         ge.batch_norm
func.func @stats_not_constant(%x: tensor<1x2x3x3xf32>, %var: tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> {
  %w = ge.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = ge.constant dense<1.0> : tensor<2xf32>
  %0 = ge.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv")
  %1 = ge.batch_norm %0, %c, %c, %c, %var : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/bn")
  func.return %1 : tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
}
// REMARK: remark: fold-conv-bn: rejected conv-bn on [/bn, /conv]: batch_norm var is not constant

// -----

// A BN after something other than a conv is not a candidate.

// CHECK-LABEL: func.func @not_after_conv
// CHECK:         ge.batch_norm
func.func @not_after_conv(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %c = ge.constant dense<1.0> : tensor<2xf32>
  %0 = ge.relu %x : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %1 = ge.batch_norm %0, %c, %c, %c, %c : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %1 : tensor<1x2x3x3xf32>
}
// REMARK-NOT: remark
