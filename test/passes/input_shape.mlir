// RUN: ge-opt %s -p 'input-shape{shape="x:2,8;mask:-1,1"}' | filecheck %s --check-prefix=BIND
// RUN: ge-opt %s -p 'input-shape{shape="x:1~4,8;mask:-1,1"}' | filecheck %s --check-prefix=RANGE
// RUN: ge-opt %s --ge-option 'ge.inputShape=x:1~4,8' | filecheck %s --check-prefix=OPTION
// RUN: not ge-opt %s -p 'input-shape{shape="x:1~4,9"}' 2>&1 | filecheck %s --check-prefix=FIXED
// RUN: not ge-opt %s -p 'input-shape{shape="y:1,8"}' 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not ge-opt %s -p 'input-shape{shape="x:1"}' 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not ge-opt %s -p 'input-shape{shape="x:4~1,8"}' 2>&1 | filecheck %s --check-prefix=BACKWARDS
// RUN: not ge-opt %s -p 'input-shape{shape="x:-2"}' 2>&1 | filecheck %s --check-prefix=RANK2
// RUN: not ge-opt %s -p 'input-shape{shape="x:2,8;mask:3,1"}' 2>&1 | filecheck %s --check-prefix=TWICE

// GE's ge.inputShape: a size binds the dim's symbol in every input that has it (mask's batch
// too), a range is recorded as the symbol's dim_ranges, -1 leaves a dim unknown; one line for each
// mistake, naming the input and the dim.

// BIND:  func.func @main(%x: tensor<2x8xf32> {{.*}}, %mask: tensor<2x1xf32> {{.*}}) -> (tensor<2x8xf32> {ge.name = "y"}) attributes {ge.bound_at_run_time}
// RANGE: func.func @main(%x: tensor<?x8xf32> {{.*}}, %mask: tensor<?x1xf32> {{.*}}) -> (tensor<?x8xf32> {ge.name = "y"}) attributes {ge.dim_ranges = {batch = array<i64: 1, 4>}}
// OPTION: attributes {ge.dim_ranges = {batch = array<i64: 1, 4>}}
// FIXED: ge-opt: error: input-shape: input 'x' dim 1 is 8 in the model; give that size (the graph is built for it)
// NAME: ge-opt: error: input-shape: the graph has no input 'y' (its inputs: x, mask)
// RANK: ge-opt: error: input-shape: input 'x' has rank 2, 1 dims given
// BACKWARDS: ge-opt: error: input-shape: input 'x' dim 0: '4~1' is no range MIN~MAX with MIN <= MAX
// RANK2: ge-opt: error: input-shape: input 'x' dim 0: -2 (an unknown rank) is not supported; give each dim
// TWICE: ge-opt: error: input-shape: input 'mask' dim 0: batch is given 2 and 3
func.func @main(%x: tensor<?x8xf32> {ge.name = "x", ge.dims = ["batch", ""]}, %mask: tensor<?x1xf32> {ge.name = "mask", ge.dims = ["batch", ""]}) -> (tensor<?x8xf32> {ge.name = "y"}) {
  %y = ge.mul %x, %mask : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32> loc("gate")
  func.return %y : tensor<?x8xf32>
}
