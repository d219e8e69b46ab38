// A parameter marker that cannot hold: one line naming file:line:col (or the op) and the reason.
// RUN: ge-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s

func.func @inline_without_key() -> tensor<2xf32> {
  // CHECK: constant_parameter_invalid.mlir:[[# @LINE + 2]]:30
  // CHECK: an inline parameter names its key: ge.constant parameter<"key"> dense<...>
  %0 = ge.constant parameter dense<1.0> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @integer_parameter() -> tensor<2xi64> {
  // CHECK: parameter 'ids' must be a float tensor, got tensor<2xi64>
  %0 = ge.constant parameter<"ids"> dense<1> : tensor<2xi64>
  func.return %0 : tensor<2xi64>
}

// -----

func.func @empty_key() -> tensor<2xf32> {
  // CHECK: the parameter key is empty
  %0 = ge.constant parameter<""> dense<1.0> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @key_not_the_weight_key() -> tensor<2xf32> {
  // CHECK: parameter 'b' is stored as weight 'a'; a sidecar parameter is keyed by its weight key
  %0 = ge.constant parameter<"b"> #ge.weight<"a"> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
