// RUN: ge-opt %s -p 'specialize-gears{dims="batch=1,seq=4;batch=2,seq=2"}' | filecheck %s
// RUN: not ge-opt %s -p 'specialize-gears{dims="batch=1"}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not ge-opt %s -p 'specialize-gears{dims="batch=1,seq=4;seq=4,batch=1"}' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not ge-opt %s -p 'specialize-gears{dims="batch=1,seq=4,len=2"}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: ge-opt %s -p 'specialize-gears{dims="batch=1,seq=4;batch=2,seq=2"},lower-to-tasks,plan-memory,lower-to-streams' | filecheck %s --check-prefix=LOWER
// RUN: ge-opt %s --ge-option 'ge.dynamicDims=1,4;2,2' --ge-option ge.oo.level=O0 | filecheck %s --check-prefix=GE
// RUN: not ge-opt %s --ge-option 'dynamic_dims=1,4,2' 2>&1 | filecheck %s --check-prefix=GECOUNT
// RUN: ge-opt %s -p 'specialize-gears{dims="batch=1,seq=4" hybrid=true}' | ge-opt | filecheck %s --check-prefix=HYBRID
// RUN: ge-opt %s --ge-option 'ge.dynamicDims=1,4' --ge-option ge.compileHybridMode=1 --ge-option ge.oo.level=O0 | filecheck %s --check-prefix=HYBRID

// @main keeps its signature and dispatches; each gear is @main with static arguments, its types
// refined by infer-shapes.

// CHECK:      func.func @main(%x: tensor<?x?x8xf32> {ge.name = "x", ge.dims = ["batch", "seq", ""]}) -> tensor<?x?x8xf32> {
// CHECK-NEXT:   %0 = ge.gears [@main.gear0, @main.gear1] (%x) {sizes = ["batch=1,seq=4", "batch=2,seq=2"]} : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32> loc("gears")
// CHECK-NEXT:   func.return %0 : tensor<?x?x8xf32>
// CHECK:      func.func @main.gear0(%x: tensor<1x4x8xf32> {{.*}}) -> tensor<1x4x8xf32> {
// CHECK-NEXT:   %y = ge.relu %x : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK:      func.func @main.gear1(%x: tensor<2x2x8xf32> {{.*}}) -> tensor<2x2x8xf32> {
// MISSING: ge-opt: error: specialize-gears: gear 0 ('batch=1') gives no size for seq
// TWICE: ge-opt: error: specialize-gears: gear 1 ('seq=4,batch=1') is gear 0 again
// UNKNOWN: ge-opt: error: specialize-gears: gear 0: len: the graph has no dim of that name (its named dims: batch, seq)
// GE:      ge.gears [@main.gear0, @main.gear1] (%x) {sizes = ["batch=1,seq=4", "batch=2,seq=2"]}
// GECOUNT: ge-opt: error: specialize-gears: gear 0 ('1,4,2') gives 3 sizes; the inputs have 2 unknown dims (batch, seq), one non-negative integer each
// With hybrid mode (GE's ge.compileHybridMode) @main's dynamic graph stays, for the inputs no
// gear fits; the text form round-trips.
// HYBRID:      ge.gears [@main.gear0] else @main.dynamic (%x) {sizes = ["batch=1,seq=4"]}
// HYBRID:      func.func @main.gear0(%x: tensor<1x4x8xf32>
// HYBRID:      func.func @main.dynamic(%x: tensor<?x?x8xf32> {{.*}}) -> tensor<?x?x8xf32> {
// HYBRID-NEXT:   %y = ge.relu %x : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
// Lowered, @main stays the host's dispatch and each gear is a sunk graph of its own; the gears run
// one at a time, so they share one pool, the larger of their plans.
// LOWER:      builtin.module attributes {{{.*}}task.memory = {pool =
// LOWER:      func.func @main(
// LOWER-NEXT:   ge.gears [@main.gear0, @main.gear1]
// LOWER:      func.func @main.gear0({{.*}} attributes {stream.mode = "graph"
// LOWER-NEXT:   task.kernel
// LOWER:      func.func @main.gear1({{.*}} attributes {stream.mode = "graph"
func.func @main(%x: tensor<?x?x8xf32> {ge.name = "x", ge.dims = ["batch", "seq", ""]}) -> tensor<?x?x8xf32> {
  %y = ge.relu %x : (tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  func.return %y : tensor<?x?x8xf32>
}
