// RUN: ge-opt %s -p recognize-attention --split-input-file | filecheck %s
// RUN: ge-opt %s -p recognize-attention --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// BERT: k arrives transposed ([.., D, Sk]), scores divided by sqrt(D), an additive mask.

// CHECK-LABEL: func.func @bert
// CHECK-NEXT:    %[[A:.*]] = ge.attention %q, %kt, %v, mask = %mask {k_transposed = 1 : i64, scale = 2.82842708 : f32, scale_on = "scores", scale_op = "div", mask_kind = "additive"} : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x8xf32> loc("/attn/MatMul_1")
// CHECK-NEXT:    func.return %[[A]]
func.func @bert(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x1x4xf32>) -> tensor<1x2x4x8xf32> {
  %s = ge.constant dense<2.82842708> : tensor<f32>
  %0 = ge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32> loc("/attn/MatMul")
  %1 = ge.div %0, %s : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32> loc("/attn/Div")
  %2 = ge.add %1, %mask : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32> loc("/attn/Add")
  %3 = ge.softmax %2 {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("/attn/Softmax")
  %4 = ge.matmul %3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> loc("/attn/MatMul_1")
  func.return %4 : tensor<1x2x4x8xf32>
}
// REMARK: remark: recognize-attention: applied attention on [/attn/MatMul_1, /attn/Softmax, /attn/Add, /attn/Div, /attn/MatMul]: replaced by ge.attention

// -----

// GPT-2: a boolean causal mask through Where(mask, scores, fill).

// CHECK-LABEL: func.func @gpt2
// CHECK-NEXT:    %[[A:.*]] = ge.attention %q, %kt, %v, mask = %causal {k_transposed = 1 : i64, scale = 8.000000e+00 : f32, scale_on = "scores", scale_op = "div", mask_kind = "keep", fill = -3.40282347e+38 : f32}
// CHECK-NEXT:    func.return %[[A]]
func.func @gpt2(%q: tensor<1x2x4x64xf32>, %kt: tensor<1x2x64x4xf32>, %v: tensor<1x2x4x64xf32>, %causal: tensor<1x1x4x4xi1>) -> tensor<1x2x4x64xf32> {
  %s = ge.constant dense<8.0> : tensor<f32>
  %fill = ge.constant dense<-3.40282347e+38> : tensor<f32>
  %0 = ge.matmul %q, %kt : (tensor<1x2x4x64xf32>, tensor<1x2x64x4xf32>) -> tensor<1x2x4x4xf32>
  %1 = ge.div %0, %s : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %2 = ge.where %causal, %1, %fill : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %3 = ge.softmax %2 {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %4 = ge.matmul %3, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x64xf32>) -> tensor<1x2x4x64xf32>
  func.return %4 : tensor<1x2x4x64xf32>
}

// -----

// An explicit transpose of k's last two axes is absorbed (k_transposed = 0); the scale may multiply
// q or k before the first MatMul; no scale and no mask at all.

// CHECK-LABEL: func.func @variants
// CHECK-NEXT:    %[[A:.*]] = ge.attention %q, %k, %v {k_transposed = 0 : i64, scale = 2.500000e-01 : f32, scale_on = "q", scale_op = "mul"} : (tensor<2x4x16xf32>, tensor<2x6x16xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %[[T:.*]] = ge.transpose %k
// CHECK-NEXT:    %[[B:.*]] = ge.attention %q, %[[T]], %v {k_transposed = 1 : i64, scale = 2.500000e-01 : f32, scale_on = "k", scale_op = "mul"}
// CHECK-NEXT:    %[[C:.*]] = ge.attention %q, %[[T]], %v {k_transposed = 1 : i64} : (tensor<2x4x16xf32>, tensor<2x16x6xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]], %[[C]]
func.func @variants(%q: tensor<2x4x16xf32>, %k: tensor<2x6x16xf32>, %v: tensor<2x6x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %s = ge.constant dense<0.25> : tensor<f32>
  %0 = ge.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<2x6x16xf32>) -> tensor<2x16x6xf32>
  %1 = ge.mul %s, %q : (tensor<f32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %2 = ge.matmul %1, %0 : (tensor<2x4x16xf32>, tensor<2x16x6xf32>) -> tensor<2x4x6xf32>
  %3 = ge.softmax %2 : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %4 = ge.matmul %3, %v : (tensor<2x4x6xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
  %kt = ge.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<2x6x16xf32>) -> tensor<2x16x6xf32>
  %5 = ge.mul %kt, %s : (tensor<2x16x6xf32>, tensor<f32>) -> tensor<2x16x6xf32>
  %6 = ge.matmul %q, %5 : (tensor<2x4x16xf32>, tensor<2x16x6xf32>) -> tensor<2x4x6xf32>
  %7 = ge.softmax %6 : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %8 = ge.matmul %7, %v : (tensor<2x4x6xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
  %9 = ge.matmul %q, %kt : (tensor<2x4x16xf32>, tensor<2x16x6xf32>) -> tensor<2x4x6xf32>
  %10 = ge.softmax %9 : (tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %11 = ge.matmul %10, %v : (tensor<2x4x6xf32>, tensor<2x6x8xf32>) -> tensor<2x4x8xf32>
  func.return %4, %8, %11 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// Kept, with the reason: softmax over a non-last axis, a scale that is not a constant, a fill value
// that is not a constant, scores that are also a graph result.

// CHECK-LABEL: func.func @kept
// CHECK-NOT:     ge.attention
func.func @kept(%q: tensor<2x4x16xf32>, %kt: tensor<2x16x4xf32>, %v: tensor<2x4x8xf32>, %t: tensor<f32>, %m: tensor<4x4xi1>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>) {
  %s = ge.constant dense<4.0> : tensor<f32>
  %0 = ge.matmul %q, %kt : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x4x4xf32>
  %1 = ge.softmax %0 {axis = 1 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %2 = ge.matmul %1, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("/Axis")
  %3 = ge.matmul %q, %kt : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x4x4xf32>
  %4 = ge.div %3, %t : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %5 = ge.softmax %4 : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %6 = ge.matmul %5, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("/Scale")
  %7 = ge.matmul %q, %kt : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x4x4xf32>
  %8 = ge.where %m, %7, %t : (tensor<4x4xi1>, tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %9 = ge.softmax %8 : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %10 = ge.matmul %9, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("/Fill")
  %11 = ge.matmul %q, %kt : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x4x4xf32>
  %12 = ge.div %11, %s : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32> loc("/Scores")
  %13 = ge.softmax %12 : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %14 = ge.matmul %13, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("/Escapes")
  func.return %2, %6, %10, %14, %12 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x4xf32>
}
// REMARK-DAG: remark: recognize-attention: rejected attention on [/Axis, {{.*}}]: softmax is not over the last axis
// REMARK-DAG: remark: recognize-attention: rejected attention on [/Scale, {{.*}}]: the scale is not a constant scalar
// REMARK-DAG: remark: recognize-attention: rejected attention on [/Fill, {{.*}}]: the masked fill value is not a constant scalar
// REMARK-DAG: remark: recognize-attention: rejected attention on [/Escapes, {{.*}}]: ge.div '/Scores' has a user outside the pattern (func.return)

// -----

// A mask that broadcasts the scores to a larger shape: ge.attention would not verify.

// CHECK-LABEL: func.func @mask_widens
// CHECK-NOT:     ge.attention
func.func @mask_widens(%q: tensor<1x4x16xf32>, %kt: tensor<1x16x4xf32>, %v: tensor<1x4x8xf32>, %mask: tensor<3x4x4xf32>) -> tensor<3x4x8xf32> {
  %0 = ge.matmul %q, %kt : (tensor<1x4x16xf32>, tensor<1x16x4xf32>) -> tensor<1x4x4xf32>
  %1 = ge.add %0, %mask : (tensor<1x4x4xf32>, tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %2 = ge.softmax %1 : (tensor<3x4x4xf32>) -> tensor<3x4x4xf32>
  %3 = ge.matmul %2, %v : (tensor<3x4x4xf32>, tensor<1x4x8xf32>) -> tensor<3x4x8xf32> loc("/Widens")
  func.return %3 : tensor<3x4x8xf32>
}
// REMARK: remark: recognize-attention: rejected attention on [/Widens, {{.*}}]: the replacement does not verify: ge.attention '/Widens': mask of shape (3, 4, 4) does not broadcast to the scores (1, 4, 4)
