// RUN: ge-opt %s | filecheck %s
// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s -p 'lower-to-tasks' 2>&1 | filecheck %s --check-prefix=LOWER

// ge.if and ge.loop print as they parse and round-trip. @main holds only host work (control flow,
// the constant it reads, the return): lowering leaves it to the host and lowers the functions it
// runs (test/lowering/partition_dynamic.mlir makes such host programs).

// CHECK:      %y = ge.if @pos, @"choose/else" (%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %s, %steps = ge.loop @acc (%n, %t, %x, %y) {carried = 1 : i64} : (tensor<i64>, tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>)
// LOWER:      func.func @main
// LOWER-NEXT:   ge.if @pos, @"choose/else"
// LOWER:        ge.loop @acc
// LOWER:      func.func @pos
// LOWER-NEXT:   task.kernel "ge.relu"
func.func @main(%c: tensor<i1>, %x: tensor<4xf32>, %n: tensor<i64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<?x4xf32>) {
  %y = ge.if @pos, @"choose/else" (%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32> loc("choose")
  %t = ge.constant dense<true> : tensor<i1>
  %s, %steps = ge.loop @acc (%n, %t, %x, %y) {carried = 1 : i64} : (tensor<i64>, tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<?x4xf32>)
  func.return %y, %s, %steps : tensor<4xf32>, tensor<4xf32>, tensor<?x4xf32>
}
func.func @pos(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @"choose/else"(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @acc(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>, tensor<4xf32>) {
  %w = ge.add %v, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c, %w, %w : tensor<i1>, tensor<4xf32>, tensor<4xf32>
}
