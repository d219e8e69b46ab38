// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @reduction(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.hcom_all_reduce: reduction must be one of sum, prod, max, min, got 'mean'
  %0 = ge.hcom_all_reduce %a {reduction = "mean", rank_size = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @group_of_one(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.hcom_all_reduce: rank_size must be at least 2 (a group of one has nothing to reduce), got 1
  %0 = ge.hcom_all_reduce %a {reduction = "sum", rank_size = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @mixed_dtypes(%a: tensor<4xf32>, %b: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf16>) {
  // CHECK: ge.hcom_all_reduce: operand #1 is f16 but operand #0 is f32: one fused collective reduces one dtype
  %0, %1 = ge.hcom_all_reduce %a, %b {reduction = "sum", rank_size = 2 : i64} : (tensor<4xf32>, tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf16>)
  func.return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// -----

func.func @bool(%a: tensor<4xi1>) -> tensor<4xi1> {
  // CHECK: ge.hcom_all_reduce: operand #0 has element type i1, which HCCL does not reduce
  %0 = ge.hcom_all_reduce %a {reduction = "max", rank_size = 2 : i64} : (tensor<4xi1>) -> tensor<4xi1>
  func.return %0 : tensor<4xi1>
}

// -----

func.func @result_type(%a: tensor<4xf32>) -> tensor<2xf32> {
  // CHECK: ge.hcom_all_reduce: result #0 has type tensor<2xf32> but its operands imply tensor<4xf32>
  %0 = ge.hcom_all_reduce %a {reduction = "sum", rank_size = 2 : i64} : (tensor<4xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @fusion(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ge.hcom_all_reduce: fusion must be 0, 1 or 2, got 7
  %0 = ge.hcom_all_reduce %a {reduction = "sum", rank_size = 2 : i64, fusion = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  // CHECK: ge.hcom_all_reduce: operand #0 must have a static shape, got tensor<?xf32>
  %0 = ge.hcom_all_reduce %a {reduction = "sum", rank_size = 2 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}
