// RUN: ge-opt %s -p insert-trans-data --split-input-file --verify-diagnostics | filecheck %s

// Annotations that cannot be materialized: one line naming the op and the reason.

// CHECK: ge.relu '/bad_name': ge.storage names 'X', which is no operand or result of ge.relu
func.func @bad_name(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %y = ge.relu %x {ge.storage = {X = "NC1HWC0"}} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("/bad_name")
  func.return %y : tensor<1x3x8x8xf32>
}

// -----

// CHECK: ge.relu '/bad_format': ge.storage asks for unknown format NC4HW4 for 'x'
func.func @bad_format(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %y = ge.relu %x {ge.storage = {x = "NC4HW4"}} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("/bad_format")
  func.return %y : tensor<1x3x8x8xf32>
}

// -----

// CHECK: ge.relu '/bad_rank': 'x' cannot be stored in NC1HWC0: NC1HWC0 needs a 4-D NCHW or NHWC tensor, got origin ND of rank 2
func.func @bad_rank(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = ge.relu %x {ge.storage = {x = "NC1HWC0"}} : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("/bad_rank")
  func.return %y : tensor<8x8xf32>
}

// -----

// CHECK: ge.relu '/bad_attr': ge.storage must be a dictionary of format strings
func.func @bad_attr(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %y = ge.relu %x {ge.storage = "NC1HWC0"} : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("/bad_attr")
  func.return %y : tensor<8x8xf32>
}
