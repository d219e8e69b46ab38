// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s -p cse,dce --strip-debuginfo | filecheck %s --check-prefix=OPT

// Every elementwise op round-trips, node names included.
func.func @unary(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
  // CHECK: ge.relu %{{.*}} : (tensor<2x?xf32>) -> tensor<2x?xf32> loc("/relu")
  %0 = ge.relu %x : (tensor<2x?xf32>) -> tensor<2x?xf32> loc("/relu")
  // CHECK-NEXT: ge.sqrt
  %1 = ge.sqrt %0 : (tensor<2x?xf32>) -> tensor<2x?xf32>
  // CHECK-NEXT: ge.erf
  %2 = ge.erf %1 : (tensor<2x?xf32>) -> tensor<2x?xf32>
  // CHECK-NEXT: ge.tanh
  %3 = ge.tanh %2 : (tensor<2x?xf32>) -> tensor<2x?xf32>
  // CHECK-NEXT: ge.sigmoid
  %4 = ge.sigmoid %3 : (tensor<2x?xf32>) -> tensor<2x?xf32>
  // CHECK-NEXT: ge.hard_swish
  %5 = ge.hard_swish %4 : (tensor<2x?xf32>) -> tensor<2x?xf32>
  // CHECK-NEXT: ge.identity
  %6 = ge.identity %5 : (tensor<2x?xf32>) -> tensor<2x?xf32>
  // CHECK-NEXT: ge.gelu %{{.*}} {approximate = "tanh"}
  %7 = ge.gelu %6 {approximate = "tanh"} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  // OPT: ge.gelu
  // OPT-NOT: loc(
  func.return %7 : tensor<2x?xf32>
}

// CHECK-LABEL: func.func @exp_log
func.func @exp_log(%x: tensor<3x4xbf16>) -> tensor<3x4xbf16> {
  // CHECK: ge.exp %{{.*}} : (tensor<3x4xbf16>) -> tensor<3x4xbf16> loc("/exp")
  %0 = ge.exp %x : (tensor<3x4xbf16>) -> tensor<3x4xbf16> loc("/exp")
  // CHECK-NEXT: ge.log %{{.*}} : (tensor<3x4xbf16>) -> tensor<3x4xbf16>
  %1 = ge.log %0 : (tensor<3x4xbf16>) -> tensor<3x4xbf16>
  func.return %1 : tensor<3x4xbf16>
}

// The fused activation gradients: a dynamic dim of one operand is fixed by the other.
// CHECK-LABEL: func.func @activation_grads
func.func @activation_grads(%dy: tensor<2x?xf32>, %y: tensor<2x5xf32>, %x: tensor<2x5xf32, #ge.fmt<ND>>) -> tensor<2x5xf32> {
  // CHECK: ge.relu_grad %{{.*}}, %{{.*}} : (tensor<2x?xf32>, tensor<2x5xf32>) -> tensor<2x5xf32> loc("/relu/grad")
  %0 = ge.relu_grad %dy, %y : (tensor<2x?xf32>, tensor<2x5xf32>) -> tensor<2x5xf32> loc("/relu/grad")
  // CHECK-NEXT: ge.gelu_grad %{{.*}}, %{{.*}} : (tensor<2x5xf32>, tensor<2x5xf32, #ge.fmt<ND>>) -> tensor<2x5xf32>
  %1 = ge.gelu_grad %0, %x : (tensor<2x5xf32>, tensor<2x5xf32, #ge.fmt<ND>>) -> tensor<2x5xf32>
  // CHECK-NEXT: ge.gelu_grad %{{.*}}, %{{.*}} {approximate = "tanh"} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %2 = ge.gelu_grad %1, %y {approximate = "tanh"} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %2 : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x1x3xf16, #ge.fmt<ND>>, %b: tensor<5x1xf16>, %e: tensor<3xi64>) -> tensor<4x5x3xi1> {
  // CHECK: ge.add %{{.*}}, %{{.*}} : (tensor<4x1x3xf16, #ge.fmt<ND>>, tensor<5x1xf16>) -> tensor<4x5x3xf16>
  %0 = ge.add %a, %b : (tensor<4x1x3xf16, #ge.fmt<ND>>, tensor<5x1xf16>) -> tensor<4x5x3xf16>
  %1 = ge.sub %0, %b : (tensor<4x5x3xf16>, tensor<5x1xf16>) -> tensor<4x5x3xf16>
  %2 = ge.mul %1, %1 : (tensor<4x5x3xf16>, tensor<4x5x3xf16>) -> tensor<4x5x3xf16>
  %3 = ge.div %2, %b : (tensor<4x5x3xf16>, tensor<5x1xf16>) -> tensor<4x5x3xf16>
  // CHECK: ge.pow %{{.*}}, %{{.*}} : (tensor<4x5x3xf16>, tensor<3xi64>) -> tensor<4x5x3xf16>
  %4 = ge.pow %3, %e : (tensor<4x5x3xf16>, tensor<3xi64>) -> tensor<4x5x3xf16>
  // CHECK: ge.equal {{.*}} -> tensor<4x5x3xi1>
  %5 = ge.equal %4, %0 : (tensor<4x5x3xf16>, tensor<4x5x3xf16>) -> tensor<4x5x3xi1>
  func.return %5 : tensor<4x5x3xi1>
}

// CHECK-LABEL: func.func @max_min_mod_and_unary
func.func @max_min_mod_and_unary(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<4xi32>) -> tensor<2x3xf32> {
  // CHECK: ge.maximum %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = ge.maximum %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.minimum
  %1 = ge.minimum %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.mod %{{.*}}, %{{.*}} {fmod = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = ge.mod %1, %b {fmod = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.mod %{{.*}}, %{{.*}} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = ge.mod %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: ge.abs %{{.*}} : (tensor<4xi32>) -> tensor<4xi32>
  %4 = ge.abs %3 : (tensor<4xi32>) -> tensor<4xi32>
  // CHECK: ge.neg
  %5 = ge.neg %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.sign
  %6 = ge.sign %5 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.reciprocal
  %7 = ge.reciprocal %6 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.floor
  %8 = ge.floor %7 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.ceil
  %9 = ge.ceil %8 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.hard_sigmoid %{{.*}} {alpha = 2.500000e-01 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = ge.hard_sigmoid %9 {alpha = 0.25 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ge.leaky_relu
  %11 = ge.leaky_relu %10 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %11 : tensor<2x3xf32>
}
