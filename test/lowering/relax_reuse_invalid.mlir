// RUN: not ge-opt %s -p 'lower-to-tasks,plan-memory,relax-reuse{budget_mib=-1}' 2>&1 | filecheck %s --check-prefix=BUDGET
// BUDGET: ge-opt: error: relax-reuse: budget_mib must be >= 0, got -1
// RUN: not ge-opt %s -p 'lower-to-tasks,plan-memory,relax-reuse{rounds=17}' 2>&1 | filecheck %s --check-prefix=ROUNDS
// ROUNDS: ge-opt: error: relax-reuse: rounds must be in 0..16, got 17
// RUN: not ge-opt %s -p 'lower-to-tasks,plan-memory,relax-reuse{streams=-1}' 2>&1 | filecheck %s --check-prefix=STREAMS
// STREAMS: ge-opt: error: relax-reuse: streams must be in 0..
// RUN: not ge-opt %s -p 'lower-to-tasks,relax-reuse' 2>&1 | filecheck %s --check-prefix=UNPLANNED
// UNPLANNED: ge-opt: error: relax-reuse: the module has no task.memory pool (run plan-memory first)
// RUN: not ge-opt %s -p 'lower-to-tasks,plan-memory,lower-to-streams,relax-reuse' 2>&1 | filecheck %s --check-prefix=STREAMED
// STREAMED: ge-opt: error: relax-reuse: @chain is already on streams (run relax-reuse before lower-to-streams)
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = ge.relu %x : (tensor<1024xf32>) -> tensor<1024xf32> loc("/a")
  %1 = ge.sigmoid %0 : (tensor<1024xf32>) -> tensor<1024xf32> loc("/b")
  func.return %1 : tensor<1024xf32>
}
