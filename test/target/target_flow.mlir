// The target travels in the IR: fuse-ops{target=ascend910} writes it, the lowering (no target
// options) follows it, and ge-run (no --target) simulates the 910.
// RUN: ge-opt %s -p 'fuse-ops{target=ascend910}' -o %t.fused.mlir
// RUN: filecheck %s --check-prefix=FUSED < %t.fused.mlir
// RUN: ge-opt %t.fused.mlir -p 'lower-to-tasks,plan-memory,lower-to-streams' -o %t.low.mlir
// RUN: filecheck %s --check-prefix=LOW < %t.low.mlir
// RUN: ge-run %t.low.mlir --timing-only | filecheck %s --check-prefix=SIM
// RUN: ge-run %t.low.mlir --timing-only --target ascend910 | filecheck %s --check-prefix=GIVEN

// Without any target, the first target-using pass writes the default.
// RUN: ge-opt %s -p 'lower-to-tasks' | filecheck %s --check-prefix=DEFAULT

// FUSED:      builtin.module attributes {ge.target = #ge.target<"ascend910">}
// The 4 MiB relu is 256 slabs of 16 KiB: one per core up to the 910's 32 (the 910B would take 48).
// LOW:        builtin.module attributes {ge.target = #ge.target<"ascend910">
// LOW:        task.kernel "/relu" {{.*}}block_dim = 32 : i64
// SIM:        simulating target ascend910 (from the module)
// SIM-NEXT:   target ascend910, mode graph
// GIVEN:      simulating target ascend910 (from --target)
// DEFAULT:    builtin.module attributes {ge.target = #ge.target<"ascend910b">}
// DEFAULT:    task.kernel "/relu" {{.*}}block_dim = 48 : i64
func.func @main(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %0 = ge.relu %x : (tensor<1048576xf32>) -> tensor<1048576xf32> loc("/relu")
  func.return %0 : tensor<1048576xf32>
}
