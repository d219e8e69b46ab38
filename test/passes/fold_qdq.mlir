// RUN: ge-opt %s -p fold-qdq --split-input-file | filecheck %s
// RUN: ge-opt %s -p fold-qdq --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Q(MatMul(DQ(a), DQ(b))) -> QLinearMatMul; b's scale is per column (axis 1); the Q has no zero
// point, so a uint8 0 is made for y_zero_point.

// CHECK-LABEL: func.func @matmul
// CHECK-DAG:     %[[AS:.*]] = ge.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG:     %[[AZ:.*]] = ge.constant dense<3> : tensor<ui8>
// CHECK-DAG:     %[[B:.*]] = ge.constant dense<{{\[}}[1, -2], [3, 4]]> : tensor<2x2xi8>
// CHECK-DAG:     %[[BS:.*]] = ge.constant dense<[2.500000e-01, 1.250000e-01]> : tensor<2xf32>
// CHECK-DAG:     %[[BZ:.*]] = ge.constant dense<0> : tensor<2xi8>
// CHECK-DAG:     %[[YS:.*]] = ge.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG:     %[[YZ:.*]] = ge.constant dense<0> : tensor<ui8>
// CHECK:         %[[Y:.*]] = ge.qlinear_matmul %a, %[[AS]], %[[AZ]], %[[B]], %[[BS]], %[[BZ]], %[[YS]], %[[YZ]] : (tensor<3x2xui8>, tensor<f32>, tensor<ui8>, tensor<2x2xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<ui8>) -> tensor<3x2xui8> loc("/mm")
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     ge.dequantize_linear
func.func @matmul(%a: tensor<3x2xui8>) -> tensor<3x2xui8> {
  %as = ge.constant dense<0.5> : tensor<f32>
  %az = ge.constant dense<3> : tensor<ui8>
  %b = ge.constant dense<[[1, -2], [3, 4]]> : tensor<2x2xi8>
  %bs = ge.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %bz = ge.constant dense<0> : tensor<2xi8>
  %ys = ge.constant dense<1.0> : tensor<f32>
  %0 = ge.dequantize_linear %a, %as, x_zero_point = %az : (tensor<3x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<3x2xf32> loc("/dq_a")
  %1 = ge.dequantize_linear %b, %bs, x_zero_point = %bz {axis = 1 : i64} : (tensor<2x2xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2xf32> loc("/dq_b")
  %2 = ge.matmul %0, %1 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32> loc("/mm")
  %3 = ge.quantize_linear %2, %ys : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xui8> loc("/q")
  func.return %3 : tensor<3x2xui8>
}
// REMARK: remark: fold-qdq: applied qdq-matmul on [/q, /mm, /dq_a, /dq_b]: replaced by ge.qlinear_matmul

// -----

// Q(Conv(DQ(x), DQ(w), B)) with a float bias constant: B becomes round(B / (x_scale * w_scale))
// in int32, per output channel: [1.0, -0.3] / (0.5 * [0.25, 0.1]) = [8, -6]. The DQ of x has a
// second user (a relu), which keeps it.

// CHECK-LABEL: func.func @conv_float_bias
// CHECK:         %[[XD:.*]] = ge.dequantize_linear %x
// CHECK:         %[[B:.*]] = ge.constant dense<[8, -6]> : tensor<2xi32>
// CHECK-NEXT:    %[[Y:.*]] = ge.qlinear_conv %x, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, B = %[[B]] {pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>, tensor<2x1x1x1xi8>, tensor<2xf32>, tensor<2xi8>, tensor<f32>, tensor<i8>, tensor<2xi32>) -> tensor<1x2x2x2xi8, #ge.fmt<NCHW>> loc("/conv")
// CHECK-NEXT:    %[[R:.*]] = ge.relu %[[XD]]
// CHECK-NEXT:    func.return %[[Y]], %[[R]]
// CHECK-NOT:     ge.conv
func.func @conv_float_bias(%x: tensor<1x1x2x2xi8>) -> (tensor<1x2x2x2xi8, #ge.fmt<NCHW>>, tensor<1x1x2x2xf32>) {
  %xs = ge.constant dense<0.5> : tensor<f32>
  %xz = ge.constant dense<0> : tensor<i8>
  %w = ge.constant dense<[[[[2]]], [[[-3]]]]> : tensor<2x1x1x1xi8>
  %ws = ge.constant dense<[0.25, 0.1]> : tensor<2xf32>
  %wz = ge.constant dense<0> : tensor<2xi8>
  %bias = ge.constant dense<[1.0, -0.3]> : tensor<2xf32>
  %ys = ge.constant dense<0.2> : tensor<f32>
  %yz = ge.constant dense<1> : tensor<i8>
  %0 = ge.dequantize_linear %x, %xs, x_zero_point = %xz : (tensor<1x1x2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x2x2xf32> loc("/dq_x")
  %1 = ge.dequantize_linear %w, %ws, x_zero_point = %wz {axis = 0 : i64} : (tensor<2x1x1x1xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x1x1x1xf32> loc("/dq_w")
  %2 = ge.conv %0, %1, B = %bias {pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32, #ge.fmt<NCHW>> loc("/conv")
  %3 = ge.quantize_linear %2, %ys, y_zero_point = %yz : (tensor<1x2x2x2xf32, #ge.fmt<NCHW>>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8, #ge.fmt<NCHW>> loc("/q")
  %4 = ge.relu %0 : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> loc("/relu")
  func.return %3, %4 : tensor<1x2x2x2xi8, #ge.fmt<NCHW>>, tensor<1x1x2x2xf32>
}
// REMARK: remark: fold-qdq: applied qdq-conv on [/q, /conv, /dq_x, /dq_w]: replaced by ge.qlinear_conv

// -----

// The bias as quantize_static writes it: a DQ of int32 with scale x_scale * w_scale (0.5 * 0.25,
// per tensor here): its int32 values are the QLinearConv's B.

// CHECK-LABEL: func.func @conv_int32_bias
// CHECK:         %[[B:.*]] = ge.constant dense<[7, -9]> : tensor<2xi32>
// CHECK-NEXT:    ge.qlinear_conv %x, {{.*}}, B = %[[B]]
// CHECK-NOT:     ge.dequantize_linear
func.func @conv_int32_bias(%x: tensor<1x1x2x2xi8>) -> tensor<1x2x2x2xi8, #ge.fmt<NCHW>> {
  %xs = ge.constant dense<0.5> : tensor<f32>
  %w = ge.constant dense<[[[[2]]], [[[-3]]]]> : tensor<2x1x1x1xi8>
  %ws = ge.constant dense<0.25> : tensor<f32>
  %bq = ge.constant dense<[7, -9]> : tensor<2xi32>
  %bs = ge.constant dense<0.125> : tensor<2xf32>
  %ys = ge.constant dense<0.2> : tensor<f32>
  %yz = ge.constant dense<1> : tensor<i8>
  %0 = ge.dequantize_linear %x, %xs : (tensor<1x1x2x2xi8>, tensor<f32>) -> tensor<1x1x2x2xf32> loc("/dq_x")
  %1 = ge.dequantize_linear %w, %ws : (tensor<2x1x1x1xi8>, tensor<f32>) -> tensor<2x1x1x1xf32> loc("/dq_w")
  %b = ge.dequantize_linear %bq, %bs {axis = 0 : i64} : (tensor<2xi32>, tensor<2xf32>) -> tensor<2xf32> loc("/dq_b")
  %2 = ge.conv %0, %1, B = %b : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32, #ge.fmt<NCHW>> loc("/conv")
  %3 = ge.quantize_linear %2, %ys, y_zero_point = %yz : (tensor<1x2x2x2xf32, #ge.fmt<NCHW>>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8, #ge.fmt<NCHW>> loc("/q")
  func.return %3 : tensor<1x2x2x2xi8, #ge.fmt<NCHW>>
}
// REMARK: remark: fold-qdq: applied qdq-conv on [/q, /conv, /dq_x, /dq_w]: replaced by ge.qlinear_conv

// -----

// A bias DQ whose scale is not x_scale * w_scale (0.25 for 0.125): its values are on another grid.

// CHECK-LABEL: func.func @conv_bias_wrong_scale
// CHECK:         ge.conv
// CHECK-NOT:     ge.qlinear_conv
func.func @conv_bias_wrong_scale(%x: tensor<1x1x2x2xi8>) -> tensor<1x2x2x2xi8, #ge.fmt<NCHW>> {
  %xs = ge.constant dense<0.5> : tensor<f32>
  %w = ge.constant dense<[[[[2]]], [[[-3]]]]> : tensor<2x1x1x1xi8>
  %ws = ge.constant dense<0.25> : tensor<f32>
  %bq = ge.constant dense<[7, -9]> : tensor<2xi32>
  %bs = ge.constant dense<0.25> : tensor<f32>
  %ys = ge.constant dense<0.2> : tensor<f32>
  %yz = ge.constant dense<1> : tensor<i8>
  %0 = ge.dequantize_linear %x, %xs : (tensor<1x1x2x2xi8>, tensor<f32>) -> tensor<1x1x2x2xf32> loc("/dq_x")
  %1 = ge.dequantize_linear %w, %ws : (tensor<2x1x1x1xi8>, tensor<f32>) -> tensor<2x1x1x1xf32> loc("/dq_w")
  %b = ge.dequantize_linear %bq, %bs : (tensor<2xi32>, tensor<f32>) -> tensor<2xf32> loc("/dq_b")
  %2 = ge.conv %0, %1, B = %b : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32, #ge.fmt<NCHW>> loc("/conv")
  %3 = ge.quantize_linear %2, %ys, y_zero_point = %yz : (tensor<1x2x2x2xf32, #ge.fmt<NCHW>>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8, #ge.fmt<NCHW>> loc("/q")
  func.return %3 : tensor<1x2x2x2xi8, #ge.fmt<NCHW>>
}
// REMARK: remark: fold-qdq: rejected qdq-conv on [/q, /conv, /dq_x, /dq_w]: the scale of the bias ge.dequantize_linear '/dq_b' is not x_scale * w_scale

// -----

// A scale that is not a constant (a graph input), and a matmul whose float result is also
// returned: both stay float.

// CHECK-LABEL: func.func @refused
// CHECK-COUNT-2: ge.matmul
// CHECK-NOT:     ge.qlinear_matmul
func.func @refused(%a: tensor<2x2xi8>, %as: tensor<f32>) -> (tensor<2x2xui8>, tensor<2x2xui8>, tensor<2x2xf32>) {
  %s = ge.constant dense<0.5> : tensor<f32>
  %0 = ge.dequantize_linear %a, %as : (tensor<2x2xi8>, tensor<f32>) -> tensor<2x2xf32> loc("/dq_in")
  %1 = ge.dequantize_linear %a, %s : (tensor<2x2xi8>, tensor<f32>) -> tensor<2x2xf32> loc("/dq_const")
  %2 = ge.matmul %0, %1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm1")
  %3 = ge.quantize_linear %2, %s : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xui8> loc("/q1")
  %4 = ge.matmul %1, %1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm2")
  %5 = ge.quantize_linear %4, %s : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xui8> loc("/q2")
  func.return %3, %5, %4 : tensor<2x2xui8>, tensor<2x2xui8>, tensor<2x2xf32>
}
// REMARK-DAG: remark: fold-qdq: rejected qdq-matmul on [/q1, /mm1, /dq_in, /dq_const]: the scale of ge.dequantize_linear '/dq_in' is not constant
// REMARK-DAG: remark: fold-qdq: rejected qdq-matmul on [/q2, /mm2, /dq_const]: ge.matmul '/mm2' has a user outside the pattern (func.return)

// -----

// Q(Reshape(DQ(q))) on one grid (the same scale and zero point): the Reshape runs on the
// integers. Q(DQ(q)) on one grid is q. The max pool keeps its pair: its scale is negative (a max
// of the integers is then the min of the values), and the transpose's Q has another zero point.

// CHECK-LABEL: func.func @drop_and_cancel
// CHECK-NEXT:    %[[S:.*]] = ge.constant dense<5.000000e-01>
// CHECK-NEXT:    %[[Z:.*]] = ge.constant dense<3> : tensor<ui8>
// CHECK-NEXT:    %[[SH:.*]] = ge.constant dense<[4, 2]>
// CHECK:         %[[R:.*]] = ge.reshape %q, %[[SH]] : (tensor<2x4xui8>, tensor<2xi64>) -> tensor<4x2xui8> loc("/reshape")
// CHECK:         ge.transpose
// CHECK:         ge.max_pool
// CHECK:         func.return %[[R]], %q,
func.func @drop_and_cancel(%q: tensor<2x4xui8>, %p: tensor<1x1x2x2xui8>) -> (tensor<4x2xui8>, tensor<2x4xui8>, tensor<4x2xui8>, tensor<1x1x1x1xui8>) {
  %s = ge.constant dense<0.5> : tensor<f32>
  %z = ge.constant dense<3> : tensor<ui8>
  %shape = ge.constant dense<[4, 2]> : tensor<2xi64>
  %neg = ge.constant dense<-0.5> : tensor<f32>
  %z2 = ge.constant dense<4> : tensor<ui8>
  %0 = ge.dequantize_linear %q, %s, x_zero_point = %z : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4xf32> loc("/dq")
  %1 = ge.reshape %0, %shape : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<4x2xf32> loc("/reshape")
  %2 = ge.quantize_linear %1, %s, y_zero_point = %z : (tensor<4x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x2xui8> loc("/q_reshape")
  %3 = ge.quantize_linear %0, %s, y_zero_point = %z : (tensor<2x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4xui8> loc("/q_same")
  %4 = ge.transpose %0 {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32> loc("/transpose")
  %5 = ge.quantize_linear %4, %s, y_zero_point = %z2 : (tensor<4x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x2xui8> loc("/q_other")
  %6 = ge.dequantize_linear %p, %neg, x_zero_point = %z : (tensor<1x1x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x2x2xf32> loc("/dq_neg")
  %7 = ge.max_pool %6 {kernel_shape = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> loc("/pool")
  %8 = ge.quantize_linear %7, %neg, y_zero_point = %z : (tensor<1x1x1x1xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x1x1x1xui8> loc("/q_pool")
  func.return %2, %3, %5, %8 : tensor<4x2xui8>, tensor<2x4xui8>, tensor<4x2xui8>, tensor<1x1x1x1xui8>
}
// REMARK-DAG: remark: fold-qdq: applied qdq-drop on [/q_reshape, /reshape, /dq]: replaced by ge.reshape
// REMARK-DAG: remark: fold-qdq: applied qdq-cancel on [/q_same, /dq]: replaced by an existing value
// REMARK-DAG: remark: fold-qdq: rejected qdq-drop on [/q_other, /transpose, /dq]: ge.dequantize_linear '/dq' and ge.quantize_linear '/q_other' have different zero points
// REMARK-DAG: remark: fold-qdq: rejected qdq-drop on [/q_pool, /pool, /dq_neg]: the scale of ge.dequantize_linear '/dq_neg' is not positive

// -----

// Q(Gemm(DQ(x), DQ(w), bias)) with transB (nn.Linear): MatMulInteger on w^T (transposed at
// compile time), the bias on the grid of x_scale * w_scale ([1, -0.5] / (0.5 * [0.25, 0.125]) =
// [8, -8]), and the requantization by x_scale * w_scale / y_scale = [0.625, 0.3125]. A gemm with
// alpha = 2 stays float.

// CHECK-LABEL: func.func @gemm
// CHECK:         %[[WT:.*]] = ge.constant dense<{{\[}}[1, 4], [-2, 5], [3, -6]]> : tensor<3x2xi8>
// CHECK-NEXT:    %[[ACC:.*]] = ge.matmul_integer %x, %[[WT]], a_zero_point = %xz, b_zero_point = %wz : {{.*}} -> tensor<2x2xi32> loc("/fc")
// CHECK-NEXT:    %[[B:.*]] = ge.constant dense<[8, -8]> : tensor<2xi32>
// CHECK-NEXT:    %[[SUM:.*]] = ge.add %[[ACC]], %[[B]] : {{.*}} loc("/fc/bias")
// CHECK-NEXT:    %[[F:.*]] = ge.cast %[[SUM]] {to = 1 : i64}
// CHECK-NEXT:    %[[M:.*]] = ge.constant dense<[6.250000e-01, 3.125000e-01]> : tensor<2xf32>
// CHECK-NEXT:    %[[S:.*]] = ge.mul %[[F]], %[[M]]
// CHECK-NEXT:    %[[ONE:.*]] = ge.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[Y:.*]] = ge.quantize_linear %[[S]], %[[ONE]], y_zero_point = %yz : {{.*}} loc("/q")
// CHECK:         ge.gemm
// CHECK:         func.return %[[Y]],
func.func @gemm(%x: tensor<2x3xui8>) -> (tensor<2x2xui8>, tensor<2x2xui8>) {
  %xs = ge.constant dense<0.5> : tensor<f32>
  %xz = ge.constant dense<3> : tensor<ui8>
  %w = ge.constant dense<[[1, -2, 3], [4, 5, -6]]> : tensor<2x3xi8>
  %ws = ge.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %wz = ge.constant dense<0> : tensor<2xi8>
  %bias = ge.constant dense<[1.0, -0.5]> : tensor<2xf32>
  %ys = ge.constant dense<0.2> : tensor<f32>
  %yz = ge.constant dense<7> : tensor<ui8>
  %0 = ge.dequantize_linear %x, %xs, x_zero_point = %xz : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32> loc("/dq_x")
  %1 = ge.dequantize_linear %w, %ws, x_zero_point = %wz {axis = 0 : i64} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3xf32> loc("/dq_w")
  %2 = ge.gemm %0, %1, C = %bias {transB = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32> loc("/fc")
  %3 = ge.quantize_linear %2, %ys, y_zero_point = %yz : (tensor<2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x2xui8> loc("/q")
  %4 = ge.gemm %0, %1, C = %bias {transB = 1 : i64, alpha = 2.0 : f32} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32> loc("/fc_scaled")
  %5 = ge.quantize_linear %4, %ys, y_zero_point = %yz : (tensor<2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x2xui8> loc("/q_scaled")
  func.return %3, %5 : tensor<2x2xui8>, tensor<2x2xui8>
}
// REMARK-DAG: remark: fold-qdq: applied qdq-gemm on [/q, /fc, /dq_x, /dq_w]: replaced by ge.matmul_integer, ge.add, ge.cast, ge.mul, ge.quantize_linear
// REMARK-DAG: remark: fold-qdq: rejected qdq-gemm on [/q_scaled, /fc_scaled, /dq_x, /dq_w]: ge.gemm '/fc_scaled' has alpha = 2.0, beta = 1.0, transA = 0, not a plain product (alpha = beta = 1, transA = 0)
