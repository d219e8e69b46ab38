// RUN: ge-opt %s | ge-opt | filecheck %s

// Every indexing op round-trips with its properties and optional operands, and its result type is
// the one inferred: unknown dims flow through, constant repeats and depths give exact dims, runtime
// ones the right rank with unknown dims.

// CHECK-LABEL: func.func @gathers
func.func @gathers(%x: tensor<3x4x5xf32>, %i: tensor<2x4x5xi64>, %j: tensor<3x2x?xi32>, %d: tensor<?x4xf16>,
                   %n: tensor<6x2xi64>, %b: tensor<3x6x1xi32>) -> (tensor<2x4x5xf32>, tensor<6x5xf32>) {
  // CHECK: ge.gather_elements %{{.*}}, %{{.*}} : (tensor<3x4x5xf32>, tensor<2x4x5xi64>) -> tensor<2x4x5xf32>
  %0 = ge.gather_elements %x, %i : (tensor<3x4x5xf32>, tensor<2x4x5xi64>) -> tensor<2x4x5xf32>
  // The indexed axis may be longer than the data's, the others no longer.
  // CHECK-NEXT: ge.gather_elements %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x?xi32>) -> tensor<3x2x?xf32>
  %1 = ge.gather_elements %x, %j {axis = -1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x?xi32>) -> tensor<3x2x?xf32>
  // CHECK-NEXT: ge.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<?x4xf16>, tensor<6x2xi64>) -> tensor<6x2xf16>
  %2 = ge.gather_elements %d, %n {axis = 1 : i64} : (tensor<?x4xf16>, tensor<6x2xi64>) -> tensor<6x2xf16>
  // GatherND: indices.shape[:-1] + data.shape[batch_dims + k:].
  // CHECK-NEXT: ge.gather_nd %{{.*}}, %{{.*}} : (tensor<3x4x5xf32>, tensor<6x2xi64>) -> tensor<6x5xf32>
  %3 = ge.gather_nd %x, %n : (tensor<3x4x5xf32>, tensor<6x2xi64>) -> tensor<6x5xf32>
  // CHECK-NEXT: ge.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x6x1xi32>) -> tensor<3x6x5xf32>
  %4 = ge.gather_nd %x, %b {batch_dims = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x6x1xi32>) -> tensor<3x6x5xf32>
  // Constant indices in range, negative ones included.
  %c = ge.constant dense<[[-3, 3], [2, -4]]> : tensor<2x2xi64>
  // CHECK: ge.gather_nd %{{.*}}, %{{.*}} : (tensor<3x4x5xf32>, tensor<2x2xi64>) -> tensor<2x5xf32>
  %5 = ge.gather_nd %x, %c : (tensor<3x4x5xf32>, tensor<2x2xi64>) -> tensor<2x5xf32>
  func.return %0, %3 : tensor<2x4x5xf32>, tensor<6x5xf32>
}

// CHECK-LABEL: func.func @scatters
func.func @scatters(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x4xf32>, %n: tensor<5x1xi32>,
                    %v: tensor<5x4xf32>, %e: tensor<2x2xi64>, %w: tensor<2xf32>) -> tensor<3x4xf32> {
  // CHECK: ge.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %0 = ge.scatter_elements %x, %i, %u : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: ge.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = -2 : i64, reduction = "mul"} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %1 = ge.scatter_elements %0, %i, %u {axis = -2 : i64, reduction = "mul"} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: ge.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "add"} : (tensor<3x4xf32>, tensor<5x1xi32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  %2 = ge.scatter_nd %1, %n, %v {reduction = "add"} : (tensor<3x4xf32>, tensor<5x1xi32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  // Element indices (k = rank): the updates are one value per index tuple.
  // CHECK-NEXT: ge.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "max"} : (tensor<3x4xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<3x4xf32>
  %3 = ge.scatter_nd %2, %e, %w {reduction = "max"} : (tensor<3x4xf32>, tensor<2x2xi64>, tensor<2xf32>) -> tensor<3x4xf32>
  func.return %3 : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @tile_trilu
func.func @tile_trilu(%x: tensor<2x?x3xbf16>, %r: tensor<3xi64>, %m: tensor<4x5xi32>, %k: tensor<i64>)
    -> (tensor<4x?x3xbf16>, tensor<?x?x?xbf16>) {
  %reps = ge.constant dense<[2, 3, 1]> : tensor<3xi64>
  // CHECK: ge.tile %{{.*}}, %{{.*}} : (tensor<2x?x3xbf16>, tensor<3xi64>) -> tensor<4x?x3xbf16>
  %0 = ge.tile %x, %reps : (tensor<2x?x3xbf16>, tensor<3xi64>) -> tensor<4x?x3xbf16>
  // CHECK-NEXT: ge.tile %{{.*}}, %{{.*}} : (tensor<2x?x3xbf16>, tensor<3xi64>) -> tensor<?x?x?xbf16>
  %1 = ge.tile %x, %r : (tensor<2x?x3xbf16>, tensor<3xi64>) -> tensor<?x?x?xbf16>
  // CHECK-NEXT: ge.trilu %{{.*}} : (tensor<4x5xi32>) -> tensor<4x5xi32>
  %2 = ge.trilu %m : (tensor<4x5xi32>) -> tensor<4x5xi32>
  // CHECK-NEXT: ge.trilu %{{.*}}, k = %{{.*}} {upper = 0 : i64} : (tensor<2x?x3xbf16>, tensor<i64>) -> tensor<2x?x3xbf16>
  %3 = ge.trilu %x, k = %k {upper = 0 : i64} : (tensor<2x?x3xbf16>, tensor<i64>) -> tensor<2x?x3xbf16>
  func.return %0, %1 : tensor<4x?x3xbf16>, tensor<?x?x?xbf16>
}

// CHECK-LABEL: func.func @generated
func.func @generated(%i: tensor<2x3xi64>, %f: tensor<4xf32>, %depth: tensor<1xi64>, %vals: tensor<2xf16>, %m: tensor<3x?xi1>)
    -> (tensor<2x3x10xf16>, tensor<10x4xf16>) {
  %ten = ge.constant dense<10.0> : tensor<f32>
  // CHECK: ge.one_hot %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<f32>, tensor<2xf16>) -> tensor<2x3x10xf16>
  %0 = ge.one_hot %i, %ten, %vals : (tensor<2x3xi64>, tensor<f32>, tensor<2xf16>) -> tensor<2x3x10xf16>
  // Float indices, a new leading axis.
  // CHECK-NEXT: ge.one_hot %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<4xf32>, tensor<f32>, tensor<2xf16>) -> tensor<10x4xf16>
  %1 = ge.one_hot %f, %ten, %vals {axis = 0 : i64} : (tensor<4xf32>, tensor<f32>, tensor<2xf16>) -> tensor<10x4xf16>
  // A runtime depth leaves the new axis unknown.
  // CHECK-NEXT: ge.one_hot %{{.*}}, %{{.*}}, %{{.*}} {axis = -2 : i64} : (tensor<2x3xi64>, tensor<1xi64>, tensor<2xf16>) -> tensor<2x?x3xf16>
  %2 = ge.one_hot %i, %depth, %vals {axis = -2 : i64} : (tensor<2x3xi64>, tensor<1xi64>, tensor<2xf16>) -> tensor<2x?x3xf16>
  // CHECK-NEXT: ge.eye_like %{{.*}} : (tensor<3x?xi1>) -> tensor<3x?xi1>
  %3 = ge.eye_like %m : (tensor<3x?xi1>) -> tensor<3x?xi1>
  // CHECK-NEXT: ge.eye_like %{{.*}} {dtype = 1 : i64, k = -1 : i64} : (tensor<3x?xi1>) -> tensor<3x?xf32>
  %4 = ge.eye_like %m {dtype = 1 : i64, k = -1 : i64} : (tensor<3x?xi1>) -> tensor<3x?xf32>
  func.return %0, %1 : tensor<2x3x10xf16>, tensor<10x4xf16>
}
