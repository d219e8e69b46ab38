// RUN: ge-opt %s -p cse,dce | filecheck %s

// Kernels, records and waits have device effects: cse does not merge two identical kernels and
// dce keeps a kernel whose result nobody reads, and every record and wait.
// CHECK:      %0 = task.kernel "/a"
// CHECK:      %1 = task.kernel "/a"
// CHECK:      %ev = stream.record 0 on 0 after %1
// CHECK:      task.kernel "/unused"
// CHECK:      stream.wait %ev on 1
// CHECK:      task.kernel "/b"
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> attributes {stream.count = 2 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 0 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  %1 = task.kernel "/a" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 0 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  %ev = stream.record 0 on 0 after %1 : tensor<2xf32>
  %2 = task.kernel "/unused" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 1 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  stream.wait %ev on 1
  %3 = task.kernel "/b" (%0, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "add", stream = 1 : i64} {
  ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
    %r = ge.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %3 : tensor<2xf32>
}
