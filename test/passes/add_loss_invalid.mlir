// Option and graph errors of add-loss: one line naming the problem, exit code 1, no traceback.

// RUN: not ge-opt %s -p "add-loss{output=nope}" 2>&1 | filecheck %s --check-prefix=NAME
// NAME: ge-opt: error: add-loss: the graph has no output named 'nope' (outputs: 'logits', 'ints', 'flat', 'loss')
// NAME-NOT: Traceback
// NAME-EMPTY:

// RUN: not ge-opt %s -p "add-loss" 2>&1 | filecheck %s --check-prefix=MANY
// MANY: ge-opt: error: add-loss: the graph has 4 outputs; name the one to compute the loss from with output=NAME

// RUN: not ge-opt %s -p "add-loss{output=logits kind=hinge}" 2>&1 | filecheck %s --check-prefix=KIND
// KIND: ge-opt: error: add-loss: unknown kind 'hinge'; expected one of softmax_cross_entropy, nll, mse

// RUN: not ge-opt %s -p "add-loss{output=logits reduction=none}" 2>&1 | filecheck %s --check-prefix=REDUCTION
// REDUCTION: ge-opt: error: add-loss: unknown reduction 'none'; expected one of mean, sum

// RUN: not ge-opt %s -p "add-loss{output=flat kind=mse ignore_index=0}" 2>&1 | filecheck %s --check-prefix=MSE-II
// MSE-II: ge-opt: error: add-loss: ignore_index applies to the classification kinds, not mse

// RUN: not ge-opt %s -p "add-loss{output=logits labels=x}" 2>&1 | filecheck %s --check-prefix=INPUT
// INPUT: ge-opt: error: add-loss: the graph already has an input named 'x'

// RUN: not ge-opt %s -p "add-loss{output=logits labels=ints}" 2>&1 | filecheck %s --check-prefix=OUTPUT
// OUTPUT: ge-opt: error: add-loss: the graph already has an output named 'ints'

// RUN: not ge-opt %s -p "add-loss{output=logits}" 2>&1 | filecheck %s --check-prefix=LOSS
// LOSS: ge-opt: error: add-loss: the graph already has an output named 'loss'

// The same graph with its input w named loss (the check of the inputs comes first).
// RUN: sed 's/%%w: tensor<8x5xf32>,/%%w: tensor<8x5xf32> {ge.name = "loss"},/' %s > %t.mlir
// RUN: not ge-opt %t.mlir -p "add-loss{output=logits}" 2>&1 | filecheck %s --check-prefix=INPUT-LOSS
// INPUT-LOSS: ge-opt: error: add-loss: the graph already has an input named 'loss'

// RUN: not ge-opt %s -p "add-loss{output=logits labels=loss}" 2>&1 | filecheck %s --check-prefix=LABELS-LOSS
// LABELS-LOSS: ge-opt: error: add-loss: the labels input cannot be named 'loss', the name of the loss output

// RUN: not ge-opt %s -p "add-loss{output=flat}" 2>&1 | filecheck %s --check-prefix=RANK
// RUN: not ge-opt %s -p "add-loss{output=flat kind=nll}" 2>&1 | filecheck %s --check-prefix=RANK-NLL
// RANK: ge-opt: error: add-loss: output 'flat' has rank 1; a softmax_cross_entropy loss needs (N, C, d1..dk) logits of rank 2 or more
// RANK-NLL: ge-opt: error: add-loss: output 'flat' has rank 1; a nll loss needs (N, C, d1..dk) logits of rank 2 or more

// RUN: not ge-opt %s -p "add-loss{output=ints}" 2>&1 | filecheck %s --check-prefix=INT
// RUN: not ge-opt %s -p "add-loss{output=ints kind=mse}" 2>&1 | filecheck %s --check-prefix=INT-MSE
// INT: ge-opt: error: add-loss: output 'ints' is i64; a softmax_cross_entropy loss needs a float tensor
// INT-MSE: ge-opt: error: add-loss: output 'ints' is i64; a mse loss needs a float tensor

func.func @main(%x: tensor<4x8xf32> {ge.name = "x"}, %w: tensor<8x5xf32>, %i: tensor<4x5xi64>)
    -> (tensor<4x5xf32> {ge.name = "logits"}, tensor<4x5xi64> {ge.name = "ints"}, tensor<8xf32> {ge.name = "flat"}, tensor<8x5xf32> {ge.name = "loss"}) {
  %0 = ge.matmul %x, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %a = ge.constant dense<0> : tensor<1xi64>
  %2 = ge.reduce_sum %x, axes = %a {keepdims = 0 : i64} : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<8xf32>
  func.return %0, %i, %2, %w : tensor<4x5xf32>, tensor<4x5xi64>, tensor<8xf32>, tensor<8x5xf32>
}
