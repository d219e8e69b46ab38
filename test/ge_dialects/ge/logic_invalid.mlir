// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @bool_result(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: ge.greater: result #0 has type tensor<3xf32> but its operands imply tensor<3xi1>
  %0 = ge.greater %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @connective_of_numbers(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {
  // CHECK: ge.logical_and: operand 'a' has element type f32; expected one of i1
  %0 = ge.logical_and %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @compare_bools(%a: tensor<3xi1>, %b: tensor<3xi1>) -> tensor<3xi1> {
  // CHECK: ge.less: operand 'a' has element type i1; expected one of f32
  %0 = ge.less %a, %b : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @not_of_number(%a: tensor<3xi32>) -> tensor<3xi32> {
  // CHECK: ge.logical_not: operand 'x' has element type i32; expected one of i1
  %0 = ge.logical_not %a : (tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}
