// RUN: ge-opt %s -p fuse-views --split-input-file | filecheck %s
// RUN: ge-opt %s -p fuse-views --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// epilogue: a reshape that is the only reader of a Cube kernel's result is written through by it.
// CHECK-LABEL: func.func @matmul_then_reshape
// CHECK:      fused.group "cube+elementwise" "with_views"
// CHECK:        ge.matmul
// CHECK-NEXT:   ge.reshape
// CHECK-NEXT:   fused.yield
// REMARK: remark: fuse-views: applied view-as-addressing on [/mm]: ge.reshape of its result written through
func.func @matmul_then_reshape(%a: tensor<6x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x3x4xf32> {
  %s = ge.constant dense<[2, 3, 4]> : tensor<3xi64>
  %0 = ge.matmul %a, %b : (tensor<6x8xf32>, tensor<8x4xf32>) -> tensor<6x4xf32> loc("/mm")
  %1 = ge.reshape %0, %s : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32> loc("/reshape")
  func.return %1 : tensor<2x3x4xf32>
}

// -----

// prologue: a squeeze whose every reader computes is read through by each of them.
// CHECK-LABEL: func.func @squeeze_then_two_readers
// CHECK-COUNT-2: fused.group "elementwise" "with_views"
// CHECK-NOT:  fused.group
// REMARK: remark: fuse-views: applied view-as-addressing on [/sigmoid, /relu]: ge.squeeze of its input read through by each of its 2 readers
func.func @squeeze_then_two_readers(%x: tensor<1x6x4xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>) {
  %0 = ge.squeeze %x : (tensor<1x6x4xf32>) -> tensor<6x4xf32> loc("/squeeze")
  %1 = ge.relu %0 : (tensor<6x4xf32>) -> tensor<6x4xf32> loc("/relu")
  %2 = ge.sigmoid %0 : (tensor<6x4xf32>) -> tensor<6x4xf32> loc("/sigmoid")
  func.return %1, %2 : tensor<6x4xf32>, tensor<6x4xf32>
}

// -----

// A reshape of a blocked array (FRACTAL_NZ) moves elements: it is no view and stays a kernel.
// CHECK-LABEL: func.func @blocked
// CHECK-NOT:  fused.group
func.func @blocked(%x: tensor<2x32x32xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>> {
  %s = ge.constant dense<[64, 32]> : tensor<2xi64>
  %0 = ge.reshape %x, %s : (tensor<2x32x32xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<2xi64>) -> tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/reshape")
  %1 = ge.relu %0 : (tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/relu")
  func.return %1 : tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>>
}

// -----

// A view whose source another op also reads, and whose reader is the graph's output, stays: the
// producer would write the same bytes twice.
// CHECK-LABEL: func.func @shared_source
// CHECK-NOT:  fused.group
// REMARK: remark: fuse-views: rejected view-as-addressing on [/flatten]: ge.flatten stays a kernel: func.return reads it, and its source comes from ge.relu, which is no computing kernel or has other readers
func.func @shared_source(%x: tensor<2x3x4xf32>) -> (tensor<2x12xf32>, tensor<2x3x4xf32>) {
  %0 = ge.relu %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("/relu")
  %1 = ge.flatten %0 : (tensor<2x3x4xf32>) -> tensor<2x12xf32> loc("/flatten")
  func.return %1, %0 : tensor<2x12xf32>, tensor<2x3x4xf32>
}

// -----

// An unknown dim: the reshape is a view all the same (its bytes are the source's, however many).
// CHECK-LABEL: func.func @dynamic
// CHECK:      fused.group "elementwise" "with_views"
// CHECK:        ge.flatten
// CHECK-NEXT:   ge.relu
func.func @dynamic(%x: tensor<?x3x4xf32>) -> tensor<?x12xf32> {
  %0 = ge.flatten %x : (tensor<?x3x4xf32>) -> tensor<?x12xf32> loc("/flatten")
  %1 = ge.relu %0 : (tensor<?x12xf32>) -> tensor<?x12xf32> loc("/relu")
  func.return %1 : tensor<?x12xf32>
}

// -----

// Col2Im reads its image and block shapes as immediates (constants its kernel holds): in a group
// they would be inputs, so a view next to it stays a kernel.
// CHECK-LABEL: func.func @beside_col2im
// CHECK-NOT:  fused.group
// REMARK: remark: fuse-views: rejected view-as-addressing on [/reshape]: ge.reshape stays a kernel: ge.col2im reads it
func.func @beside_col2im(%x: tensor<2x72xf32>) -> tensor<2x2x5x5xf32> {
  %s = ge.constant dense<[2, 18, 4]> : tensor<3xi64>
  %image = ge.constant dense<[5, 5]> : tensor<2xi64>
  %block = ge.constant dense<[3, 3]> : tensor<2xi64>
  %0 = ge.reshape %x, %s : (tensor<2x72xf32>, tensor<3xi64>) -> tensor<2x18x4xf32> loc("/reshape")
  %1 = ge.col2im %0, %image, %block {strides = array<i64: 2, 2>} : (tensor<2x18x4xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2x5x5xf32> loc("/col2im")
  func.return %1 : tensor<2x2x5x5xf32>
}
