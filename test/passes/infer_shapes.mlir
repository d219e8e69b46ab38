// infer-shapes: re-runs every ge op's shape function in program order and refines `?` dims.
// The sidecar case needs a weights file beside a copy of this file.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'shape': np.array([4, -1], np.int64)})"
// RUN: ge-opt %t/m.mlir -p infer-shapes --split-input-file --verify-diagnostics | filecheck %s
// RUN: ge-opt %t/m.mlir -p infer-shapes --split-input-file --verify-diagnostics | filecheck %s --check-prefix=ERR
// RUN: ge-opt %t/m.mlir -p infer-shapes,infer-shapes --split-input-file --verify-diagnostics | filecheck %s
// RUN: not ge-opt %t/m.mlir -p infer-shapes --split-input-file 2>&1 | filecheck %s --check-prefix=FIRST
// RUN: ge-opt %t/m.mlir -p infer-shapes --split-input-file --verify-diagnostics --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// The user made the argument static: every `?` downstream becomes static, and so does the result.
// CHECK-LABEL: func.func @edited_argument(%x: tensor<2x8xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    ge.relu %x : (tensor<2x8xf32>) -> tensor<2x8xf32> loc("/relu")
// CHECK-NEXT:    ge.constant
// CHECK-NEXT:    ge.reshape {{.*}} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<4x4xf32> loc("/reshape")
// CHECK-NEXT:    ge.constant
// CHECK-NEXT:    ge.matmul {{.*}} : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32> loc("/matmul")
// CHECK-NEXT:    func.return {{.*}} : tensor<4x2xf32>
// REMARK: remark: infer-shapes: note refine on [func.func]: @edited_argument: 3 result types refined
func.func @edited_argument(%x: tensor<2x8xf32>) -> tensor<?x?xf32> {
  %0 = ge.relu %x : (tensor<2x8xf32>) -> tensor<?x?xf32> loc("/relu")
  %s = ge.constant dense<[4, -1]> : tensor<2xi64>
  %1 = ge.reshape %0, %s : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("/reshape")
  %w = ge.constant dense<1.0> : tensor<4x2xf32>
  %2 = ge.matmul %1, %w : (tensor<?x?xf32>, tensor<4x2xf32>) -> tensor<?x?xf32> loc("/matmul")
  func.return %2 : tensor<?x?xf32>
}

// -----

// Formats (encodings) stay as declared; a static dim is never made `?` again (the argument's `?`
// stays, the declared 4 stays).
// CHECK-LABEL: func.func @formats
// CHECK:         ge.conv {{.*}} -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>> loc("/conv")
// CHECK-NEXT:    ge.relu {{.*}} : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    ge.sigmoid %y : (tensor<?x8xf32>) -> tensor<4x8xf32> loc("/kept")
// CHECK-NEXT:    func.return {{.*}} : tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4x8xf32>
func.func @formats(%x: tensor<1x3x8x8xf32>, %y: tensor<?x8xf32>) -> (tensor<?x?x?x?xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4x8xf32>) {
  %w = ge.constant dense<0.5> : tensor<4x3x3x3xf32>
  %0 = ge.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x?x?x?xf32, #ge.fmt<NCHW, NC1HWC0>> loc("/conv")
  %1 = ge.relu %0 : (tensor<?x?x?x?xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<?x?x?x?xf32, #ge.fmt<NCHW, NC1HWC0>>
  %2 = ge.sigmoid %y : (tensor<?x8xf32>) -> tensor<4x8xf32> loc("/kept")
  func.return %1, %2 : tensor<?x?x?x?xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4x8xf32>
}

// -----

// Already precise: nothing changes (and no remark).
// CHECK-LABEL: func.func @exact(%x: tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    ge.tanh %x : (tensor<3xf32>) -> tensor<3xf32>
func.func @exact(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = ge.tanh %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// Shape operands held in the sidecar are visible too (the verifier sees inline constants only).
// CHECK-LABEL: func.func @sidecar_shape
// CHECK-NEXT:    ge.constant #ge.weight<"shape">
// CHECK-NEXT:    ge.reshape {{.*}} -> tensor<4x4xf32>
// CHECK-NEXT:    func.return {{.*}} : tensor<4x4xf32>
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @sidecar_shape(%x: tensor<16xf32>) -> tensor<?x?xf32> {
    %s = ge.constant #ge.weight<"shape"> : tensor<2xi64>
    %0 = ge.reshape %x, %s : (tensor<16xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    func.return %0 : tensor<?x?xf32>
  }
}

// -----

// A declared static dim the refined operands contradict is one error naming the op.
// ERR: ge.transpose '/t': result #0 is declared tensor<8x3xf32> but its operands now imply tensor<8x2xf32>
// FIRST: ge-opt: error: ge.transpose '/t': result #0 is declared tensor<8x3xf32> but its operands now imply tensor<8x2xf32>
func.func @contradiction(%x: tensor<2x8xf32>) -> tensor<8x3xf32> {
  %0 = ge.relu %x : (tensor<2x8xf32>) -> tensor<?x?xf32> loc("/relu")
  %1 = ge.transpose %0 {perm = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<8x3xf32> loc("/t")
  func.return %1 : tensor<8x3xf32>
}

// -----

// So is a shape function that fails once the operands are refined.
// ERR: ge.add '/add': shapes (2, 8) and ('?', 3) do not broadcast (dimension 1 of the result) (after refining its operand types)
func.func @no_longer_broadcasts(%x: tensor<2x8xf32>, %y: tensor<?x3xf32>) -> tensor<?x?xf32> {
  %0 = ge.relu %x : (tensor<2x8xf32>) -> tensor<?x?xf32>
  %1 = ge.add %0, %y : (tensor<?x?xf32>, tensor<?x3xf32>) -> tensor<?x?xf32> loc("/add")
  func.return %1 : tensor<?x?xf32>
}
