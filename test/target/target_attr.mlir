// #ge.target prints as it parses, and a pass without a target option keeps the module's.
// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s -p lower-to-tasks | filecheck %s --check-prefix=KEPT
// CHECK: builtin.module attributes {ge.target = #ge.target<"ascend910">} {
// KEPT:  builtin.module attributes {ge.target = #ge.target<"ascend910">} {
// KEPT:  task.kernel "/relu" {{.*}}block_dim = 1 : i64
builtin.module attributes {ge.target = #ge.target<"ascend910">} {
  func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
    %0 = ge.relu %x : (tensor<64xf32>) -> tensor<64xf32> loc("/relu")
    func.return %0 : tensor<64xf32>
  }
}
