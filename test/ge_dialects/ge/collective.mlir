// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s
// RUN: ge-opt %s -p fold-constants,merge-constants,cse,dce | filecheck %s --check-prefix=KEPT

// ge.hcom_all_reduce round-trips, fused (several operands) or not; no cleanup pass folds a
// collective of constants, merges two alike ones or drops one whose result is unused.

// CHECK-LABEL: func.func @fused
func.func @fused(%a: tensor<4x5xf32>, %b: tensor<5xf32>) -> (tensor<4x5xf32>, tensor<5xf32>) {
  // CHECK-NEXT: %r0, %r1 = ge.hcom_all_reduce %a, %b {reduction = "sum", rank_size = 8 : i64, fusion = 1 : i64, fusion_id = 3 : i64} : (tensor<4x5xf32>, tensor<5xf32>) -> (tensor<4x5xf32>, tensor<5xf32>)
  %r0, %r1 = ge.hcom_all_reduce %a, %b {reduction = "sum", rank_size = 8 : i64, fusion = 1 : i64, fusion_id = 3 : i64} : (tensor<4x5xf32>, tensor<5xf32>) -> (tensor<4x5xf32>, tensor<5xf32>)
  func.return %r0, %r1 : tensor<4x5xf32>, tensor<5xf32>
}

// KEPT-LABEL: func.func @kept
// CHECK-LABEL: func.func @kept
func.func @kept() -> tensor<2xf16> {
  %c = ge.constant dense<1.0> : tensor<2xf16>
  // KEPT: ge.hcom_all_reduce %{{.*}} {reduction = "max", rank_size = 2 : i64, group = "dp"}
  // KEPT-NEXT: ge.hcom_all_reduce %{{.*}} {reduction = "max", rank_size = 2 : i64, group = "dp"}
  // KEPT-NEXT: ge.hcom_all_reduce %{{.*}} {reduction = "prod", rank_size = 4 : i64}
  // KEPT-NEXT: func.return
  %0 = ge.hcom_all_reduce %c {reduction = "max", rank_size = 2 : i64, group = "dp"} : (tensor<2xf16>) -> tensor<2xf16>
  %1 = ge.hcom_all_reduce %c {reduction = "max", rank_size = 2 : i64, group = "dp"} : (tensor<2xf16>) -> tensor<2xf16>
  %2 = ge.hcom_all_reduce %c {reduction = "prod", rank_size = 4 : i64} : (tensor<2xf16>) -> tensor<2xf16>
  func.return %0 : tensor<2xf16>
}
