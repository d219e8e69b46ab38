// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s
// A value is used only after its definition (ge_dialects/ssa_order.py). xDSL's parser takes a use
// above the definition as a forward reference and its verifier let it through; ge-run then failed
// inside the interpreter (KeyError) or the scheduler (fuzz ge-run 002532, 003118).

// Two lines of a valid function swapped (fuzz ge-run 002532, ir:line-swap).
func.func @swapped(%x: tensor<2xf32>) -> tensor<2xf32> {
  %1 = ge.tanh %0 : (tensor<2xf32>) -> tensor<2xf32>
  %0 = ge.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}
// CHECK: ssa_order_invalid.mlir:8:3: use of %0 before its definition (defined at {{.*}}ssa_order_invalid.mlir:9:3)

// -----

// A task reading its own result (fuzz ge-run 003118, ir:ssa): the scheduler saw it start before itself.
func.func @own_result(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = task.kernel "/relu" (%0) : (tensor<2xf32>) -> tensor<2xf32> attributes {engine = "vector", block_dim = 1 : i64, workspace = 0 : i64, tiling = "", pattern = "relu"} {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    task.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: ssa_order_invalid.mlir:18:3: use of %0 before its definition (defined at {{.*}}ssa_order_invalid.mlir:18:3)

// -----

// Uses across regions are refused by xDSL already (operations with regions are IsolatedFromAbove
// here); test_ir_text.py checks ssa_order's nesting rules on IR built directly.
// Values used after their definitions, block arguments anywhere in their block: accepted.
func.func @valid(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = ge.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  %1 = ge.add %x, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}
// CHECK: func.func @valid
// CHECK: ge.add %x, %0
