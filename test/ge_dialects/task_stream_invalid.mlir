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
// CHECK: task.kernel 'k': block_dim must be in 1..65535, got 0

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
// CHECK: task.kernel 'k': stream must not be negative, got -1

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

func.func @negative_event(%x: tensor<2xf32>) -> tensor<2xf32> attributes {stream.count = 1 : i64} {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 0 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  %e = "stream.record"(%0) <{event = -1 : i64, stream = 0 : i64}> : (tensor<2xf32>) -> !stream.event
  func.return %0 : tensor<2xf32>
}
// CHECK: stream.record -1 on 0: event id must not be negative

// -----

// Issue 8: a task on stream 1000000 in a function with two streams.
func.func @stream_beyond_count(%x: tensor<2xf32>) -> tensor<2xf32> attributes {stream.count = 2 : i64} {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 1000000 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': stream 1000000 is not below the function's stream.count = 2

// -----

// Issue 8: a negative stream count.
func.func @negative_count(%x: tensor<2xf32>) -> tensor<2xf32> attributes {stream.count = -3 : i64} {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 0 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': the function's stream.count must be at least 1, got -3

// -----

// Issue 8: block_dim = 10^12 used to verify and then keep the simulator busy for minutes.
func.func @huge_block_dim(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1000000000000 : i64, workspace = 0 : i64, tiling = "", pattern = "relu"} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': block_dim must be in 1..65535, got 1000000000000

// -----

func.func @record_on_other_stream(%x: tensor<2xf32>) -> tensor<2xf32> attributes {stream.count = 2 : i64} {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 0 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  %e = stream.record 0 on 1 after %0 : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: stream.record 0 on 1: follows task 'k' on stream 0, not on the record's stream

// -----

func.func @record_after_argument(%x: tensor<2xf32>) -> tensor<2xf32> attributes {stream.count = 2 : i64} {
  %e = stream.record 0 on 1 after %x : tensor<2xf32>
  func.return %x : tensor<2xf32>
}
// CHECK: stream.record 0 on 1: 'after' must be a result of a task.kernel

// -----

func.func @record_beyond_count(%x: tensor<2xf32>) -> tensor<2xf32> attributes {stream.count = 1 : i64} {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 0 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  %e = stream.record 0 on 7 after %0 : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK: stream.record 0 on 7: stream 7 is not below the function's stream.count = 1

// -----

func.func @wait_on_own_stream(%x: tensor<2xf32>) -> tensor<2xf32> attributes {stream.count = 2 : i64} {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 0 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  %e = stream.record 0 on 0 after %0 : tensor<2xf32>
  stream.wait %e on 0
  %1 = task.kernel "k2" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", stream = 0 : i64} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %1 : tensor<2xf32>
}
// CHECK: stream.wait on 0: waits for an event recorded on its own stream

// -----

func.func @state_alias(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "k" (%x) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", state_alias = ["w", ""]} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: task.kernel 'k': 2 state_alias keys for 1 results
