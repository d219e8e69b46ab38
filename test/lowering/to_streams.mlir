// RUN: ge-opt %s -p lower-to-tasks,lower-to-streams --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'lower-to-tasks,lower-to-streams{single_stream=true mode=op}' --split-input-file | filecheck %s --check-prefix=SINGLE

// Two independent branches joined by an add: two streams, one event (the join waits for the
// branch on the other stream), one launch for the whole graph.
// CHECK:      func.func @branches{{.*}} attributes {stream.mode = "graph", stream.count = 2 : i64, stream.reuse_events = 0 : i64}
// CHECK:      %[[LEFT:.*]] = task.kernel "/left" {{.*}}stream = 0 : i64, launch = 0 : i64}
// CHECK:      %[[EV:.*]] = stream.record 0 on 0 after %[[LEFT]] : tensor<64x64xf32>
// CHECK-NEXT: task.kernel "/right" {{.*}}stream = 1 : i64, launch = 0 : i64}
// CHECK:      stream.wait %[[EV]] on 1
// CHECK-NEXT: task.kernel "/join" {{.*}}stream = 1 : i64
// CHECK-NOT:  stream.wait
// SINGLE:     attributes {stream.mode = "op", stream.count = 1 : i64, stream.reuse_events = 0 : i64}
// SINGLE-NOT: stream.record
// SINGLE:     task.kernel "/left" {{.*}}stream = 0 : i64, launch = 0 : i64}
// SINGLE:     task.kernel "/right" {{.*}}stream = 0 : i64, launch = 1 : i64}
// SINGLE:     task.kernel "/join" {{.*}}stream = 0 : i64, launch = 2 : i64}
func.func @branches(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = ge.relu %x : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("/left")
  %1 = ge.sigmoid %x : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("/right")
  %2 = ge.add %0, %1 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("/join")
  func.return %2 : tensor<64x64xf32>
}

// -----

// Subgraph sink: an AI CPU task (integer shape arithmetic) is a host boundary.
// RUN: ge-opt %s -p 'lower-to-tasks,lower-to-streams{mode=subgraph}' --split-input-file | filecheck %s --check-prefix=SUB
// CHECK-LABEL: func.func @subgraph
// SUB:      task.kernel "/v1" {{.*}}launch = 0 : i64}
// SUB:      task.kernel "/cpu" {{.*}}engine = "aicpu"{{.*}}launch = 1 : i64}
// SUB:      task.kernel "/v2" {{.*}}launch = 2 : i64}
func.func @subgraph(%x: tensor<8xf32>, %i: tensor<2xi64>) -> (tensor<8xf32>, tensor<2xi64>) {
  %0 = ge.relu %x : (tensor<8xf32>) -> tensor<8xf32> loc("/v1")
  %1 = ge.add %i, %i : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64> loc("/cpu")
  %2 = ge.sigmoid %0 : (tensor<8xf32>) -> tensor<8xf32> loc("/v2")
  func.return %2, %1 : tensor<8xf32>, tensor<2xi64>
}

// -----

// RUN: not ge-opt %s -p 'lower-to-tasks,lower-to-streams{mode=eager}' 2>&1 | filecheck %s --check-prefix=MODE
// MODE: ge-opt: error: lower-to-streams: mode 'eager' is not one of op, graph, subgraph
func.func @m(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = ge.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// Memory reuse is ordered: plan-memory gives /c the bytes of /a, which /b still reads. The reuse
// edge /b -> /c joins the data edges, so the path cover runs /a /b /c /d on one stream (without
// it /c would run on a second stream, overwriting /a while /b reads it, with no event between).
// RUN: ge-opt %s -p lower-to-tasks,plan-memory,lower-to-streams --split-input-file | filecheck %s --check-prefix=REUSE
// REUSE-LABEL: func.func @reuse
// REUSE-SAME:  stream.count = 1 : i64, stream.reuse_events = 0 : i64
// REUSE:       task.kernel "/a" {{.*}}offsets = array<i64: [[A:[0-9]+]]>, stream = 0
// REUSE:       task.kernel "/b" {{.*}}stream = 0
// REUSE:       task.kernel "/c" {{.*}}offsets = array<i64: [[A]]>, stream = 0
func.func @reuse(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = ge.relu %x : (tensor<1024xf32>) -> tensor<1024xf32> loc("/a")
  %1 = ge.softmax %0 : (tensor<1024xf32>) -> tensor<1024xf32> loc("/b")
  %2 = ge.softmax %x : (tensor<1024xf32>) -> tensor<1024xf32> loc("/c")
  %3 = ge.add %1, %2 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> loc("/d")
  func.return %3 : tensor<1024xf32>
}

// -----

// Issue 8: passes in the wrong order are one-line errors, not modules ge-run rejects later.
// RUN: not ge-opt %s -p 'lower-to-streams,lower-to-tasks' 2>&1 | filecheck %s --check-prefix=ORDER1
// ORDER1: ge-opt: error: lower-to-streams: @branches has 'ge.relu' outside a task.kernel (run lower-to-tasks first)
// RUN: not ge-opt %s -p 'lower-to-tasks,lower-to-streams,lower-to-tasks' 2>&1 | filecheck %s --check-prefix=ORDER2
// ORDER2: ge-opt: error: lower-to-tasks: @branches is already on streams
// RUN: not ge-opt %s -p 'lower-to-tasks,lower-to-streams,plan-memory' 2>&1 | filecheck %s --check-prefix=ORDER3
// ORDER3: ge-opt: error: plan-memory: @branches is already on streams (run plan-memory before lower-to-streams)
// RUN: not ge-opt %s -p 'lower-to-tasks,lower-to-streams,lower-to-streams' 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE: ge-opt: error: lower-to-streams: @branches already has streams
// RUN: not ge-opt %s -p 'lower-to-tasks,lower-to-streams{streams=-2}' 2>&1 | filecheck %s --check-prefix=NEG
// NEG: ge-opt: error: lower-to-streams: streams must be in 0..1024, got -2
func.func @m2(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = ge.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
