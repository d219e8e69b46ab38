// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @engine(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "gpu", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu"} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': unknown engine 'gpu'; expected one of cube, vector, cube+vector, aicpu, dma

// -----

func.func @block_dim(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 0 : i64, workspace = 0 : i64, tiling = "", pattern = "relu"} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': block_dim must be at least 1, got 0

// -----

func.func @workspace(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = -4 : i64, tiling = "", pattern = "relu"} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': workspace must not be negative

// -----

func.func @offsets_count(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 0, 512>} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': 2 offsets for 1 results

// -----

func.func @offsets_value(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: -7>} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': offsets must be >= 0 (or -1 for an unplanned graph output)

// -----

func.func @stream(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = -1 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': stream must not be negative

// -----

func.func @yield_types(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu"} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.cast %a {to = 7 : i64} : (tensor<2xf32>) -> tensor<2xi64>
    task.yield %r : tensor<2xi64>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': task.yield types must match the result types

// -----

func.func @negative_event() {
  "stream.record"() <{event = -1 : i64, stream = 0 : i64}> : () -> ()
  func.return
}
// CHECK: stream.record: event and stream ids must not be negative
