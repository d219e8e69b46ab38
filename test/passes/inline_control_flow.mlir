// RUN: ge-opt %s -p inline-control-flow --split-input-file | filecheck %s
// RUN: ge-opt %s -p inline-control-flow --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// A constant condition: the then branch's body in the op's place, @pos and @neg gone; an If on a
// runtime condition stays, with its functions.

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %t = ge.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %r = ge.relu %x : (tensor<4xf32>) -> tensor<4xf32> loc("/pos/relu")
// CHECK-NEXT:    %z = ge.if @pos2, @neg2 (%c, %x)
// CHECK-NOT:     func.func @pos(
// CHECK-NOT:     func.func @neg(
// CHECK:         func.func @pos2
// CHECK:         func.func @neg2
// REMARK: remark: inline-control-flow: applied inline-if on [/known]: ge.if '/known': its condition is True, the then branch inlined
func.func @main(%x: tensor<4xf32>, %c: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = ge.constant dense<true> : tensor<i1>
  %y = ge.if @pos, @neg (%t, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("/known")
  %z = ge.if @pos2, @neg2 (%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("/unknown")
  func.return %y, %z : tensor<4xf32>, tensor<4xf32>
}
func.func @pos(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.relu %a : (tensor<4xf32>) -> tensor<4xf32> loc("/pos/relu")
  func.return %r : tensor<4xf32>
}
func.func @neg(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @pos2(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @neg2(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// The else branch returns a more precise type than the op's, which the function returns: kept
// (main's declared result must not change).

// CHECK-LABEL: func.func @main
// CHECK:         ge.if @same, @wide
// REMARK: remark: inline-control-flow: rejected inline-if on [/returned]: ge.if '/returned' kept: its result tensor<?xf32> is returned, and the branch gives tensor<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<?xf32> {
  %f = ge.constant dense<false> : tensor<i1>
  %y = ge.if @same, @wide (%f, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<?xf32> loc("/returned")
  func.return %y : tensor<?xf32>
}
func.func @same(%a: tensor<4xf32>) -> tensor<?xf32> {
  %c = ge.constant dense<[0, 1]> : tensor<2xi64>
  %r = ge.gather %a, %c : (tensor<4xf32>, tensor<2xi64>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
func.func @wide(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}
