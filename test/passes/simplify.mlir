// RUN: ge-opt %s -p simplify --split-input-file | filecheck %s
// RUN: ge-opt %s -p simplify --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Ops that do nothing go: identity, a cast to the same type, shape ops whose result type is
// their operand's, an identity transpose.

// CHECK-LABEL: func.func @noops
// CHECK-NEXT:    func.return %x, %x, %x, %x, %x, %x, %y, %x : tensor<2x3xf32>
func.func @noops(%x: tensor<2x3xf32>, %y: tensor<2x1x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1x3xf32>, tensor<2x3xf32>) {
  %0 = ge.identity %x : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("/Identity")
  %1 = ge.cast %x {to = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("/Cast")
  %s = ge.constant dense<[2, 3]> : tensor<2xi64>
  %2 = ge.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("/Reshape")
  %3 = ge.flatten %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("/Flatten")
  %4 = ge.squeeze %x : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("/Squeeze")
  %5 = ge.expand %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32> loc("/Expand")
  %none = ge.constant dense<> : tensor<0xi64>
  %6 = ge.unsqueeze %y, %none : (tensor<2x1x3xf32>, tensor<0xi64>) -> tensor<2x1x3xf32> loc("/Unsqueeze")
  %7 = ge.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("/Transpose")
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1x3xf32>, tensor<2x3xf32>
}
// REMARK-DAG: remark: simplify: applied identity on [/Identity]: replaced by an existing value
// REMARK-DAG: remark: simplify: applied noop-cast on [/Cast]: replaced by an existing value
// REMARK-DAG: remark: simplify: applied noop-reshape on [/Reshape]: replaced by an existing value
// REMARK-DAG: remark: simplify: applied noop-reshape on [/Flatten]: replaced by an existing value
// REMARK-DAG: remark: simplify: applied noop-reshape on [/Squeeze]: replaced by an existing value
// REMARK-DAG: remark: simplify: applied noop-reshape on [/Expand]: replaced by an existing value
// REMARK-DAG: remark: simplify: applied noop-reshape on [/Unsqueeze]: replaced by an existing value
// REMARK-DAG: remark: simplify: applied identity-transpose on [/Transpose]: replaced by an existing value

// -----

// Not no-ops: a cast that changes the type, a reshape with unknown dims (it may move them), a
// transpose that permutes, a squeeze that removes a dim.

// CHECK-LABEL: func.func @not_noops
// CHECK-NEXT:    ge.cast
// CHECK-NEXT:    ge.constant
// CHECK-NEXT:    ge.reshape
// CHECK-NEXT:    ge.transpose
// CHECK-NEXT:    ge.squeeze
func.func @not_noops(%x: tensor<2x3xf32>, %d: tensor<?x?xf32>, %y: tensor<2x1x3xf32>) -> (tensor<2x3xf16>, tensor<?x?xf32>, tensor<3x2xf32>, tensor<2x3xf32>) {
  %0 = ge.cast %x {to = 10 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %s = ge.constant dense<[-1, 0]> : tensor<2xi64>
  %1 = ge.reshape %d, %s : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %2 = ge.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = ge.squeeze %y : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
  func.return %0, %1, %2, %3 : tensor<2x3xf16>, tensor<?x?xf32>, tensor<3x2xf32>, tensor<2x3xf32>
}

// -----

// Transpose pairs compose into one transpose, or vanish when the composition is the identity.

// CHECK-LABEL: func.func @transpose_pairs
// CHECK-NEXT:    %[[T:.*]] = ge.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32> loc("/T2")
// CHECK-NEXT:    func.return %[[T]], %x
func.func @transpose_pairs(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %0 = ge.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32> loc("/T1")
  %1 = ge.transpose %0 {perm = array<i64: 1, 2, 0>} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32> loc("/T2")
  %2 = ge.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32> loc("/T3")
  %3 = ge.transpose %2 {perm = array<i64: 0, 2, 1>} : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32> loc("/T4")
  func.return %1, %3 : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}
// REMARK-DAG: remark: simplify: applied transpose-pair on [/T2, /T1]: replaced by ge.transpose
// REMARK-DAG: remark: simplify: applied transpose-pair on [/T4, /T3]: replaced by an existing value

// -----

// The inner transpose has another user: the pair stays.

// CHECK-LABEL: func.func @transpose_pair_shared
// CHECK-NEXT:    ge.transpose
// CHECK-NEXT:    ge.transpose
func.func @transpose_pair_shared(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {
  %0 = ge.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("/T1")
  %1 = ge.transpose %0 {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32> loc("/T2")
  func.return %0, %1 : tensor<3x2xf32>, tensor<2x3xf32>
}
// REMARK: remark: simplify: rejected transpose-pair on [/T2, /T1]: ge.transpose '/T1' has a user outside the pattern (func.return)

// -----

// Reshape chains become one reshape: with the outer shape when it has no 0 (copy) entries, else
// with the static result shape.

// CHECK-LABEL: func.func @reshape_chains
// CHECK-NEXT:    %[[S:.*]] = ge.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-NEXT:    %[[A:.*]] = ge.reshape %x, %[[S]] : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<3x4xf32> loc("/R2")
// CHECK-NEXT:    %[[S2:.*]] = ge.constant dense<[4, 3]> : tensor<2xi64>
// CHECK-NEXT:    %[[B:.*]] = ge.reshape %x, %[[S2]] {allowzero = 0 : i64} : (tensor<2x6xf32>, tensor<2xi64>) -> tensor<4x3xf32> loc("/R4")
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @reshape_chains(%x: tensor<2x6xf32>) -> (tensor<3x4xf32>, tensor<4x3xf32>) {
  %s1 = ge.constant dense<[12]> : tensor<1xi64>
  %s2 = ge.constant dense<[3, 4]> : tensor<2xi64>
  %0 = ge.reshape %x, %s1 : (tensor<2x6xf32>, tensor<1xi64>) -> tensor<12xf32> loc("/R1")
  %1 = ge.reshape %0, %s2 : (tensor<12xf32>, tensor<2xi64>) -> tensor<3x4xf32> loc("/R2")
  %s3 = ge.constant dense<[4, 1, 3]> : tensor<3xi64>
  %s4 = ge.constant dense<[0, -1]> : tensor<2xi64>
  %2 = ge.reshape %x, %s3 : (tensor<2x6xf32>, tensor<3xi64>) -> tensor<4x1x3xf32> loc("/R3")
  %3 = ge.reshape %2, %s4 : (tensor<4x1x3xf32>, tensor<2xi64>) -> tensor<4x3xf32> loc("/R4")
  func.return %1, %3 : tensor<3x4xf32>, tensor<4x3xf32>
}

// -----

// A 0 in the outer shape copies a dim of the inner result, and the result is not static: kept.

// CHECK-LABEL: func.func @reshape_chain_copy_dynamic
// CHECK:         ge.reshape
// CHECK-NEXT:    ge.reshape
func.func @reshape_chain_copy_dynamic(%x: tensor<?x6xf32>) -> tensor<?x6xf32> {
  %s1 = ge.constant dense<[-1, 2, 3]> : tensor<3xi64>
  %s2 = ge.constant dense<[0, -1]> : tensor<2xi64>
  %0 = ge.reshape %x, %s1 : (tensor<?x6xf32>, tensor<3xi64>) -> tensor<?x2x3xf32> loc("/R1")
  %1 = ge.reshape %0, %s2 : (tensor<?x2x3xf32>, tensor<2xi64>) -> tensor<?x6xf32> loc("/R2")
  func.return %1 : tensor<?x6xf32>
}
// REMARK: remark: simplify: rejected reshape-chain on [/R2, /R1]: the outer shape copies (0) dims of the inner result and the result shape is not static

// -----

// Inference dropout is its input: no training_mode, training_mode false, or ratio 0.

// CHECK-LABEL: func.func @dropout_inference
// CHECK-NEXT:    func.return %x, %x, %x : tensor<4xf32>
func.func @dropout_inference(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = ge.dropout %x : (tensor<4xf32>) -> tensor<4xf32> loc("/D0")
  %f = ge.constant dense<false> : tensor<i1>
  %1 = ge.dropout %x, training_mode = %f : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32> loc("/D1")
  %t = ge.constant dense<true> : tensor<i1>
  %r = ge.constant dense<0.0> : tensor<f32>
  %2 = ge.dropout %x, ratio = %r, training_mode = %t : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32> loc("/D2")
  func.return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Training dropout, a training_mode that is not a constant, a used mask: kept.

// CHECK-LABEL: func.func @dropout_kept
// CHECK-COUNT-3: ge.dropout
func.func @dropout_kept(%x: tensor<4xf32>, %mode: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>) {
  %t = ge.constant dense<true> : tensor<i1>
  %0 = ge.dropout %x, training_mode = %t : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32> loc("/Train")
  %1 = ge.dropout %x, training_mode = %mode : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32> loc("/Runtime")
  %2, %3 = ge.dropout %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>) loc("/Mask")
  func.return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi1>
}
// REMARK-DAG: remark: simplify: rejected inference-dropout on [/Train]: dropout is in training mode
// REMARK-DAG: remark: simplify: rejected inference-dropout on [/Runtime]: training_mode is not a constant
// REMARK-DAG: remark: simplify: rejected inference-dropout on [/Mask]: result #1 of ge.dropout '/Mask' is used but the rewrite does not replace it

// -----

// x*1, 1*x, x/1, x+0, x-0 with constants that do not widen x.

// CHECK-LABEL: func.func @arith_identities
// CHECK-NEXT:    func.return %x, %x, %x, %x, %x : tensor<2x3xf32>
func.func @arith_identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %one = ge.constant dense<1.0> : tensor<f32>
  %ones = ge.constant dense<1.0> : tensor<1x3xf32>
  %zero = ge.constant dense<0.0> : tensor<1xf32>
  %0 = ge.mul %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("/Mul")
  %1 = ge.mul %ones, %x : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("/Mul_1")
  %2 = ge.div %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("/Div")
  %3 = ge.add %zero, %x : (tensor<1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("/Add")
  %4 = ge.sub %x, %zero : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32> loc("/Sub")
  func.return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Kept: a constant that widens x by broadcasting, 1/x, 0-x, a constant near but not exactly 1.

// CHECK-LABEL: func.func @arith_kept
// CHECK-COUNT-4: ge.{{mul|div|sub}}
func.func @arith_kept(%x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %ones = ge.constant dense<1.0> : tensor<2x3xf32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %zero = ge.constant dense<0.0> : tensor<f32>
  %near = ge.constant dense<1.00001> : tensor<f32>
  %0 = ge.mul %x, %ones : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("/Widen")
  %1 = ge.div %one, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32> loc("/Recip")
  %2 = ge.sub %zero, %x : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32> loc("/Neg")
  %3 = ge.mul %x, %near : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32> loc("/Near")
  func.return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
// REMARK: remark: simplify: rejected mul-one on [/Widen]: broadcasting with the constant changes the result type
// REMARK-NOT: remark
