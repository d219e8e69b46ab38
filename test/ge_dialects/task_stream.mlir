// RUN: ge-opt %s | ge-opt | filecheck %s

// task.kernel and stream.record / stream.wait round-trip.
// CHECK-LABEL: func.func @main
// CHECK-SAME:  attributes {stream.mode = "graph", stream.count = 2 : i64}
// CHECK:       %0 = task.kernel "/relu" (%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=24 slabs=1", pattern = "relu", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
// CHECK-NEXT:  ^{{.*}}(%{{.*}}: tensor<2x3xf32>):
// CHECK-NEXT:    ge.relu
// CHECK-NEXT:    task.yield %{{.*}} : tensor<2x3xf32>
// CHECK-NEXT:  } loc("/relu")
// CHECK-NEXT:  %[[EV:.*]] = stream.record 0 on 0 after %0 : tensor<2x3xf32>
// CHECK:       stream.wait %[[EV]] on 1
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %0 = task.kernel "/relu" (%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=24 slabs=1", pattern = "relu", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a: tensor<2x3xf32>):
    %r = ge.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("/relu")
    task.yield %r : tensor<2x3xf32>
  } loc("/relu")
  %ev0 = stream.record 0 on 0 after %0 : tensor<2x3xf32>
  %1 = task.kernel "/sig" (%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "sigmoid", stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a: tensor<2x3xf32>):
    %r = ge.sigmoid %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    task.yield %r : tensor<2x3xf32>
  }
  stream.wait %ev0 on 1
  %2 = task.kernel "/add" (%0, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "add", stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    %r = ge.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    task.yield %r : tensor<2x3xf32>
  }
  func.return %2 : tensor<2x3xf32>
}
