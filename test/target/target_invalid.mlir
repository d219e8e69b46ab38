// An explicit target option that names another chip than the module's ge.target is one line, exit 1.
// RUN: not ge-opt %s -p 'fuse-ops{target=ascend910}' 2>&1 | filecheck %s --check-prefix=FUSE
// RUN: not ge-opt %s -p 'lower-to-tasks{target=ascend910}' 2>&1 | filecheck %s --check-prefix=TASKS
// RUN: not ge-opt %s -p 'plan-memory{target=ascend910}' 2>&1 | filecheck %s --check-prefix=PLAN
// RUN: not ge-opt %s -p 'lower-to-streams{target=ascend910}' 2>&1 | filecheck %s --check-prefix=STREAMS
// RUN: not ge-opt %s -p 'relax-reuse{target=ascend910}' 2>&1 | filecheck %s --check-prefix=RELAX
// RUN: not ge-opt %s -p 'ge-optimize{level=1 target=ascend910}' 2>&1 | filecheck %s --check-prefix=OPT
// RUN: not ge-opt %s --ge-option ge.socVersion=Ascend910 2>&1 | filecheck %s --check-prefix=OPT
// FUSE:    ge-opt: error: fuse-ops: target=ascend910 contradicts the module's target ascend910b
// TASKS:   ge-opt: error: lower-to-tasks: target=ascend910 contradicts the module's target ascend910b
// PLAN:    ge-opt: error: plan-memory: target=ascend910 contradicts the module's target ascend910b
// STREAMS: ge-opt: error: lower-to-streams: target=ascend910 contradicts the module's target ascend910b
// RELAX:   ge-opt: error: relax-reuse: target=ascend910 contradicts the module's target ascend910b
// OPT:     ge-opt: error: ge-optimize: target=ascend910 contradicts the module's target ascend910b

// The same target as the module's is no contradiction.
// RUN: ge-opt %s -p 'fuse-ops{target=ascend910b}' | filecheck %s --check-prefix=SAME
// SAME:    builtin.module attributes {ge.target = #ge.target<"ascend910b">}

// A module lowered for one chip is not simulated on another.
// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory,lower-to-streams' -o %t.mlir
// RUN: not ge-run %t.mlir --timing-only --target ascend910 2>&1 | filecheck %s --check-prefix=RUN910
// RUN910:  ge-run: error: target=ascend910 contradicts the module's target ascend910b
builtin.module attributes {ge.target = #ge.target<"ascend910b">} {
  func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
    %0 = ge.relu %x : (tensor<64xf32>) -> tensor<64xf32> loc("/relu")
    func.return %0 : tensor<64xf32>
  }
}
