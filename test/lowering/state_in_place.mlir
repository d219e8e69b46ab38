// RUN: ge-opt %s -p lower-to-tasks,plan-memory --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory{state_in_place=false}' --split-input-file | filecheck %s --check-prefix=COPY
// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory,lower-to-streams{streams=2}' --split-input-file | filecheck %s --check-prefix=STREAMS

// A momentum step: the update writes both new values over their variables (no buffer of their
// own: io is only %x and %y, 512 bytes); /forward reads w's old value on the other stream, so
// the write-after-read edge /forward -> /update is an event.
// CHECK:      task.memory = {{{.*}}io = 512 : i64, alignment = 512 : i64, state = 512 : i64, state_in_place = 2 : i64, state_copies_avoided = 512 : i64}
// CHECK:      task.kernel "/forward" {{.*}}pattern = "mul", offsets = array<i64: {{[0-9]+}}>} {
// CHECK:      task.kernel "/update" {{.*}}offsets = array<i64: -1, -1>, state_alias = ["w", "w.momentum"]
// COPY:       task.memory = {{{.*}}io = 1024 : i64, alignment = 512 : i64, state = 512 : i64, state_in_place = 0 : i64, state_copies_avoided = 0 : i64}
// COPY-NOT:   state_alias
// STREAMS:      %f = task.kernel "/forward" {{.*}}stream = 1 : i64
// STREAMS:      %ev = stream.record 0 on 1 after %f
// STREAMS:      stream.wait %ev on 0
// STREAMS-NEXT: task.kernel "/update" {{.*}}state_alias = ["w", "w.momentum"], stream = 0 : i64
func.func @step(%x: tensor<64xf32>) -> (tensor<64xf32> {ge.name = "y"}, tensor<64xf32> {ge.name = "w", ge.state = "w"}, tensor<64xf32> {ge.name = "w.momentum", ge.state = "w.momentum"}) {
  %w = ge.variable "w" : tensor<64xf32> loc("w")
  %m = ge.variable "w.momentum" : tensor<64xf32> loc("w.momentum")
  %g = ge.mul %x, %x : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/grad")
  %f = ge.mul %x, %w : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32> loc("/forward")
  %y = ge.relu %f : (tensor<64xf32>) -> tensor<64xf32> loc("/head")
  %nw, %nm = ge.apply_momentum %w, %m, %g {lr = 0.1 : f32, momentum = 0.9 : f32} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) loc("/update")
  func.return %y, %nw, %nm : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// /late reads w's old value after /update in program order (through a second ge.variable of
// the key: one storage): no forward edge can order it, so w's new value keeps a buffer of its own;
// the momentum slot is still written in place.
// CHECK:      task.memory = {{{.*}}state_in_place = 1 : i64, state_copies_avoided = 256 : i64}
// CHECK:      task.kernel "/update" {{.*}}state_alias = ["", "w.momentum"]
// STREAMS:    task.kernel "/update" {{.*}}state_alias = ["", "w.momentum"]
func.func @late_reader(%g: tensor<64xf32>) -> (tensor<64xf32> {ge.name = "y"}, tensor<64xf32> {ge.name = "w", ge.state = "w"}, tensor<64xf32> {ge.name = "w.momentum", ge.state = "w.momentum"}) {
  %w = ge.variable "w" : tensor<64xf32> loc("w")
  %m = ge.variable "w.momentum" : tensor<64xf32> loc("w.momentum")
  %nw, %nm = ge.apply_momentum %w, %m, %g {lr = 0.1 : f32, momentum = 0.9 : f32} : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) loc("/update")
  %w2 = ge.variable "w" : tensor<64xf32> loc("w")
  %y = ge.relu %w2 : (tensor<64xf32>) -> tensor<64xf32> loc("/late")
  func.return %y, %nw, %nm : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}

// -----

// A writer that reads the variable but is not elementwise (a transpose reads element (j, i) to
// write (i, j)) may not write over it; a variable returned as it was read must keep its old value.
// CHECK:      task.memory = {{{.*}}state_in_place = 0 : i64, state_copies_avoided = 0 : i64}
// CHECK-NOT:  state_alias
func.func @not_in_place(%x: tensor<8x8xf32>) -> (tensor<8x8xf32> {ge.name = "a", ge.state = "a"}, tensor<8x8xf32> {ge.name = "b", ge.state = "b"}, tensor<8x8xf32> {ge.name = "old_b"}) {
  %a = ge.variable "a" : tensor<8x8xf32> loc("a")
  %b = ge.variable "b" : tensor<8x8xf32> loc("b")
  %t = ge.transpose %a {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("/transpose")
  %nb = ge.add %b, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/add")
  func.return %t, %nb, %b : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
