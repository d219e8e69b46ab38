// relax-reuse refuses a function that is not a planned task sequence (the checks it shares with
// plan-memory, lowering/plan_memory.py task_sequence_pool, plus its own: every task has offsets).
// RUN: not ge-opt %s -p relax-reuse 2>&1 | filecheck %s --check-prefix=OUTSIDE
// OUTSIDE: ge-opt: error: relax-reuse: @raw has 'ge.relu' outside a task.kernel (run lower-to-tasks first)
// RUN: ge-opt %S/relax_reuse_invalid.mlir -p lower-to-tasks,plan-memory | sed 's/, offsets = array<i64: 0>//' \
// RUN:   | not ge-opt -p relax-reuse 2>&1 | filecheck %s --check-prefix=NOOFFSETS
// NOOFFSETS: ge-opt: error: relax-reuse: @chain: task '/a' has no offsets (run plan-memory first)
builtin.module attributes {task.memory = {pool = 0 : i64}} {
  func.func @raw(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    %0 = ge.relu %x : (tensor<1024xf32>) -> tensor<1024xf32> loc("/a")
    func.return %0 : tensor<1024xf32>
  }
}
