// RUN: ge-opt %s -p "add-loss{output=logits ignore_index=-1}" | filecheck %s --check-prefix=SCE
// RUN: ge-opt %s -p "add-loss{output=logits kind=nll reduction=sum labels=target}" | filecheck %s --check-prefix=NLL
// RUN: ge-opt %s -p "add-loss{output=feat kind=mse}" | filecheck %s --check-prefix=MSE
// RUN: ge-opt %s -p "add-loss{output=feat kind=mse reduction=sum}" | filecheck %s --check-prefix=MSESUM
// RUN: ge-opt %s -p "add-loss{output=seg}" | filecheck %s --check-prefix=SEG
// RUN: ge-opt %s -p "add-loss{output=half kind=mse}" | filecheck %s --check-prefix=HALF
// RUN: ge-opt %s -p "add-loss{output=logits}" | ge-opt | filecheck %s --check-prefix=SCE-DEFAULT
// RUN: ge-opt %s -p "add-loss{output=logits},mixed-precision{mode=allow_mix_precision}" | filecheck %s --check-prefix=MIXED
// Mutation: moved to the gray list, the loss would follow its f16 input.
// RUN: echo 'gray = ["ge.softmax_cross_entropy_loss"]' > %t.gray.toml
// RUN: ge-opt %s -p "add-loss{output=logits},mixed-precision{mode=allow_mix_precision lists=\"%t.gray.toml\"}" | filecheck %s --check-prefix=GRAY

// A loss on one named output: a new labels input, a new scalar f32 output named loss, and the
// original outputs kept.

func.func @main(%x: tensor<4x8xf32> {ge.name = "x"}, %w: tensor<8x5xf32> {ge.name = "w"}, %s: tensor<2x3x4x4xf32> {ge.name = "s"}, %h: tensor<4x8xf16> {ge.name = "h"})
    -> (tensor<4x5xf32> {ge.name = "logits"}, tensor<4x8xf32> {ge.name = "feat"}, tensor<2x3x4x4xf32> {ge.name = "seg"}, tensor<4x8xf16> {ge.name = "half"}) {
  %0 = ge.matmul %x, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %1 = ge.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = ge.relu %s : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %3 = ge.relu %h : (tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %0, %1, %2, %3 : tensor<4x5xf32>, tensor<4x8xf32>, tensor<2x3x4x4xf32>, tensor<4x8xf16>
}

// SCE:      func.func @main(%x: tensor<4x8xf32> {ge.name = "x"}, %w: tensor<8x5xf32> {ge.name = "w"}, %s: tensor<2x3x4x4xf32> {ge.name = "s"}, %h: tensor<4x8xf16> {ge.name = "h"}, %labels: tensor<4xi64> {ge.name = "labels"})
// SCE-SAME: -> (tensor<4x5xf32> {ge.name = "logits"}, tensor<4x8xf32> {ge.name = "feat"}, tensor<2x3x4x4xf32> {ge.name = "seg"}, tensor<4x8xf16> {ge.name = "half"}, tensor<f32> {ge.name = "loss"})
// SCE:      %[[LOGITS:.*]] = ge.matmul
// SCE:      %[[LOSS:.*]] = ge.softmax_cross_entropy_loss %[[LOGITS]], %labels {reduction = "mean", ignore_index = -1 : i64} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32> loc("add-loss/softmax_cross_entropy_loss")
// SCE-NEXT: func.return %[[LOGITS]], %{{.*}}, %{{.*}}, %{{.*}}, %[[LOSS]] : tensor<4x5xf32>, tensor<4x8xf32>, tensor<2x3x4x4xf32>, tensor<4x8xf16>, tensor<f32>

// NLL:      %target: tensor<4xi64> {ge.name = "target"}
// NLL:      %[[LOGITS:.*]] = ge.matmul
// NLL:      %[[LOSS:.*]] = ge.nll_loss %[[LOGITS]], %target {reduction = "sum"} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
// NLL-NEXT: func.return %[[LOGITS]], %{{.*}}, %{{.*}}, %{{.*}}, %[[LOSS]]

// MSE:      %labels: tensor<4x8xf32> {ge.name = "labels"}
// MSE:      %[[FEAT:.*]] = ge.relu %x
// MSE:      %[[DIFF:.*]] = ge.sub %[[FEAT]], %labels : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// MSE-NEXT: %[[SQ:.*]] = ge.mul %[[DIFF]], %[[DIFF]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// MSE-NEXT: %[[LOSS:.*]] = ge.reduce_mean %[[SQ]] {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32>
// MSE-NEXT: func.return %{{.*}}, %[[FEAT]], %{{.*}}, %{{.*}}, %[[LOSS]]

// MSESUM:   ge.reduce_sum %{{.*}} {keepdims = 0 : i64} : (tensor<4x8xf32>) -> tensor<f32>

// SEG:      %labels: tensor<2x4x4xi64> {ge.name = "labels"}
// SEG:      ge.softmax_cross_entropy_loss %{{.*}}, %labels {reduction = "mean"} : (tensor<2x3x4x4xf32>, tensor<2x4x4xi64>) -> tensor<f32>

// An f16 output's loss is computed in f16 and cast to f32 (TensorProto.FLOAT = 1).
// HALF:      %labels: tensor<4x8xf16> {ge.name = "labels"}
// HALF:      %[[SUM:.*]] = ge.reduce_mean %{{.*}} {keepdims = 0 : i64} : (tensor<4x8xf16>) -> tensor<f16>
// HALF-NEXT: %[[LOSS:.*]] = ge.cast %[[SUM]] {to = 1 : i64} : (tensor<f16>) -> tensor<f32>
// HALF-NEXT: func.return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LOSS]]

// SCE-DEFAULT: ge.softmax_cross_entropy_loss %{{.*}}, %labels {reduction = "mean"} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>

// Under mixed precision the matmul computes in f16 and the loss (black list) stays f32.
// MIXED:      %[[MM:.*]] = ge.matmul %{{.*}}, %{{.*}} : (tensor<4x8xf16>, tensor<8x5xf16>) -> tensor<4x5xf16>
// MIXED-NEXT: %[[WIDE:.*]] = ge.cast %[[MM]] {to = 1 : i64} : (tensor<4x5xf16>) -> tensor<4x5xf32>
// MIXED:      ge.softmax_cross_entropy_loss %[[WIDE]], %labels {reduction = "mean"} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
// GRAY:       ge.softmax_cross_entropy_loss %{{.*}}, %labels {reduction = "mean"} : (tensor<4x5xf16>, tensor<4xi64>) -> tensor<f16>
