// RUN: ge-opt %s -p lower-to-tasks,plan-memory --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory{reuse=false}' --split-input-file | filecheck %s --check-prefix=NOREUSE

// A chain of 4 KiB tensors: /a and /b are dead by the time /c and /d write, so two slots suffice
// (the elementwise tasks even write in place); the graph output is not in the pool (-1).
// CHECK:      builtin.module attributes {task.memory = {pool = 4096 : i64, no_reuse = 12288 : i64, lower_bound = 4096 : i64
// CHECK:      task.kernel "/a" {{.*}}offsets = array<i64: 0>
// CHECK:      task.kernel "/b" {{.*}}offsets = array<i64: 0>
// CHECK:      task.kernel "/c" {{.*}}offsets = array<i64: 0>
// CHECK:      task.kernel "/d" {{.*}}offsets = array<i64: -1>
// NOREUSE:    builtin.module attributes {task.memory = {pool = 12288 : i64, no_reuse = 12288 : i64
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = ge.relu %x : (tensor<1024xf32>) -> tensor<1024xf32> loc("/a")
  %1 = ge.sigmoid %0 : (tensor<1024xf32>) -> tensor<1024xf32> loc("/b")
  %2 = ge.tanh %1 : (tensor<1024xf32>) -> tensor<1024xf32> loc("/c")
  %3 = ge.relu %2 : (tensor<1024xf32>) -> tensor<1024xf32> loc("/d")
  func.return %3 : tensor<1024xf32>
}


