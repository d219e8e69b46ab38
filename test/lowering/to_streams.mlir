// RUN: ge-opt %s -p lower-to-tasks,lower-to-streams --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'lower-to-tasks,lower-to-streams{single_stream=true mode=op}' --split-input-file | filecheck %s --check-prefix=SINGLE

// Two independent branches joined by an add: two streams, one event (the join waits for the
// branch on the other stream), one launch for the whole graph.
// CHECK:      func.func @branches{{.*}} attributes {stream.mode = "graph", stream.count = 2 : i64}
// CHECK:      task.kernel "/left" {{.*}}stream = 0 : i64, launch = 0 : i64}
// CHECK:      stream.record 0 on 0
// CHECK-NEXT: task.kernel "/right" {{.*}}stream = 1 : i64, launch = 0 : i64}
// CHECK:      stream.wait 0 on 1
// CHECK-NEXT: task.kernel "/join" {{.*}}stream = 1 : i64
// CHECK-NOT:  stream.wait
// SINGLE:     attributes {stream.mode = "op", stream.count = 1 : i64}
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
