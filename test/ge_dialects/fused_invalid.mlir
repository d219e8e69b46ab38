// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @unknown_pattern(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = fused.group "magic" "r" (%x) : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.relu %a : (tensor<2xf32>) -> tensor<2xf32>
    fused.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: fused.group 'r': unknown pattern class 'magic'

// -----

func.func @arg_types(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = fused.group "elementwise" "r" (%x) : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<3xf32>):
    %r = ge.relu %a : (tensor<3xf32>) -> tensor<3xf32>
    fused.yield %a : tensor<3xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: fused.group 'r': block arguments must have the types of the inputs

// -----

func.func @yield_types(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = fused.group "elementwise" "r" (%x) : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %r = ge.cast %a {to = 7 : i64} : (tensor<2xf32>) -> tensor<2xi64>
    fused.yield %r : tensor<2xi64>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: fused.group 'r': fused.yield types must match the result types

// -----

func.func @empty(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = fused.group "elementwise" "r" (%x) : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    fused.yield %a : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: fused.group 'r': the body holds no op

// -----

func.func @isolated(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = fused.group "elementwise" "r" () : () -> tensor<2xf32> {
    %r = ge.relu %x : (tensor<2xf32>) -> tensor<2xf32>
    fused.yield %r : tensor<2xf32>
  }
  func.return %0 : tensor<2xf32>
}
// CHECK: isolated

// -----

func.func @stray_yield(%x: tensor<2xf32>) -> tensor<2xf32> {
  "fused.yield"(%x) : (tensor<2xf32>) -> ()
  func.return %x : tensor<2xf32>
}
// CHECK: 'fused.yield' must be the last operation in its parent block
