// RUN: ge-opt %s | ge-opt | filecheck %s

// ge.gather_grad (GE's UnsortedSegmentSum / EmbeddingDenseGrad) round-trips with its properties:
// the result has data_shape whatever the indices' rank, dims of dy may be unknown.

// CHECK-LABEL: func.func @embedding
func.func @embedding(%dy: tensor<2x5x8xf32>, %ids: tensor<2x5xi64>) -> tensor<100x8xf32> {
  // CHECK: ge.gather_grad %{{.*}}, %{{.*}} {data_shape = array<i64: 100, 8>} : (tensor<2x5x8xf32>, tensor<2x5xi64>) -> tensor<100x8xf32> loc("/embed/grad")
  %0 = ge.gather_grad %dy, %ids {data_shape = array<i64: 100, 8>} : (tensor<2x5x8xf32>, tensor<2x5xi64>) -> tensor<100x8xf32> loc("/embed/grad")
  func.return %0 : tensor<100x8xf32>
}

// CHECK-LABEL: func.func @axes_and_index_ranks
func.func @axes_and_index_ranks(%dh: tensor<3x2xf16>, %i: tensor<2xi32>, %ds: tensor<4xf64>, %s: tensor<i64>, %dd: tensor<?x8xbf16>, %n: tensor<?xi64>) -> (tensor<3x4xf16>, tensor<4x6xf64>, tensor<10x8xbf16>, tensor<3x4xf16>) {
  // CHECK: ge.gather_grad %{{.*}}, %{{.*}} {axis = -1 : i64, data_shape = array<i64: 3, 4>} : (tensor<3x2xf16>, tensor<2xi32>) -> tensor<3x4xf16>
  %0 = ge.gather_grad %dh, %i {axis = -1 : i64, data_shape = array<i64: 3, 4>} : (tensor<3x2xf16>, tensor<2xi32>) -> tensor<3x4xf16>
  // A scalar index removes the axis from dy.
  // CHECK-NEXT: ge.gather_grad %{{.*}}, %{{.*}} {axis = 1 : i64, data_shape = array<i64: 4, 6>} : (tensor<4xf64>, tensor<i64>) -> tensor<4x6xf64>
  %1 = ge.gather_grad %ds, %s {axis = 1 : i64, data_shape = array<i64: 4, 6>} : (tensor<4xf64>, tensor<i64>) -> tensor<4x6xf64>
  // CHECK-NEXT: ge.gather_grad %{{.*}}, %{{.*}} {data_shape = array<i64: 10, 8>} : (tensor<?x8xbf16>, tensor<?xi64>) -> tensor<10x8xbf16>
  %2 = ge.gather_grad %dd, %n {data_shape = array<i64: 10, 8>} : (tensor<?x8xbf16>, tensor<?xi64>) -> tensor<10x8xbf16>
  // Constant indices in range, negative and repeated ones included.
  %c = ge.constant dense<[-4, 3]> : tensor<2xi32>
  // CHECK: ge.gather_grad %{{.*}}, %{{.*}} {axis = 1 : i64, data_shape = array<i64: 3, 4>} : (tensor<3x2xf16>, tensor<2xi32>) -> tensor<3x4xf16>
  %3 = ge.gather_grad %dh, %c {axis = 1 : i64, data_shape = array<i64: 3, 4>} : (tensor<3x2xf16>, tensor<2xi32>) -> tensor<3x4xf16>
  func.return %0, %1, %2, %3 : tensor<3x4xf16>, tensor<4x6xf64>, tensor<10x8xbf16>, tensor<3x4xf16>
}
