// RUN: ge-opt %s -p partition-dynamic,sink-control-flow | filecheck %s
// RUN: ge-opt %s -p partition-dynamic,sink-control-flow | ge-opt | filecheck %s
// RUN: ge-opt %s -p partition-dynamic,sink-control-flow --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: ge-opt %s -p partition-dynamic,sink-control-flow,lower-to-tasks,plan-memory,lower-to-streams,verify-streams | filecheck %s --check-prefix=LOWERED

// An If and a Loop of known shapes become label tasks: the If a switch on its condition between
// the branches' labels, which go to a join; the Loop a head that calls its condition function
// (made here: i < trip and cond, i + 1) and switches between the exit and the body, whose label
// goes back to the head. @counted's Loop is a `for` loop (its condition true on entry and returned
// unchanged by the body): its head decides on the count alone. @dynamic has dims known only when
// it runs: it stays on the host.

// CHECK:      func.func @main(%x: tensor<4xf32> {ge.name = "x"}, %n: tensor<i64> {ge.name = "n"}) -> tensor<4xf32> {
// CHECK:        %[[G:.*]] = func.call @main_sub_0_know(%x)
// CHECK-NEXT:   stream.label_switch %[[G]] : tensor<i1> [^[[ELSE:.*]], ^[[THEN:.*]]]
// CHECK-NEXT: ^[[ELSE]]:
// CHECK-NEXT:   %[[E:.*]] = func.call @neg(%x)
// CHECK-NEXT:   stream.label_goto ^[[JOIN:.*]](%[[E]] : tensor<4xf32>)
// CHECK-NEXT: ^[[THEN]]:
// CHECK-NEXT:   %[[T:.*]] = func.call @pos(%x)
// CHECK-NEXT:   stream.label_goto ^[[JOIN]](%[[T]] : tensor<4xf32>)
// CHECK-NEXT: ^[[JOIN]](%[[Y:.*]]: tensor<4xf32>):
// CHECK:        %[[ZERO:.*]] = ge.constant dense<0> : tensor<i64>
// CHECK-NEXT:   stream.label_goto ^[[HEAD:.*]](%[[ZERO]] : tensor<i64>, %{{.*}} : tensor<i1>, %[[Y]] : tensor<4xf32>)
// CHECK-NEXT: ^[[HEAD]](%[[I:.*]]: tensor<i64>, %[[C:.*]]: tensor<i1>, %[[V:.*]]: tensor<4xf32>):
// CHECK-NEXT:   %[[GO:.*]], %[[NEXT:.*]] = func.call @main_loop_0_cond(%[[I]], %n, %[[C]])
// CHECK-NEXT:   stream.label_switch %[[GO]] : tensor<i1> [^[[EXIT:.*]], ^[[BODY:.*]]]
// CHECK-NEXT: ^[[BODY]]:
// CHECK-NEXT:   %[[C2:.*]], %[[V2:.*]] = func.call @step(%[[I]], %[[C]], %[[V]])
// CHECK-NEXT:   stream.label_goto ^[[HEAD]](%[[NEXT]] : tensor<i64>, %[[C2]] : tensor<i1>, %[[V2]] : tensor<4xf32>)
// CHECK-NEXT: ^[[EXIT]]:
// CHECK-NEXT:   %[[R:.*]] = func.call @main_sub_1_know(%[[V]])
// CHECK-NEXT:   func.return %[[R]] : tensor<4xf32>
// CHECK:      func.func @main_loop_0_cond(%{{.*}}: tensor<i64> {ge.name = "in0"}, %{{.*}}: tensor<i64> {ge.name = "in1"}, %{{.*}}: tensor<i1> {ge.name = "in2"}) -> (tensor<i1> {ge.name = "out0"}, tensor<i64> {ge.name = "out1"}) {
// CHECK-NEXT:   ge.less
// CHECK-NEXT:   ge.logical_and
// CHECK-NEXT:   ge.constant dense<1> : tensor<i64>
// CHECK-NEXT:   ge.add
// CHECK:      func.func @counted(%x: tensor<4xf32> {ge.name = "x"}, %n: tensor<i64> {ge.name = "n"}) -> tensor<4xf32> {
// CHECK:        stream.label_goto ^[[CHEAD:.*]](%{{.*}} : tensor<i64>, %x : tensor<4xf32>)
// CHECK-NEXT: ^[[CHEAD]](%[[CI:.*]]: tensor<i64>, %[[CV:.*]]: tensor<4xf32>):
// CHECK-NEXT:   %[[CGO:.*]], %[[CNEXT:.*]] = func.call @counted_loop_0_cond(%[[CI]], %n) : (tensor<i64>, tensor<i64>) -> (tensor<i1>, tensor<i64>)
// CHECK:        %{{.*}}, %[[CV2:.*]] = func.call @same(%[[CI]], %true, %[[CV]])
// CHECK-NEXT:   stream.label_goto ^[[CHEAD]](%[[CNEXT]] : tensor<i64>, %[[CV2]] : tensor<4xf32>)
// CHECK:      func.func @counted_loop_0_cond(
// CHECK-NEXT:   ge.less
// CHECK-NEXT:   ge.constant dense<1> : tensor<i64>
// CHECK-NEXT:   ge.add
// CHECK:      func.func @dynamic(
// CHECK:        ge.if @pos_any, @neg_any

// REMARK-DAG: remark: sink-control-flow: applied labels on [func.func]: @main: 1 If and 1 Loop decided on the device (label tasks)
// REMARK-DAG: remark: sink-control-flow: applied labels on [func.func]: @counted: 0 If and 1 Loop decided on the device (label tasks)
// REMARK-DAG: remark: sink-control-flow: missed host on [func.func]: @dynamic stays on the host: ge.if 'choose_any' has a result of unknown dims

// LOWERED:      func.func @main(
// LOWERED:        stream.label_switch
// LOWERED:      func.func @main_loop_0_cond({{.*}} attributes {stream.mode = "graph"
func.func @main(%x: tensor<4xf32> {ge.name = "x"}, %n: tensor<i64> {ge.name = "n"}) -> tensor<4xf32> {
  %s = ge.reduce_sum %x {keepdims = 0 : i64} : (tensor<4xf32>) -> tensor<f32> loc("sum")
  %z = ge.constant dense<0.0> : tensor<f32>
  %c = ge.greater %s, %z : (tensor<f32>, tensor<f32>) -> tensor<i1> loc("gate")
  %y = ge.if @pos, @neg (%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("choose")
  %true = ge.constant dense<true> : tensor<i1>
  %v = ge.loop @step (%n, %true, %y) {carried = 1 : i64} : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("repeat")
  %two = ge.constant dense<2.0> : tensor<f32>
  %t = ge.mul %v, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("tail")
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
func.func @step(%i: tensor<i64>, %c: tensor<i1>, %a: tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>) {
  %r = ge.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
  %s = ge.reduce_sum %r {keepdims = 0 : i64} : (tensor<4xf32>) -> tensor<f32> loc("step_sum")
  %z = ge.constant dense<0.0> : tensor<f32>
  %k = ge.greater %s, %z : (tensor<f32>, tensor<f32>) -> tensor<i1> loc("step_gate")
  func.return %k, %r : tensor<i1>, tensor<4xf32>
}
func.func @counted(%x: tensor<4xf32> {ge.name = "x"}, %n: tensor<i64> {ge.name = "n"}) -> tensor<4xf32> {
  %true = ge.constant dense<true> : tensor<i1>
  %v = ge.loop @same (%n, %true, %x) {carried = 1 : i64} : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("count")
  func.return %v : tensor<4xf32>
}
func.func @same(%i: tensor<i64>, %c: tensor<i1>, %a: tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>) {
  %r = ge.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c, %r : tensor<i1>, tensor<4xf32>
}
func.func @dynamic(%x: tensor<?xf32> {ge.name = "x"}, %c: tensor<i1> {ge.name = "c"}) -> tensor<?xf32> {
  %y = ge.if @pos_any, @neg_any (%c, %x) : (tensor<i1>, tensor<?xf32>) -> tensor<?xf32> loc("choose_any")
  func.return %y : tensor<?xf32>
}
func.func @pos_any(%a: tensor<?xf32>) -> tensor<?xf32> {
  %r = ge.relu %a : (tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
func.func @neg_any(%a: tensor<?xf32>) -> tensor<?xf32> {
  %r = ge.neg %a : (tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
