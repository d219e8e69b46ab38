// RUN: ge-opt %s -p 'bind-dims{sizes="batch=2,seq=3"}' | filecheck %s
// RUN: not ge-opt %s -p 'bind-dims{sizes="batch=2"}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not ge-opt %s -p 'bind-dims{sizes="batch=2,seq=3,len=4"}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not ge-opt %s -p 'bind-dims{sizes="batch=2,seq=600"}' 2>&1 | filecheck %s --check-prefix=RANGE

// A graph optimized on symbolic shapes, bound at run time: the arguments take the sizes, every op
// and fused group its static types (the constant target passed into a group is cloned into it),
// the shape chains fold, also one an elementwise group took in (the group becomes its constant),
// and the function is marked as bound at run time.

// CHECK:      func.func @main(%x: tensor<2x3x8xf32> {{.*}}) -> (tensor<2x3x2x4xf32>, tensor<i64>, tensor<i64>) attributes {{{.*}}ge.bound_at_run_time{{.*}}} {
// CHECK:        fused.group "elementwise" "chain" (%x, %t) : (tensor<2x3x8xf32>, tensor<4xi64>) -> tensor<2x3x2x4xf32> {
// CHECK-NEXT:   ^bb0(%a: tensor<2x3x8xf32>, %b: tensor<4xi64>):
// CHECK-NEXT:     %[[T:.*]] = ge.constant dense<[0, 0, 2, 4]> : tensor<4xi64>
// CHECK-NEXT:     %r = ge.relu %a : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:     %s = ge.reshape %r, %[[T]] : (tensor<2x3x8xf32>, tensor<4xi64>) -> tensor<2x3x2x4xf32>
// CHECK:        %n = ge.constant dense<6> : tensor<i64>
// CHECK-NOT:    fused.group
// CHECK:        %[[H:.*]] = ge.constant dense<3> : tensor<i64>
// CHECK-NEXT:   func.return %y, %n, %[[H]] : tensor<2x3x2x4xf32>, tensor<i64>, tensor<i64>
// MISSING: ge-opt: error: bind-dims: sizes gives no size for seq
// UNKNOWN: ge-opt: error: bind-dims: len: the graph has no dim of that name (its named dims: batch, seq)
// RANGE: ge-opt: error: bind-dims: seq = 600 is outside the range [1, 512] the graph was compiled for
func.func @main(%x: tensor<?x?x8xf32> {ge.name = "x", ge.dims = ["batch", "seq", ""]}) -> (tensor<?x?x2x4xf32>, tensor<i64>, tensor<i64>) attributes {ge.dim_ranges = {seq = array<i64: 1, 512>}} {
  %t = ge.constant dense<[0, 0, 2, 4]> : tensor<4xi64>
  %y = fused.group "elementwise" "chain" (%x, %t) : (tensor<?x?x8xf32>, tensor<4xi64>) -> tensor<?x?x2x4xf32> {
  ^bb0(%a: tensor<?x?x8xf32>, %b: tensor<4xi64>):
    %r = ge.relu %a : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
    %s = ge.reshape %r, %b : (tensor<?x?x8xf32>, tensor<4xi64>) -> tensor<?x?x2x4xf32>
    fused.yield %s : tensor<?x?x2x4xf32>
  }
  %shape = ge.shape %x : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %z = ge.constant dense<[0, 1]> : tensor<2xi64>
  %bs = ge.gather %shape, %z {axis = 0 : i64} : (tensor<3xi64>, tensor<2xi64>) -> tensor<2xi64>
  %n = ge.reduce_prod %bs {keepdims = 0 : i64} : (tensor<2xi64>) -> tensor<i64>
  %two = ge.constant dense<2> : tensor<i64>
  %half = fused.group "elementwise" "chain" (%n, %two) : (tensor<i64>, tensor<i64>) -> tensor<i64> {
  ^bb0(%p: tensor<i64>, %q: tensor<i64>):
    %d = ge.div %p, %q : (tensor<i64>, tensor<i64>) -> tensor<i64>
    fused.yield %d : tensor<i64>
  }
  func.return %y, %n, %half : tensor<?x?x2x4xf32>, tensor<i64>, tensor<i64>
}
