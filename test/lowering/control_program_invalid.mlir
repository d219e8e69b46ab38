// RUN: ge-opt %s -p verify-streams --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// Control programs (control flow sunk to the device) the device could not run, each refused in
// one line: the label tasks' own verifiers (a bool switch between other than two labels, a goto
// passing other values than its label takes, an index that is no scalar), a loop no switch leads
// out of, and a call of a function not lowered to streams. A switch to a label the function does
// not have does not parse (control_program_missing_label_invalid.mlir).

// CHECK: stream.label_switch: a bool index selects between 2 labels, 1 given
func.func @one_label(%c: tensor<i1>) -> tensor<i1> {
  stream.label_switch %c : tensor<i1> [^only]
^only:
  func.return %c : tensor<i1>
}

// -----

// CHECK: stream.label_switch: the index must be a bool or integer scalar, got tensor<2xi1>
func.func @vector_index(%c: tensor<2xi1>) -> tensor<2xi1> {
  stream.label_switch %c : tensor<2xi1> [^a, ^b]
^a:
  func.return %c : tensor<2xi1>
^b:
  func.return %c : tensor<2xi1>
}

// -----

// CHECK: stream.label_goto: its label takes (tensor<4xf32>), given (tensor<i1>)
func.func @wrong_values(%c: tensor<i1>) -> tensor<i1> {
  stream.label_goto ^join(%c : tensor<i1>)
^join(%v: tensor<4xf32>):
  func.return %c : tensor<i1>
}

// -----

// CHECK: verify-streams: @endless: the loop through the label calling @body never ends: no stream.label_switch leads out of it
func.func @endless(%x: tensor<4xf32>) -> tensor<4xf32> {
  stream.label_goto ^head(%x : tensor<4xf32>)
^head(%v: tensor<4xf32>):
  %r = func.call @body(%v) : (tensor<4xf32>) -> tensor<4xf32>
  stream.label_goto ^head(%r : tensor<4xf32>)
}
func.func @body(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.tanh %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// CHECK: verify-streams: @unlowered: it calls @pos, which is not lowered to streams (run lower-to-tasks, plan-memory and lower-to-streams)
func.func @unlowered(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  stream.label_switch %c : tensor<i1> [^else, ^then]
^else:
  func.return %x : tensor<4xf32>
^then:
  %r = func.call @pos(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @pos(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = ge.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
