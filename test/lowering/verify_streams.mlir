// RUN: ge-opt %s -p verify-streams --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// The stream verifier on hand-written modules: each case breaks one rule and the error names
// the tasks; @reuse_ordered is the race of @reuse_race with the missing event added.
// CHECK: verify-streams: @reuse_race: task '/c' (stream 1) overwrites '/a' result 0 (bytes 4096..8192) while task '/b' (stream 0) may still access it: no stream order or event between them
func.func @reuse_race(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 4096>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %1 = task.kernel "/b" (%0) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "pow", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %2 = task.kernel "/c" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "pow", offsets = array<i64: 4096>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %ev = stream.record 0 on 1 after %2 : tensor<1024xf32>
  stream.wait %ev on 0
  %3 = task.kernel "/d" (%1, %2) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "add", offsets = array<i64: -1>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>, %a1: tensor<1024xf32>):
    %r = ge.add %a0, %a1 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  func.return %3 : tensor<1024xf32>
}

// -----

// (its module is printed after every error: its CHECK is at the end of the file)
func.func @reuse_ordered(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 4096>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %1 = task.kernel "/b" (%0) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "pow", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %eb = stream.record 1 on 0 after %1 : tensor<1024xf32>
  stream.wait %eb on 1
  %2 = task.kernel "/c" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "pow", offsets = array<i64: 4096>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %ev = stream.record 0 on 1 after %2 : tensor<1024xf32>
  stream.wait %ev on 0
  %3 = task.kernel "/d" (%1, %2) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "add", offsets = array<i64: -1>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>, %a1: tensor<1024xf32>):
    %r = ge.add %a0, %a1 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  func.return %3 : tensor<1024xf32>
}

// -----

// CHECK: verify-streams: @data_race: task '/d' (stream 0) reads the result of '/c' (stream 1) with no stream order or event between them
func.func @data_race(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 4096>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %1 = task.kernel "/b" (%0) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "pow", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %2 = task.kernel "/c" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "pow", offsets = array<i64: 8192>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %3 = task.kernel "/d" (%1, %2) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "add", offsets = array<i64: -1>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>, %a1: tensor<1024xf32>):
    %r = ge.add %a0, %a1 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  func.return %3 : tensor<1024xf32>
}

// -----

// Latest-record semantics: the wait for the first record of id 0 would bind to the second.
// CHECK: verify-streams: @id_reuse: event id 0 is recorded after '/b' before the wait of its previous record (after '/a') is issued
func.func @id_reuse(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %e0 = stream.record 0 on 0 after %0 : tensor<1024xf32>
  %1 = task.kernel "/b" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 4096>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %e1 = stream.record 0 on 1 after %1 : tensor<1024xf32>
  stream.wait %e0 on 1
  %2 = task.kernel "/c" (%0) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 8192>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %e2 = stream.record 1 on 1 after %2 : tensor<1024xf32>
  stream.wait %e1 on 0
  stream.wait %e2 on 0
  %3 = task.kernel "/d" (%1, %2) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "add", offsets = array<i64: -1>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>, %a1: tensor<1024xf32>):
    %r = ge.add %a0, %a1 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  func.return %3 : tensor<1024xf32>
}

// -----

// CHECK: verify-streams: @unwaited: stream.record 0 after '/a' is waited 0 times; a flag-like event must be waited exactly once
func.func @unwaited(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %e0 = stream.record 0 on 0 after %0 : tensor<1024xf32>
  %1 = task.kernel "/b" (%0) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 4096>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %2 = task.kernel "/c" (%1) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %3 = task.kernel "/d" (%2) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: -1>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  func.return %3 : tensor<1024xf32>
}

// -----

// CHECK: verify-streams: @late_record: stream.record 0 on 0 follows '/a', but the latest task of stream 0 before it is '/b'
func.func @late_record(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %1 = task.kernel "/b" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 4096>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %e0 = stream.record 0 on 0 after %0 : tensor<1024xf32>
  stream.wait %e0 on 1
  %2 = task.kernel "/c" (%0) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 8192>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %3 = task.kernel "/d" (%1, %2) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "add", offsets = array<i64: -1>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>, %a1: tensor<1024xf32>):
    %r = ge.add %a0, %a1 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  func.return %3 : tensor<1024xf32>
}

// -----

// CHECK: verify-streams: @dangling_wait: stream.wait on 1 for the event after '/a' has no task of stream 1 after it
func.func @dangling_wait(%x: tensor<1024xf32>) -> tensor<1024xf32> attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %e0 = stream.record 0 on 0 after %0 : tensor<1024xf32>
  %1 = task.kernel "/b" (%0) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 4096>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %2 = task.kernel "/c" (%1) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %3 = task.kernel "/d" (%2) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: -1>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  stream.wait %e0 on 1
  func.return %3 : tensor<1024xf32>
}

// -----

// Flag semantics: the second record of id 0 (after '/e' on stream 0) may fire before the first
// wait on id 0 (before '/c' on stream 1) consumed the first record: nothing orders '/c' before '/e'.
// CHECK: verify-streams: @id_flag: event id 0 is recorded after task '/e' (stream 0), which is not ordered after task '/c' (stream 1) that the previous wait on it precedes
func.func @id_flag(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %0 = task.kernel "/a" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %e0 = stream.record 0 on 0 after %0 : tensor<1024xf32>
  %1 = task.kernel "/b" (%x) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 4096>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  stream.wait %e0 on 1
  %2 = task.kernel "/c" (%0, %1) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: -1>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>, %a1: tensor<1024xf32>):
    %r = ge.add %a0, %a1 : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %3 = task.kernel "/e" (%0) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 8192>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  %e1 = stream.record 0 on 0 after %3 : tensor<1024xf32>
  stream.wait %e1 on 1
  %4 = task.kernel "/f" (%3) : (tensor<1024xf32>) -> tensor<1024xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: -1>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%a0: tensor<1024xf32>):
    %r = ge.relu %a0 : (tensor<1024xf32>) -> tensor<1024xf32>
    task.yield %r : tensor<1024xf32>
  }
  func.return %2, %4 : tensor<1024xf32>, tensor<1024xf32>
}

// The ordered variant passes and is printed unchanged.
// CHECK: func.func @reuse_ordered
// CHECK: stream.wait %eb on 1
// CHECK-NEXT: task.kernel "/c"
