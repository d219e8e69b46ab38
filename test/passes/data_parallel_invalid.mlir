// data-parallel's user errors: one line each, naming the pass and the reason, exit 1.
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=3}' 2>&1 | filecheck %s --check-prefix=DIVIDE
// DIVIDE: ge-opt: error: data-parallel: the batch size 8 does not divide over devices=3
// DIVIDE-NOT: Traceback
// DIVIDE-EMPTY:
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=2 local="w9"}' 2>&1 | filecheck %s --check-prefix=LOCAL
// LOCAL: ge-opt: error: data-parallel: local names 'w9', which is not a trained parameter (parameters with gradients: 'w1', 'w2')
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=32}' 2>&1 | filecheck %s --check-prefix=CLUSTER
// CLUSTER: ge-opt: error: data-parallel: devices=32 is more than the target's cluster holds (2 servers of 8 chips = 16)
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=2 split="idx:0,5"}' 2>&1 | filecheck %s --check-prefix=INDEX
// INDEX: ge-opt: error: data-parallel: split index 5 is past the last gradient (there are 2, indices 0 to 1)
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=2 split="size:60,30"}' 2>&1 | filecheck %s --check-prefix=PERCENT
// PERCENT: ge-opt: error: data-parallel: split 'size:60,30': the percentages sum to 90, not 100
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=2 split="half"}' 2>&1 | filecheck %s --check-prefix=FORM
// FORM: ge-opt: error: data-parallel: split 'half' is not 'idx:I1,I2,...' or 'size:P1,P2,...'
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=2 split="idx:1,0"}' 2>&1 | filecheck %s --check-prefix=ORDER
// ORDER: ge-opt: error: data-parallel: split 'idx:1,0': indices must be increasing non-negative integers
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=2 split="size:100" bucket_mib=4}' 2>&1 | filecheck %s --check-prefix=BOTH
// BOTH: ge-opt: error: data-parallel: give split or bucket_mib, not both
// RUN: not ge-opt %s -p 'data-parallel{devices=2}' 2>&1 | filecheck %s --check-prefix=NOGRAD
// NOGRAD: ge-opt: error: data-parallel: the graph has no gradient outputs ('<parameter>_grad'); run autodiff first
// RUN: not ge-opt %s -p 'accumulate-gradients{micro_batches=2},data-parallel{devices=2}' 2>&1 | filecheck %s --check-prefix=ACCUMULATE
// ACCUMULATE: ge-opt: error: data-parallel: the graph was differentiated by accumulate-gradients (one backward per micro-batch); data-parallel runs after autodiff
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=2},data-parallel{devices=2}' 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE: ge-opt: error: data-parallel: the graph is already data-parallel
// RUN: not ge-opt %s -p 'autodiff,data-parallel{devices=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// ZERO: ge-opt: error: data-parallel: devices must be at least 1, got 0

func.func @main(%x: tensor<8x3xf32> {ge.name = "x"}) -> (tensor<8x5xf32> {ge.name = "y"}, tensor<f32> {ge.name = "loss"}) {
  %w1 = ge.constant parameter<"w1"> dense<0.5> : tensor<3x4xf32>
  %w2 = ge.constant parameter<"w2"> dense<0.25> : tensor<4x5xf32>
  %h = ge.matmul %x, %w1 : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %y = ge.matmul %h, %w2 : (tensor<8x4xf32>, tensor<4x5xf32>) -> tensor<8x5xf32>
  %loss = ge.reduce_mean %y {keepdims = 0 : i64} : (tensor<8x5xf32>) -> tensor<f32>
  func.return %y, %loss : tensor<8x5xf32>, tensor<f32>
}
