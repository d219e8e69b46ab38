// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory,lower-to-streams{streams=2}' | filecheck %s --check-prefix=STRICT
// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory,relax-reuse{streams=2},lower-to-streams{streams=2}' | filecheck %s --check-prefix=NOBYTES
// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory,relax-reuse{streams=2 budget_mib=1},lower-to-streams{streams=2}' | filecheck %s --check-prefix=RELAXED
// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory,relax-reuse{streams=2 budget_mib=0.5 rounds=0},lower-to-streams{streams=2}' | filecheck %s --check-prefix=NOROUNDS
// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory,relax-reuse{streams=1 budget_mib=1},lower-to-streams{streams=1}' | filecheck %s --check-prefix=ONE

// Two branches: /a -> /b and /c, joined by /d. plan-memory puts /c on /a's bytes (/a is dead by
// then in program order), so /a and /b must finish before /c writes: lower-to-streams runs all
// four on one stream.
// STRICT:      task.memory = {pool = 32768 : i64
// STRICT:      stream.count = 1 : i64, stream.reuse_events = 0 : i64
// STRICT:      task.kernel "/a" {{.*}}offsets = array<i64: 16384>, stream = 0
// STRICT:      task.kernel "/c" {{.*}}offsets = array<i64: 16384>, stream = 0

// Keeping /a and /c apart needs a third 16 KiB slot: with no budget the reuse stays.
// NOBYTES:     task.memory = {pool = 32768 : i64, {{.*}}given_up = 0 : i64, given_up_bytes = 0 : i64, relaxed_for = 2 : i64
// NOBYTES:     stream.count = 1 : i64

// With 1 MiB to spend the pair is given up for 16 KiB: /c runs on its own stream, beside /a and /b.
// RELAXED:     task.memory = {pool = 49152 : i64, {{.*}}given_up = 1 : i64, given_up_bytes = 16384 : i64, relaxed_for = 2 : i64, latency_ns = {{[0-9]+}} : i64, latency_before_ns = {{[0-9]+}} : i64
// RELAXED:     stream.count = 2 : i64, stream.reuse_events = 0 : i64
// RELAXED:     task.kernel "/a" {{.*}}offsets = array<i64: 16384>, stream = 0
// RELAXED:     task.kernel "/b" {{.*}}stream = 0
// RELAXED:     stream.record 0 on 0
// RELAXED:     task.kernel "/c" {{.*}}offsets = array<i64: 32768>, stream = 1
// RELAXED:     stream.wait
// RELAXED:     task.kernel "/d" {{.*}}stream = 1

// rounds=0: only the starting plan is scored.
// NOROUNDS:    task.memory = {pool = 32768 : i64, {{.*}}given_up = 0 : i64

// One stream: nothing runs side by side, so no reuse costs time.
// ONE:         task.memory = {pool = 32768 : i64, {{.*}}given_up = 0 : i64, given_up_bytes = 0 : i64, relaxed_for = 1 : i64
func.func @branches(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = ge.relu %x : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("/a")
  %1 = ge.softmax %0 {axis = -1 : i64} : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("/b")
  %2 = ge.sigmoid %x : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("/c")
  %3 = ge.add %1, %2 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("/d")
  func.return %3 : tensor<64x64xf32>
}
