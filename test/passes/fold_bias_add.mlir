// RUN: ge-opt %s -p fold-bias-add --split-input-file | filecheck %s
// RUN: ge-opt %s -p fold-bias-add --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// A per-channel constant added after a conv becomes the conv's bias: [C,1,1], [1,C,1,1] (added to
// an existing bias) or a scalar.

// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %[[W:.*]] = ge.constant
// CHECK-NEXT:    %[[B0:.*]] = ge.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y0:.*]] = ge.conv %x, %[[W]], B = %[[B0]] : {{.*}} loc("/conv0")
// CHECK-NEXT:    %[[B1:.*]] = ge.constant dense<[1.100000e+01, 2.200000e+01]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y1:.*]] = ge.conv %x, %[[W]], B = %[[B1]] : {{.*}} loc("/conv1")
// CHECK-NEXT:    %[[B2:.*]] = ge.constant dense<3.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %[[Y2:.*]] = ge.conv %x, %[[W]], B = %[[B2]] : {{.*}} loc("/conv2")
// CHECK-NEXT:    func.return %[[Y0]], %[[Y1]], %[[Y2]]
func.func @conv(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>) {
  %w = ge.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c0 = ge.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %0 = ge.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv0")
  %1 = ge.add %0, %c0 : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/add0")
  %b = ge.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %c1 = ge.constant dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %2 = ge.conv %x, %w, B = %b : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv1")
  %3 = ge.add %c1, %2 : (tensor<1x2x1x1xf32>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/add1")
  %c2 = ge.constant dense<3.0> : tensor<f32>
  %4 = ge.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv2")
  %5 = ge.add %4, %c2 : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<f32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/add2")
  func.return %1, %3, %5 : tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
}
// REMARK-DAG: remark: fold-bias-add: applied conv-bias-add on [/add0, /conv0]: replaced by ge.conv
// REMARK-DAG: remark: fold-bias-add: applied conv-bias-add on [/add1, /conv1]: replaced by ge.conv
// REMARK-DAG: remark: fold-bias-add: applied conv-bias-add on [/add2, /conv2]: replaced by ge.conv

// -----

// Kept: a bias that varies over H and W, a conv with another user, a conv bias that is not a constant.

// CHECK-LABEL: func.func @conv_kept
// CHECK-COUNT-3: ge.add
func.func @conv_kept(%x: tensor<1x2x3x3xf32>, %b: tensor<2xf32>) -> (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>) {
  %w = ge.constant dense<1.0> : tensor<2x2x1x1xf32>
  %spatial = ge.constant dense<1.0> : tensor<1x1x3x3xf32>
  %c = ge.constant dense<1.0> : tensor<2x1x1xf32>
  %0 = ge.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv0")
  %1 = ge.add %0, %spatial : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/add0")
  %2 = ge.conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv1")
  %3 = ge.add %2, %c : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/add1")
  %4 = ge.conv %x, %w, B = %b : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/conv2")
  %5 = ge.add %4, %c : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32, #ge.fmt<NCHW>> loc("/add2")
  func.return %1, %2, %3, %5 : tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xf32, #ge.fmt<NCHW>>
}
// REMARK-DAG: remark: fold-bias-add: rejected conv-bias-add on [/add0, /conv0]: the bias of shape [1, 1, 3, 3] is not per output channel
// REMARK-DAG: remark: fold-bias-add: rejected conv-bias-add on [/add1, /conv1]: ge.conv '/conv1' has a user outside the pattern (func.return)
// REMARK-DAG: remark: fold-bias-add: rejected conv-bias-add on [/add2, /conv2]: the conv's bias is not constant

// -----

// Gemm + bias vector: the bias becomes C (beta 1); an existing constant C is scaled by beta and added.

// CHECK-LABEL: func.func @gemm
// CHECK-NEXT:    %[[W:.*]] = ge.constant
// CHECK-NEXT:    %[[C0:.*]] = ge.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[Y0:.*]] = ge.gemm %a, %[[W]], C = %[[C0]] {transB = 1 : i64, beta = 1.000000e+00 : f32} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("/gemm0")
// CHECK-NEXT:    %[[C1:.*]] = ge.constant dense<{{\[}}[6.000000e+00, 7.000000e+00, 8.000000e+00]]> : tensor<1x3xf32>
// CHECK-NEXT:    %[[Y1:.*]] = ge.gemm %a, %[[W]], C = %[[C1]] {transB = 1 : i64, beta = 1.000000e+00 : f32} : {{.*}} loc("/gemm1")
// CHECK-NEXT:    func.return %[[Y0]], %[[Y1]]
func.func @gemm(%a: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = ge.constant dense<1.0> : tensor<3x4xf32>
  %bias = ge.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %0 = ge.gemm %a, %w {transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32> loc("/gemm0")
  %1 = ge.add %0, %bias : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("/add0")
  %c = ge.constant dense<10.0> : tensor<1x3xf32>
  %2 = ge.gemm %a, %w, C = %c {transB = 1 : i64, beta = 0.5 : f32} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<1x3xf32>) -> tensor<2x3xf32> loc("/gemm1")
  %3 = ge.add %bias, %2 : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("/add1")
  func.return %1, %3 : tensor<2x3xf32>, tensor<2x3xf32>
}
// REMARK-DAG: remark: fold-bias-add: applied gemm-bias-add on [/add0, /gemm0]: replaced by ge.gemm
// REMARK-DAG: remark: fold-bias-add: applied gemm-bias-add on [/add1, /gemm1]: replaced by ge.gemm

// -----

// Kept: a gemm C that is not a constant, a bias that broadcasts the result to a larger shape, MatMul + Add
// (a matmul epilogue for the fusion passes), an Add of a value that is not a constant.

// CHECK-LABEL: func.func @gemm_kept
// CHECK-COUNT-4: ge.add
func.func @gemm_kept(%a: tensor<2x4xf32>, %c: tensor<3xf32>, %m: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<5x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = ge.constant dense<1.0> : tensor<3x4xf32>
  %wt = ge.constant dense<1.0> : tensor<4x3xf32>
  %bias = ge.constant dense<1.0> : tensor<3xf32>
  %big = ge.constant dense<1.0> : tensor<5x1x3xf32>
  %0 = ge.gemm %a, %w, C = %c {transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("/gemm0")
  %1 = ge.add %0, %bias : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("/add0")
  %2 = ge.gemm %a, %w {transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32> loc("/gemm1")
  %3 = ge.add %2, %big : (tensor<2x3xf32>, tensor<5x1x3xf32>) -> tensor<5x2x3xf32> loc("/add1")
  %4 = ge.matmul %a, %wt : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("/matmul")
  %5 = ge.add %4, %bias : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("/add2")
  %6 = ge.gemm %a, %w {transB = 1 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32> loc("/gemm2")
  %7 = ge.add %6, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("/add3")
  func.return %1, %3, %5, %7 : tensor<2x3xf32>, tensor<5x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
// REMARK-DAG: remark: fold-bias-add: rejected gemm-bias-add on [/add0, /gemm0]: the gemm's C is not constant
// REMARK-DAG: remark: fold-bias-add: rejected gemm-bias-add on [/add1, /gemm1]: broadcasting the bias changes the result type
// REMARK-NOT: matmul
// REMARK-NOT: add3
