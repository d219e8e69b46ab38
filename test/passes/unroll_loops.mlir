// RUN: ge-opt %s -p 'inline-control-flow{unroll_limit=4}' --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'inline-control-flow{unroll_limit=4}' --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: ge-opt %s -p 'inline-control-flow' --split-input-file | filecheck %s --check-prefix=OFF

// A loop of a constant trip count (3 <= unroll_limit) whose condition stays true: three copies of
// the body, each with its iteration number, the carried value threaded through, the scan output
// stacked; the body function is gone and @main's result types follow the stacked scan.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<4xf32>, tensor<3x4xf32>)
// CHECK:         %[[I0:.*]] = ge.constant dense<0> : tensor<i64> loc("/loop/iteration0")
// CHECK-NEXT:    %[[F0:.*]] = ge.cast %[[I0]] {{.*}} loc("/body/cast/iteration0")
// CHECK-NEXT:    %[[W0:.*]] = ge.add %x, %[[F0]] {{.*}} loc("/body/add/iteration0")
// CHECK:         %[[W1:.*]] = ge.add %[[W0]], {{.*}} loc("/body/add/iteration1")
// CHECK:         %[[W2:.*]] = ge.add %[[W1]], {{.*}} loc("/body/add/iteration2")
// CHECK:         ge.concat {{.*}} -> tensor<3x4xf32> loc("/loop/scan0")
// CHECK:         func.return %[[W2]], {{.*}} : tensor<4xf32>, tensor<3x4xf32>
// CHECK-NOT:     func.func @body
// REMARK: remark: inline-control-flow: applied unroll-loop on [/loop]: ge.loop '/loop': unrolled 3 iterations
// OFF: ge.loop @body
func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32>, tensor<?x4xf32>) {
  %trip = ge.constant dense<3> : tensor<i64>
  %cond = ge.constant dense<true> : tensor<i1>
  %y, %s = ge.loop @body (%trip, %cond, %x) {carried = 1} : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>) loc("/loop")
  func.return %y, %s : tensor<4xf32>, tensor<?x4xf32>
}
func.func @body(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>, tensor<4xf32>) {
  %f = ge.cast %i {to = 1 : i64} : (tensor<i64>) -> tensor<f32> loc("/body/cast")
  %w = ge.add %v, %f : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32> loc("/body/add")
  func.return %c, %w, %w : tensor<i1>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Kept: more iterations than unroll_limit, a trip count known only at run time, a body that
// computes its next condition.

// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: ge.loop
// REMARK: remark: inline-control-flow: rejected unroll-loop on [/long]: ge.loop '/long' kept: its trip count 5 is not in 1..4 (unroll_limit)
// REMARK: remark: inline-control-flow: rejected unroll-loop on [/runtime]: ge.loop '/runtime' kept: its trip count is not a constant
// REMARK: remark: inline-control-flow: rejected unroll-loop on [/while]: ge.loop '/while' kept: its body computes the next condition
func.func @kept(%x: tensor<4xf32> {ge.name = "x"}, %n: tensor<i64> {ge.name = "n"}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %five = ge.constant dense<5> : tensor<i64>
  %two = ge.constant dense<2> : tensor<i64>
  %cond = ge.constant dense<true> : tensor<i1>
  %a = ge.loop @step (%five, %cond, %x) {carried = 1} : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("/long")
  %b = ge.loop @step (%n, %cond, %x) {carried = 1} : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("/runtime")
  %c = ge.loop @positive (%two, %cond, %x) {carried = 1} : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("/while")
  func.return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
func.func @step(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>) {
  %w = ge.neg %v : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c, %w : tensor<i1>, tensor<4xf32>
}
func.func @positive(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>) {
  %w = ge.neg %v : (tensor<4xf32>) -> tensor<4xf32>
  %s = ge.reduce_sum %w {keepdims = 0 : i64} : (tensor<4xf32>) -> tensor<f32>
  %z = ge.constant dense<0.0> : tensor<f32>
  %p = ge.greater %s, %z : (tensor<f32>, tensor<f32>) -> tensor<i1>
  func.return %p, %w : tensor<i1>, tensor<4xf32>
}
