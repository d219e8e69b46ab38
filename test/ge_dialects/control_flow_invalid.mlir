// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A condition that is no bool.
func.func @main(%c: tensor<f32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ge.if @id, @id (%c, %x) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @id(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}
// CHECK: ge.if: the condition must be a tensor<i1>, got tensor<f32>

// -----

// A branch that is not a function of the module.
func.func @main(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ge.if @id, @missing (%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @id(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}
// CHECK: ge.if: @missing is not a function of the module

// -----

// A branch that takes other operands.
func.func @main(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ge.if @id, @wide (%c, %x) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @id(%a: tensor<4xf32>) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}
func.func @wide(%a: tensor<8xf32>) -> tensor<4xf32> {
  %r = ge.constant dense<0.0> : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK: ge.if @wide takes (tensor<8xf32>), the op gives it (tensor<4xf32>)

// -----

// A branch whose result the op's type does not hold (a known dim it does not return).
func.func @main(%c: tensor<i1>, %x: tensor<?xf32>) -> tensor<4xf32> {
  %y = ge.if @id, @id (%c, %x) : (tensor<i1>, tensor<?xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @id(%a: tensor<?xf32>) -> tensor<?xf32> {
  func.return %a : tensor<?xf32>
}
// CHECK: ge.if @id returns (tensor<?xf32>), the op needs (tensor<4xf32>)

// -----

// A loop whose trip count is no int64.
func.func @main(%n: tensor<i32>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ge.loop @step (%n, %c, %x) {carried = 1 : i64} : (tensor<i32>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @step(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>) {
  func.return %c, %v : tensor<i1>, tensor<4xf32>
}
// CHECK: ge.loop: the trip count and the condition must be tensor<i64> and tensor<i1>, got tensor<i32> and tensor<i1>

// -----

// A body that returns no condition first.
func.func @main(%n: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ge.loop @step (%n, %c, %x) {carried = 1 : i64} : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @step(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  func.return %v, %v : tensor<4xf32>, tensor<4xf32>
}
// CHECK: ge.loop @step returns (tensor<4xf32>, tensor<4xf32>), the op needs (tensor<i1>, tensor<4xf32>)

// -----

// A scan output of rank 0 (the iterations are stacked along a new first axis).
func.func @main(%n: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %y, %s = ge.loop @step (%n, %c, %x) {carried = 1 : i64} : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>)
  func.return %y, %s : tensor<4xf32>, tensor<f32>
}
func.func @step(%i: tensor<i64>, %c: tensor<i1>, %v: tensor<4xf32>) -> (tensor<i1>, tensor<4xf32>) {
  func.return %c, %v : tensor<i1>, tensor<4xf32>
}
// CHECK: ge.loop: a scan output must be a tensor of rank >= 1 (its iterations stacked)

// -----

// A gear function whose argument the inputs' types do not hold.
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = ge.gears [@g0] (%x) {sizes = ["n=2"]} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
func.func @g0(%a: tensor<2x5xf32>) -> tensor<2x4xf32> {
  %r = ge.constant dense<0.0> : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
// CHECK: ge.gears @g0 takes (tensor<2x5xf32>), which the inputs' types do not hold

// -----

// Gears and sizes in different numbers.
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = ge.gears [@g0] (%x) {sizes = ["n=2", "n=3"]} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
func.func @g0(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  func.return %a : tensor<2x4xf32>
}
// CHECK: ge.gears: 1 gears and 2 sizes; one of each per gear

// -----

// A fallback (hybrid mode) whose argument the inputs' types do not hold.
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = ge.gears [@g0] else @dyn (%x) {sizes = ["n=2"]} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
func.func @g0(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  func.return %a : tensor<2x4xf32>
}
func.func @dyn(%a: tensor<?x5xf32>) -> tensor<?x4xf32> {
  %r = ge.constant dense<0.0> : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
// CHECK: ge.gears @dyn takes (tensor<?x5xf32>), which the inputs' types do not hold
