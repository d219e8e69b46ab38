// RUN: ge-opt %s -p partition-dynamic | filecheck %s
// RUN: ge-opt %s -p partition-dynamic | ge-opt | filecheck %s
// RUN: ge-opt %s -p partition-dynamic --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: not ge-opt %s -p lower-to-tasks 2>&1 | filecheck %s --check-prefix=MIXED
// RUN: ge-opt %s -p partition-dynamic,lower-to-tasks,plan-memory,lower-to-streams | filecheck %s --check-prefix=LOWERED

// The device ops before the If (the gate) and after it (the tail) become known subgraphs, called
// by @main, which keeps the host's work: the calls, the If, the return. A constant a subgraph reads
// is cloned into it. Without the partition, lowering refuses the function in one line.

// CHECK:      func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> tensor<4xf32> {
// CHECK-NEXT:   %[[G:.*]] = func.call @main_sub_0_know(%x) : (tensor<4xf32>) -> tensor<i1> loc("main_sub_0_know")
// CHECK-NEXT:   %y = ge.if @pos, @neg (%[[G]], %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("choose")
// CHECK-NEXT:   %[[T:.*]] = func.call @main_sub_1_know(%y) : (tensor<4xf32>) -> tensor<4xf32> loc("main_sub_1_know")
// CHECK-NEXT:   func.return %[[T]] : tensor<4xf32>
// CHECK:      func.func @main_sub_0_know(%{{.*}}: tensor<4xf32> {ge.name = "in0"}) -> (tensor<i1> {ge.name = "out0"}) {
// CHECK:        ge.reduce_sum
// CHECK:        ge.greater
// CHECK:      func.func @main_sub_1_know(%{{.*}}: tensor<4xf32> {ge.name = "in0"}) -> (tensor<4xf32> {ge.name = "out0"}) {
// CHECK:        %two = ge.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:   ge.mul
// CHECK:      func.func @pos(
// CHECK:      func.func @neg(
// REMARK: remark: partition-dynamic: applied partition on [func.func]: @main: 2 known subgraphs (@main_sub_0_know, @main_sub_1_know) around its control flow
// MIXED: ge-opt: error: lower-to-tasks: @main: ge.if 'choose' decides at run time which function runs; run partition-dynamic first (the host runs the control flow between sunk subgraphs)
// LOWERED:      func.func @main(
// LOWERED-NEXT:   func.call @main_sub_0_know
// LOWERED:      func.func @main_sub_0_know({{.*}} attributes {stream.mode = "graph"
// LOWERED:      func.func @main_sub_1_know({{.*}} attributes {stream.mode = "graph"
// LOWERED:      func.func @pos({{.*}} attributes {stream.mode = "graph"
func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> tensor<4xf32> {
  %s = ge.reduce_sum %x {keepdims = 0 : i64} : (tensor<4xf32>) -> tensor<f32> loc("sum")
  %z = ge.constant dense<0.0> : tensor<f32>
  %c = ge.greater %s, %z : (tensor<f32>, tensor<f32>) -> tensor<i1> loc("gate")
  %y = ge.if @pos, @neg (%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("choose")
  %two = ge.constant dense<2.0> : tensor<f32>
  %t = ge.mul %y, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("tail")
  func.return %t : tensor<4xf32>
}
func.func @pos(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @neg(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
