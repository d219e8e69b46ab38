// RUN: ge-opt %s -p verify-streams --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// The stream verifier on in-place state writes (state_alias, lowering/memory/state.py): /update
// writes w over its variable, which /forward reads on the other stream. @war_race drops the
// event lower-to-streams put between them (@war_ordered, which passes); the other cases name a
// variable the function does not have, or read the old value after the write in program order.
// CHECK: verify-streams: @war_race: task '/update' (stream 0) overwrites variable 'w' in place while task '/forward' (stream 1) may still read its old value: no stream order or event between them
func.func @war_race(%x: tensor<64xf32>) -> (tensor<64xf32> {ge.name = "y"}, tensor<64xf32> {ge.name = "w", ge.state = "w"}, tensor<64xf32> {ge.name = "w.momentum", ge.state = "w.momentum"}) attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %w = ge.variable "w" : tensor<64xf32> loc("w")
  %m = ge.variable "w.momentum" : tensor<64xf32> loc("w.momentum")
  %g = task.kernel "/grad" (%x) : (tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "mul", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>):
    %g_1 = ge.mul %0, %0 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/grad")
    task.yield %g_1 : tensor<64xf32>
  } loc("/grad")
  %f = task.kernel "/forward" (%x, %w) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "mul", offsets = array<i64: 512>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>, %1: tensor<64xf32>):
    %f_1 = ge.mul %0, %1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/forward")
    task.yield %f_1 : tensor<64xf32>
  } loc("/forward")
  %y = task.kernel "/head" (%f) : (tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "relu", offsets = array<i64: -1>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>):
    %y_1 = ge.relu %0 : (tensor<64xf32>) -> tensor<64xf32> loc("/head")
    task.yield %y_1 : tensor<64xf32>
  } loc("/head")
  %nw, %nm = task.kernel "/update" (%w, %m, %g) : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=512 slabs=1", pattern = "apply_momentum", offsets = array<i64: -1, -1>, state_alias = ["w", "w.momentum"], stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>, %1: tensor<64xf32>, %2: tensor<64xf32>):
    %nw_1, %nm_1 = ge.apply_momentum %0, %1, %2 {lr = 1.000000e-01 : f32, momentum = 9.000000e-01 : f32} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) loc("/update")
    task.yield %nw_1, %nm_1 : tensor<64xf32>, tensor<64xf32>
  } loc("/update")
  func.return %y, %nw, %nm : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// (its module is printed after every error: its CHECK is at the end of the file)
func.func @war_ordered(%x: tensor<64xf32>) -> (tensor<64xf32> {ge.name = "y"}, tensor<64xf32> {ge.name = "w", ge.state = "w"}, tensor<64xf32> {ge.name = "w.momentum", ge.state = "w.momentum"}) attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %w = ge.variable "w" : tensor<64xf32> loc("w")
  %m = ge.variable "w.momentum" : tensor<64xf32> loc("w.momentum")
  %g = task.kernel "/grad" (%x) : (tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "mul", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>):
    %g_1 = ge.mul %0, %0 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/grad")
    task.yield %g_1 : tensor<64xf32>
  } loc("/grad")
  %f = task.kernel "/forward" (%x, %w) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "mul", offsets = array<i64: 512>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>, %1: tensor<64xf32>):
    %f_1 = ge.mul %0, %1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/forward")
    task.yield %f_1 : tensor<64xf32>
  } loc("/forward")
  %ev = stream.record 0 on 1 after %f : tensor<64xf32>
  %y = task.kernel "/head" (%f) : (tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "relu", offsets = array<i64: -1>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>):
    %y_1 = ge.relu %0 : (tensor<64xf32>) -> tensor<64xf32> loc("/head")
    task.yield %y_1 : tensor<64xf32>
  } loc("/head")
  stream.wait %ev on 0
  %nw, %nm = task.kernel "/update" (%w, %m, %g) : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=512 slabs=1", pattern = "apply_momentum", offsets = array<i64: -1, -1>, state_alias = ["w", "w.momentum"], stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>, %1: tensor<64xf32>, %2: tensor<64xf32>):
    %nw_1, %nm_1 = ge.apply_momentum %0, %1, %2 {lr = 1.000000e-01 : f32, momentum = 9.000000e-01 : f32} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) loc("/update")
    task.yield %nw_1, %nm_1 : tensor<64xf32>, tensor<64xf32>
  } loc("/update")
  func.return %y, %nw, %nm : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// CHECK: verify-streams: @no_variable: task '/update' result 1 is written in place over variable 'w.slot', which the function does not read
func.func @no_variable(%x: tensor<64xf32>) -> (tensor<64xf32> {ge.name = "y"}, tensor<64xf32> {ge.name = "w", ge.state = "w"}, tensor<64xf32> {ge.name = "w.momentum", ge.state = "w.momentum"}) attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %w = ge.variable "w" : tensor<64xf32> loc("w")
  %m = ge.variable "w.momentum" : tensor<64xf32> loc("w.momentum")
  %g = task.kernel "/grad" (%x) : (tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "mul", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>):
    %g_1 = ge.mul %0, %0 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/grad")
    task.yield %g_1 : tensor<64xf32>
  } loc("/grad")
  %f = task.kernel "/forward" (%x, %w) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "mul", offsets = array<i64: 512>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>, %1: tensor<64xf32>):
    %f_1 = ge.mul %0, %1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/forward")
    task.yield %f_1 : tensor<64xf32>
  } loc("/forward")
  %ev = stream.record 0 on 1 after %f : tensor<64xf32>
  %y = task.kernel "/head" (%f) : (tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "relu", offsets = array<i64: -1>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>):
    %y_1 = ge.relu %0 : (tensor<64xf32>) -> tensor<64xf32> loc("/head")
    task.yield %y_1 : tensor<64xf32>
  } loc("/head")
  stream.wait %ev on 0
  %nw, %nm = task.kernel "/update" (%w, %m, %g) : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=512 slabs=1", pattern = "apply_momentum", offsets = array<i64: -1, -1>, state_alias = ["w", "w.slot"], stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>, %1: tensor<64xf32>, %2: tensor<64xf32>):
    %nw_1, %nm_1 = ge.apply_momentum %0, %1, %2 {lr = 1.000000e-01 : f32, momentum = 9.000000e-01 : f32} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) loc("/update")
    task.yield %nw_1, %nm_1 : tensor<64xf32>, tensor<64xf32>
  } loc("/update")
  func.return %y, %nw, %nm : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// CHECK: verify-streams: @late_reader: task '/late' reads variable 'w' after '/update' overwrites it in place
func.func @late_reader(%x: tensor<64xf32>) -> (tensor<64xf32> {ge.name = "y"}, tensor<64xf32> {ge.name = "w", ge.state = "w"}, tensor<64xf32> {ge.name = "w.momentum", ge.state = "w.momentum"}) attributes {stream.mode = "graph", stream.count = 2 : i64} {
  %w = ge.variable "w" : tensor<64xf32> loc("w")
  %m = ge.variable "w.momentum" : tensor<64xf32> loc("w.momentum")
  %g = task.kernel "/grad" (%x) : (tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "mul", offsets = array<i64: 0>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>):
    %g_1 = ge.mul %0, %0 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/grad")
    task.yield %g_1 : tensor<64xf32>
  } loc("/grad")
  %f = task.kernel "/forward" (%x, %w) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "mul", offsets = array<i64: 512>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>, %1: tensor<64xf32>):
    %f_1 = ge.mul %0, %1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/forward")
    task.yield %f_1 : tensor<64xf32>
  } loc("/forward")
  %ev = stream.record 0 on 1 after %f : tensor<64xf32>
  %y = task.kernel "/head" (%f) : (tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=256 slabs=1", pattern = "relu", offsets = array<i64: -1>, stream = 1 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>):
    %y_1 = ge.relu %0 : (tensor<64xf32>) -> tensor<64xf32> loc("/head")
    task.yield %y_1 : tensor<64xf32>
  } loc("/head")
  stream.wait %ev on 0
  %nw, %nm = task.kernel "/update" (%w, %m, %g) : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "bytes=512 slabs=1", pattern = "apply_momentum", offsets = array<i64: -1, -1>, state_alias = ["w", "w.momentum"], stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>, %1: tensor<64xf32>, %2: tensor<64xf32>):
    %nw_1, %nm_1 = ge.apply_momentum %0, %1, %2 {lr = 1.000000e-01 : f32, momentum = 9.000000e-01 : f32} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) loc("/update")
    task.yield %nw_1, %nm_1 : tensor<64xf32>, tensor<64xf32>
  } loc("/update")
  %l = task.kernel "/late" (%w) : (tensor<64xf32>) -> tensor<64xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu", offsets = array<i64: 1024>, stream = 0 : i64, launch = 0 : i64} {
  ^bb0(%0: tensor<64xf32>):
    %l_1 = ge.relu %0 : (tensor<64xf32>) -> tensor<64xf32>
    task.yield %l_1 : tensor<64xf32>
  }
  func.return %y, %nw, %nm : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// CHECK: func.func @war_ordered
