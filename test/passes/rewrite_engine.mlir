// RUN: ge-opt %s -p simplify,recognize-gelu --split-input-file | filecheck %s
// RUN: ge-opt %s -p simplify,recognize-gelu --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Behaviour of the rewrite engine itself, shown with the simplify and recognize-gelu rule tables.

// Rewrites feed each other to a fixpoint: a chain of three transposes and one of three reshapes
// each become one op, the new op named after the chain's root.

// CHECK-LABEL: func.func @fixpoint
// CHECK-NEXT:    %[[S:.*]] = ge.constant dense<[4, 6]> : tensor<2xi64>
// CHECK-NEXT:    %[[R:.*]] = ge.reshape %x, %[[S]] : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32> loc("/R3")
// CHECK-NEXT:    %[[T:.*]] = ge.transpose %x {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32> loc("/T3")
// CHECK-NEXT:    func.return %[[R]], %[[T]]
func.func @fixpoint(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<4x3x2xf32>) {
  %s1 = ge.constant dense<[6, 4]> : tensor<2xi64>
  %s2 = ge.constant dense<[24]> : tensor<1xi64>
  %s3 = ge.constant dense<[4, 6]> : tensor<2xi64>
  %0 = ge.reshape %x, %s1 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32> loc("/R1")
  %1 = ge.reshape %0, %s2 : (tensor<6x4xf32>, tensor<1xi64>) -> tensor<24xf32> loc("/R2")
  %2 = ge.reshape %1, %s3 : (tensor<24xf32>, tensor<2xi64>) -> tensor<4x6xf32> loc("/R3")
  %3 = ge.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32> loc("/T1")
  %4 = ge.transpose %3 {perm = array<i64: 0, 2, 1>} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32> loc("/T2")
  %5 = ge.transpose %4 {perm = array<i64: 1, 0, 2>} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32> loc("/T3")
  func.return %2, %5 : tensor<4x6xf32>, tensor<4x3x2xf32>
}

// -----

// One pass enables the next: removing the identity inside the erf form lets recognize-gelu match.
// Operands of commutative ops match in either order.

// CHECK-LABEL: func.func @pipeline
// CHECK-NEXT:    %[[G:.*]] = ge.gelu %x {approximate = "none"} : (tensor<8xf32>) -> tensor<8xf32> loc("/Mul_1")
// CHECK-NEXT:    func.return %[[G]]
func.func @pipeline(%x: tensor<8xf32>) -> tensor<8xf32> {
  %sqrt2 = ge.constant dense<1.41421354> : tensor<f32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %half = ge.constant dense<0.5> : tensor<f32>
  %0 = ge.div %x, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = ge.erf %0 : (tensor<8xf32>) -> tensor<8xf32>
  %2 = ge.identity %1 : (tensor<8xf32>) -> tensor<8xf32> loc("/Identity")
  %3 = ge.add %one, %2 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = ge.mul %3, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %5 = ge.mul %half, %4 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32> loc("/Mul_1")
  func.return %5 : tensor<8xf32>
}
// REMARK: remark: simplify: applied identity on [/Identity]: replaced by an existing value
// REMARK: remark: recognize-gelu: applied gelu-erf on [/Mul_1, ge.mul, ge.add, ge.erf, ge.div]: replaced by ge.gelu

// -----

// A name used twice binds one value: x * 0.5 * (1 + erf(y / sqrt 2)) is not GELU. No remark.

// CHECK-LABEL: func.func @same_value
// CHECK-NOT:     ge.gelu
func.func @same_value(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %sqrt2 = ge.constant dense<1.41421354> : tensor<f32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %half = ge.constant dense<0.5> : tensor<f32>
  %0 = ge.div %y, %sqrt2 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = ge.erf %0 : (tensor<8xf32>) -> tensor<8xf32>
  %2 = ge.add %1, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = ge.mul %x, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = ge.mul %3, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return %4 : tensor<8xf32>
}
// REMARK-NOT: gelu

// -----

// A refused candidate is reported once, although the walk visits it again after each rewrite.
// Dead ops the rewrite did not touch stay (that is DCE's job); a trailing result nobody uses
// (the dropout mask) needs no replacement.

// CHECK-LABEL: func.func @once
// CHECK-NEXT:    %[[T:.*]] = ge.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %unused = ge.relu %x
// CHECK-NEXT:    %[[D:.*]] = ge.dropout %x, training_mode = %[[T]]
// CHECK-NEXT:    func.return %x, %[[D]]
func.func @once(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = ge.constant dense<true> : tensor<i1>
  %unused = ge.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %0, %mask = ge.dropout %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>) loc("/Inference")
  %1 = ge.identity %0 : (tensor<4xf32>) -> tensor<4xf32> loc("/Id1")
  %2 = ge.identity %1 : (tensor<4xf32>) -> tensor<4xf32> loc("/Id2")
  %3 = ge.dropout %x, training_mode = %t : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32> loc("/Training")
  func.return %2, %3 : tensor<4xf32>, tensor<4xf32>
}
// REMARK-DAG: remark: simplify: applied inference-dropout on [/Inference]: replaced by an existing value
// REMARK-DAG: remark: simplify: rejected inference-dropout on [/Training]: dropout is in training mode
// REMARK-DAG: remark: simplify: applied identity on [/Id1]
// REMARK-DAG: remark: simplify: applied identity on [/Id2]
// REMARK-NOT: /Training
