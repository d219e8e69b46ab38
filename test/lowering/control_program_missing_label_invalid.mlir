// RUN: not ge-opt %s 2>&1 | filecheck %s

// A switch to a label the function does not have: one line naming it, nothing printed.
// CHECK: ge-opt: error: {{.*}}missing_label_invalid.mlir:{{.*}} region ends with missing block declarations for block(s) missing
// CHECK-NOT: func.func
func.func @missing(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  stream.label_switch %c : tensor<i1> [^else, ^missing]
^else:
  func.return %x : tensor<4xf32>
}
