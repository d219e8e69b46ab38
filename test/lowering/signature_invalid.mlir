// A graph takes and returns tensors only: the passes that make device buffers of main's signature
// refuse another type, naming the argument or result.
// RUN: not ge-opt %s -p lower-to-tasks 2>&1 | filecheck %s --check-prefix=TASKS
// TASKS: ge-opt: error: lower-to-tasks: @main's argument 'n' has type i32; a graph takes and returns tensors only (a scalar is a rank-0 tensor such as tensor<i32>)
// RUN: not ge-opt %s -p plan-memory 2>&1 | filecheck %s --check-prefix=PLAN
// PLAN: ge-opt: error: plan-memory: @main's argument 'n' has type i32; a graph takes and returns tensors only
// RUN: not ge-opt %s -p ge-optimize,lower-to-tasks 2>&1 | filecheck %s --check-prefix=OPTIMIZED
// OPTIMIZED: ge-opt: error: lower-to-tasks: @main's argument 'n' has type i32
func.func @main(%x: tensor<1024xf32>, %n: i32 {ge.name = "n"}) -> tensor<1024xf32> {
  %0 = ge.relu %x : (tensor<1024xf32>) -> tensor<1024xf32> loc("/a")
  func.return %0 : tensor<1024xf32>
}
