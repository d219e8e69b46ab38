// RUN: ge-opt %s -p partition-dynamic | filecheck %s
// RUN: ge-opt %s -p 'partition-dynamic{static_model_ops_lower_limit=5}' | filecheck %s --check-prefix=LIMIT
// RUN: ge-opt %s -p partition-dynamic --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// @main mixes a static chain on %a (four ops, interleaved with the dynamic ones on %x) and ops of
// unknown dims: the static chain becomes a known subgraph, sunk; the rest an unknown one, bound
// when it runs; @main the host program calling both. With a limit of 5 the chain is too short to
// sink and @main stays one unknown graph.

// CHECK:      func.func @main(%a: tensor<4xf32> {ge.name = "a"}, %x: tensor<?xf32> {ge.name = "x"}) -> (tensor<4xf32>, tensor<?xf32>) {
// CHECK-NEXT:   %[[K:.*]] = func.call @main_sub_0_know(%a) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   %[[U:.*]] = func.call @main_sub_1_unknow(%x) : (tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT:   func.return %[[K]], %[[U]] : tensor<4xf32>, tensor<?xf32>
// CHECK:      func.func @main_sub_0_know(
// CHECK-COUNT-4: ge.{{relu|neg|tanh|abs}}
// CHECK:      func.func @main_sub_1_unknow({{.*}} attributes {ge.unknown_shape}

// LIMIT: func.func @main({{.*}} attributes {ge.unknown_shape}
// LIMIT-NOT: _know

// REMARK: remark: partition-dynamic: applied clusters on [func.func]: @main: 1 known subgraphs sunk (4 ops), 1 unknown bound when they run
func.func @main(%a: tensor<4xf32> {ge.name = "a"}, %x: tensor<?xf32> {ge.name = "x"}) -> (tensor<4xf32>, tensor<?xf32>) {
  %0 = ge.relu %a : (tensor<4xf32>) -> tensor<4xf32> loc("a1")
  %1 = ge.relu %x : (tensor<?xf32>) -> tensor<?xf32> loc("x1")
  %2 = ge.neg %0 : (tensor<4xf32>) -> tensor<4xf32> loc("a2")
  %3 = ge.neg %1 : (tensor<?xf32>) -> tensor<?xf32> loc("x2")
  %4 = ge.tanh %2 : (tensor<4xf32>) -> tensor<4xf32> loc("a3")
  %5 = ge.abs %4 : (tensor<4xf32>) -> tensor<4xf32> loc("a4")
  func.return %5, %3 : tensor<4xf32>, tensor<?xf32>
}
