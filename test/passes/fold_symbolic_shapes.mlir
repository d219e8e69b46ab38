// RUN: ge-opt %s -p fold-symbolic-shapes --split-input-file | filecheck %s
// RUN: ge-opt %s -p fold-symbolic-shapes --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: ge-opt %s -p 'fold-symbolic-shapes{dim_ranges="seq=1:512"}' --split-input-file --remarks 2>&1 | filecheck %s --check-prefix=RANGE
// RUN: not ge-opt %s -p 'fold-symbolic-shapes{dim_ranges="len=1:8"}' --split-input-file 2>&1 | filecheck %s --check-prefix=NONAME
// RUN: not ge-opt %s -p 'fold-symbolic-shapes{dim_ranges="seq=8:1"}' --split-input-file 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not ge-opt %s -p 'fold-symbolic-shapes{dim_ranges="seq=1"}' --split-input-file 2>&1 | filecheck %s --check-prefix=FORM

// NONAME: ge-opt: error: fold-symbolic-shapes: dim_ranges names len, which no input has (its named dims: batch, seq)
// ORDER: ge-opt: error: fold-symbolic-shapes: dim_ranges seq: the minimum 8 is above the maximum 1
// FORM: ge-opt: error: fold-symbolic-shapes: dim_ranges 'seq=1': expected NAME=MIN:MAX (a name and two non-negative integers)

// An exporter's split into heads: the target [batch, seq, 2, 4] computed from the input's shape is
// [0, 0, 2, 4] relative to it; the shape computation is left dead, the result has static heads.

// CHECK-LABEL: func.func @heads
// CHECK:       %[[T:[0-9]+]] = ge.constant dense<[0, 0, 2, 4]> : tensor<4xi64>
// CHECK-NEXT:  %split = ge.reshape %x, %[[T]] : (tensor<?x?x8xf32>, tensor<4xi64>) -> tensor<?x?x2x4xf32>
// REMARK: remark: fold-symbolic-shapes: applied relative-target on [ge.reshape]: ge.reshape: target [batch, seq, 2, 4] is [0, 0, 2, 4]
func.func @heads(%x: tensor<?x?x8xf32> {ge.name = "x", ge.dims = ["batch", "seq", ""]}) -> tensor<?x?x?x?xf32> {
  %s = ge.shape %x : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %c0 = ge.constant dense<[0]> : tensor<1xi64>
  %c2 = ge.constant dense<[2]> : tensor<1xi64>
  %b = ge.slice %s, %c0, %c2, axes = %c0 : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %heads = ge.constant dense<[2, 4]> : tensor<2xi64>
  %t = ge.concat %b, %heads {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %split = ge.reshape %x, %t : (tensor<?x?x8xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  func.return %split : tensor<?x?x?x?xf32>
}

// -----

// Merging batch and seq: [batch*seq, 8] has one symbolic entry, the same element count as the
// input: -1. The product is computed (Gather, Mul), not copied: the analysis runs the kernels on
// symbols.

// CHECK-LABEL: func.func @rows
// CHECK:       %[[T:[0-9]+]] = ge.constant dense<[-1, 8]> : tensor<2xi64>
// CHECK-NEXT:  %flat = ge.reshape %x, %[[T]] : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
// REMARK: remark: fold-symbolic-shapes: applied relative-target on [ge.reshape]: ge.reshape: target [batch*seq, 8] is [-1, 8]
func.func @rows(%x: tensor<?x?x8xf32> {ge.name = "x", ge.dims = ["batch", "seq", ""]}) -> tensor<?x8xf32> {
  %s = ge.shape %x : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %i0 = ge.constant dense<0> : tensor<i64>
  %i1 = ge.constant dense<1> : tensor<i64>
  %b = ge.gather %s, %i0 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %q = ge.gather %s, %i1 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %n = ge.mul %b, %q : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %axis = ge.constant dense<[0]> : tensor<1xi64>
  %n1 = ge.unsqueeze %n, %axis : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %eight = ge.constant dense<[8]> : tensor<1xi64>
  %t = ge.concat %n1, %eight {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %flat = ge.reshape %x, %t : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  func.return %flat : tensor<?x8xf32>
}

// -----

// [seq, 8] from [batch, seq, 8] is valid only when batch is 1: -1 would accept any batch, so the
// target stays computed (the element counts differ), and so does one with two entries left.

// CHECK-LABEL: func.func @not_relative
// CHECK-NOT:   dense<[-1, 8]>
// CHECK:       %one = ge.reshape %x, %t1
// CHECK:       %two = ge.reshape %x, %t2
// REMARK: remark: fold-symbolic-shapes: rejected relative-target on [ge.reshape]: ge.reshape: target [seq, 8] is not expressible relative to its input [batch, seq, 8]
// REMARK: remark: fold-symbolic-shapes: rejected relative-target on [ge.reshape]: ge.reshape: target [seq, batch, 8] is not expressible relative to its input [batch, seq, 8]
func.func @not_relative(%x: tensor<?x?x8xf32> {ge.name = "x", ge.dims = ["batch", "seq", ""]}) -> (tensor<?x8xf32>, tensor<?x?x8xf32>) {
  %s = ge.shape %x : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %i1 = ge.constant dense<[1]> : tensor<1xi64>
  %i10 = ge.constant dense<[1, 0, 2]> : tensor<3xi64>
  %q = ge.gather %s, %i1 {axis = 0 : i64} : (tensor<3xi64>, tensor<1xi64>) -> tensor<1xi64>
  %eight = ge.constant dense<[8]> : tensor<1xi64>
  %t1 = ge.concat %q, %eight {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %one = ge.reshape %x, %t1 : (tensor<?x?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  %t2 = ge.gather %s, %i10 {axis = 0 : i64} : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %two = ge.reshape %x, %t2 : (tensor<?x?x8xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
  func.return %one, %two : tensor<?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Expand of a [batch, 1, 1, seq] mask to [batch, 4, 1, seq]: the symbolic entries are the
// input's, so 1 there. To [batch, seq, seq, seq] the second entry stretches a 1: it stays.

// CHECK-LABEL: func.func @mask
// CHECK:       %[[T:[0-9]+]] = ge.constant dense<[1, 4, 1, 1]> : tensor<4xi64>
// CHECK-NEXT:  %wide = ge.expand %m, %[[T]] : (tensor<?x1x1x?xf32>, tensor<4xi64>) -> tensor<?x4x1x?xf32>
// CHECK:       %square = ge.expand %m, %u
// REMARK: remark: fold-symbolic-shapes: applied relative-target on [ge.expand]: ge.expand: target [batch, 4, 1, seq] is [1, 4, 1, 1]
// REMARK: remark: fold-symbolic-shapes: rejected relative-target on [ge.expand]: ge.expand: target [batch, seq, seq, seq] is not expressible relative to its input [batch, 1, 1, seq]
func.func @mask(%m: tensor<?x1x1x?xf32> {ge.name = "m", ge.dims = ["batch", "", "", "seq"]}) -> (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) {
  %s = ge.shape %m : (tensor<?x1x1x?xf32>) -> tensor<4xi64>
  %k = ge.constant dense<[1, 4, 1, 1]> : tensor<4xi64>
  %t = ge.mul %s, %k : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %wide = ge.expand %m, %t : (tensor<?x1x1x?xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %i = ge.constant dense<[0, 3, 3, 3]> : tensor<4xi64>
  %u = ge.gather %s, %i {axis = 0 : i64} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %square = ge.expand %m, %u : (tensor<?x1x1x?xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  func.return %wide, %square : tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>
}

// -----

// A position-embedding slice [0, seq) of a 512-row table is seq rows only when seq is at most
// 512: with the range, the sum of token and position embeddings is [batch, seq, 8] and its split
// into heads is relative; without it, the slice's rows are unknown, so is the sum's seq dim, and
// the split's target (taken from the sum) still is relative to the sum.

// RANGE:       target [batch, seq, 2, 4] is [0, 0, 2, 4]
// RANGE-LABEL: func.func @positions
// RANGE-SAME:  ge.dim_ranges = {seq = array<i64: 1, 512>}
// RANGE:       ge.constant dense<[0, 0, 2, 4]>
// REMARK:      target [batch, ?.{{[0-9]+}}, 2, 4] is [0, 0, 2, 4]
// CHECK-LABEL: func.func @positions
// CHECK:       ge.constant dense<[0, 0, 2, 4]>
func.func @positions(%x: tensor<?x?x8xf32> {ge.name = "x", ge.dims = ["batch", "seq", ""]}, %table: tensor<512x8xf32>) -> tensor<?x?x?x?xf32> {
  %s = ge.shape %x : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %c0 = ge.constant dense<[0]> : tensor<1xi64>
  %c1 = ge.constant dense<[1]> : tensor<1xi64>
  %c2 = ge.constant dense<[2]> : tensor<1xi64>
  %seq = ge.slice %s, %c1, %c2, axes = %c0 : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rows = ge.slice %table, %c0, %seq, axes = %c0 : (tensor<512x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8xf32>
  %sum = ge.add %x, %rows : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> tensor<?x?x8xf32>
  %h = ge.shape %sum : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %b = ge.slice %h, %c0, %c2, axes = %c0 : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %heads = ge.constant dense<[2, 4]> : tensor<2xi64>
  %t = ge.concat %b, %heads {axis = 0 : i64} : (tensor<2xi64>, tensor<2xi64>) -> tensor<4xi64>
  %split = ge.reshape %sum, %t : (tensor<?x?x8xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  func.return %split : tensor<?x?x?x?xf32>
}
