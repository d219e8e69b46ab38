// RUN: ge-opt %s -p fold-trans-data -o %t.mlir --remarks 2>&1 | filecheck %s --check-prefix=REMARK
// RUN: filecheck %s < %t.mlir
// RUN: ge-run %s --random-inputs 0 --print | filecheck %s --check-prefix=OUT
// RUN: ge-run %t.mlir --random-inputs 0 --print | filecheck %s --check-prefix=OUT

// A conv weight converted to FRACTAL_Z becomes a sidecar weight of the storage-format type holding
// the physical array; a constant converted to FRACTAL_NZ and back folds twice, ending as a small
// inline constant again (its type is plain). A TransData of a graph input is no constant: kept.
// Both programs compute the same outputs (RUN lines 3 and 4).

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"}
// CHECK-NEXT:    %1 = ge.constant #ge.weight<"/w.FRACTAL_Z"> : tensor<4x3x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>> loc("/w")
// CHECK-NEXT:    %c = ge.conv %0, %1
// CHECK-NEXT:    %2 = ge.trans_data %c {src_format = "NC1HWC0", dst_format = "NCHW"}
// CHECK-NEXT:    %3 = ge.constant dense<{{.*}}> : tensor<4x8xf32> loc("/m")
// CHECK-NEXT:    func.return %2, %3
// REMARK: applied fold on [/w]: ND -> FRACTAL_Z done at compile time: [4, 3, 3, 3] stored as [9, 1, 16, 8]
// REMARK: applied fold on [/m]: ND -> FRACTAL_NZ done at compile time: [4, 8] stored as [1, 1, 16, 8]
// REMARK: applied fold on [/m]: FRACTAL_NZ -> ND done at compile time: [1, 1, 16, 8] stored as [4, 8]
// OUT: result0: float32[1, 4, 6, 6]  mean -0.339685  std 2.14719  min -5.28196  max 4.94817
// OUT-NEXT: result1: float32[4, 8]  mean 0.5  std 0.5  min 0  max 1
func.func @main(%x: tensor<1x3x8x8xf32>) -> (tensor<1x4x6x6xf32, #ge.fmt<NCHW>>, tensor<4x8xf32>) {
  %w = ge.constant dense<0.5> : tensor<4x3x3x3xf32> loc("/w")
  %m = ge.constant dense<[[0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]]> : tensor<4x8xf32> loc("/m")
  %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
  %1 = ge.trans_data %w {src_format = "ND", dst_format = "FRACTAL_Z"} : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>
  %c = ge.conv %0, %1 : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4x3x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
  %2 = ge.trans_data %c {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>>
  %3 = ge.trans_data %m {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<4x8xf32>) -> tensor<4x8xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %4 = ge.trans_data %3 {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<4x8xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<4x8xf32>
  func.return %2, %4 : tensor<1x4x6x6xf32, #ge.fmt<NCHW>>, tensor<4x8xf32>
}
