// apply-optimizer's errors: one line naming the problem, exit code 1, no traceback.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'w': np.ones(4, np.float32), 'w.momentum': np.ones(4, np.float32)})"

// RUN: not ge-opt %t/m.mlir -p "apply-optimizer{kind=lamb}" 2>&1 | filecheck %s --check-prefix=KIND
// KIND: ge-opt: error: apply-optimizer: unknown optimizer kind 'lamb'; expected one of sgd, momentum, adam, adamw
// KIND-NOT: Traceback
// KIND-EMPTY:

// RUN: not ge-opt %t/m.mlir -p "apply-optimizer{lr=-0.1}" 2>&1 | filecheck %s --check-prefix=LR
// LR: ge-opt: error: apply-optimizer: lr=-0.1 must be >= 0

// RUN: not ge-opt %t/m.mlir -p "apply-optimizer{kind=momentum momentum=1.5}" 2>&1 | filecheck %s --check-prefix=MOMENTUM
// MOMENTUM: ge-opt: error: apply-optimizer: momentum=1.5 must be in [0, 1)

// RUN: not ge-opt %t/m.mlir -p "apply-optimizer{kind=adam beta1=1.0}" 2>&1 | filecheck %s --check-prefix=BETA1
// BETA1: ge-opt: error: apply-optimizer: beta1=1.0 must be in [0, 1)

// RUN: not ge-opt %t/m.mlir -p "apply-optimizer{kind=adamw beta2=-0.5}" 2>&1 | filecheck %s --check-prefix=BETA2
// BETA2: ge-opt: error: apply-optimizer: beta2=-0.5 must be in [0, 1)

// RUN: not ge-opt %t/m.mlir -p "apply-optimizer{kind=adam eps=0.0}" 2>&1 | filecheck %s --check-prefix=EPS
// EPS: ge-opt: error: apply-optimizer: eps=0.0 must be > 0

// RUN: not ge-opt %t/m.mlir -p "apply-optimizer{kind=adamw weight_decay=-1.0}" 2>&1 | filecheck %s --check-prefix=DECAY
// DECAY: ge-opt: error: apply-optimizer: weight_decay=-1.0 must be >= 0

// RUN: not ge-opt %t/m.mlir -p "apply-optimizer{kind=sgd weight_decay=0.1}" 2>&1 | filecheck %s --check-prefix=SGDDECAY
// SGDDECAY: ge-opt: error: apply-optimizer: weight_decay=0.1 is for adam and adamw; sgd takes none

// The graph errors, one case per split of this file (ge-opt stops at the first error).
// RUN: python -c "parts = open('%s').read().split('// ' + 5 * '-'); [open(f'%t/case{i}.mlir', 'w').write(p) for i, p in enumerate(parts)]"

// RUN: not ge-opt %t/case0.mlir -p apply-optimizer 2>&1 | filecheck %s --check-prefix=NOGRAD
// NOGRAD: ge-opt: error: apply-optimizer: @main has no '<parameter>_grad' outputs; run autodiff first
// NOGRAD-NOT: Traceback
// NOGRAD-EMPTY:

// RUN: not ge-opt %t/case1.mlir -p apply-optimizer 2>&1 | filecheck %s --check-prefix=NOWEIGHT
// NOWEIGHT: ge-opt: error: apply-optimizer: output 'v_grad' has no parameter 'v' in @main{{$}}

// RUN: not ge-opt %t/case2.mlir -p apply-optimizer 2>&1 | filecheck %s --check-prefix=TYPE
// TYPE: ge-opt: error: apply-optimizer: gradient 'w_grad' has type tensor<2x2xf32>, parameter 'w' has tensor<4xf32>

// RUN: not ge-opt %t/case3.mlir -p apply-optimizer 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE: ge-opt: error: apply-optimizer: the module already has the variable 'w' (was apply-optimizer applied twice?)

// RUN: not ge-opt %t/case4.mlir -p apply-optimizer 2>&1 | filecheck %s --check-prefix=DUPLICATE
// DUPLICATE: ge-opt: error: apply-optimizer: @main has two outputs named 'w_grad'

// RUN: not ge-opt %t/case5.mlir -p apply-optimizer 2>&1 | filecheck %s --check-prefix=PLAIN
// PLAIN: ge-opt: error: apply-optimizer: output 'w_grad' has no parameter 'w' in @main (the constant #ge.weight<"w"> is not marked parameter)
// PLAIN-EMPTY:

// RUN: not ge-opt %t/case6.mlir -p apply-optimizer 2>&1 | filecheck %s --check-prefix=VALUES
// VALUES: ge-opt: error: apply-optimizer: parameter 'b' is read by constants of different values; one parameter has one value

// RUN: not ge-opt %t/case7.mlir -p apply-optimizer 2>&1 | filecheck %s --check-prefix=SHADOW
// SHADOW: ge-opt: error: apply-optimizer: the weights sidecar already holds 'w', the key of an inline parameter whose value becomes the variable's initial state

// The sidecar has a 'w.momentum' of its own: the slot would shadow it.
// RUN: sed -e 's/v_grad/w_grad/' -e 's/func.return %%y, %%x/func.return %%y, %%w/' %t/case1.mlir > %t/slot.mlir
// RUN: not ge-opt %t/slot.mlir -p "apply-optimizer{kind=momentum}" 2>&1 | filecheck %s --check-prefix=SLOT
// SLOT: ge-opt: error: apply-optimizer: the weights sidecar already holds 'w.momentum', a key of the optimizer's state

// No gradient outputs (autodiff has not run).
module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "y"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<4xf32>
    %y = ge.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %y : tensor<4xf32>
  }
}

// -----

// A gradient of a weight the graph does not have.
module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "y"}, tensor<4xf32> {ge.name = "v_grad"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<4xf32>
    %y = ge.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %y, %x : tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// A gradient whose type is not its weight's.
module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<2x2xf32> {ge.name = "x"}) -> (tensor<2x2xf32> {ge.name = "w_grad"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<4xf32>
    func.return %x : tensor<2x2xf32>
  }
}

// -----

// Applied twice: the weight is a variable already.
module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "w_grad"}) {
    %v = ge.variable "w" : tensor<4xf32>
    %w = ge.constant parameter #ge.weight<"w"> : tensor<4xf32>
    %g = ge.mul %v, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %g : tensor<4xf32>
  }
}

// -----

// Two gradients of one weight.
module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "w_grad"}, tensor<4xf32> {ge.name = "w_grad"}) {
    %w = ge.constant parameter #ge.weight<"w"> : tensor<4xf32>
    %g = ge.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %g, %g : tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// A gradient of a sidecar constant that is not a parameter (a literal, as fold-constants makes them).
module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "w_grad"}) {
    %w = ge.constant #ge.weight<"w"> : tensor<4xf32>
    %g = ge.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %g : tensor<4xf32>
  }
}

// -----

// One inline parameter read by two constants of different values.
func.func @main(%x: tensor<2xf32> {ge.name = "x"}) -> (tensor<2xf32> {ge.name = "b_grad"}) {
  %b = ge.constant parameter<"b"> dense<[1.0, 2.0]> : tensor<2xf32>
  %b2 = ge.constant parameter<"b"> dense<[1.0, 3.0]> : tensor<2xf32>
  %g = ge.add %b, %b2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %g : tensor<2xf32>
}

// -----

// An inline parameter whose key the sidecar holds for another value.
module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "w_grad"}) {
    %w = ge.constant parameter<"w"> dense<0.5> : tensor<4xf32>
    %g = ge.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %g : tensor<4xf32>
  }
}
