// RUN: ge-opt %s -p insert-trans-data --split-input-file | filecheck %s
// RUN: ge-opt %s -p insert-trans-data --split-input-file | ge-opt -p insert-trans-data --split-input-file | filecheck %s

// An annotated op gets its operand converted and its result retyped; the users keep what they had
// (TransData back), func.return gets the declared type. One TransData per value and format,
// shared by later users. The second RUN line checks that materialized IR is left alone.

// CHECK-LABEL: func.func @annotated
// CHECK-NEXT:    %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %y = ge.relu %0 : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %z = ge.relu %0 : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT:    %1 = ge.trans_data %y {src_format = "NC1HWC0", dst_format = "ND"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT:    %s = ge.sigmoid %1 : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
// CHECK-NEXT:    func.return %1, %s, %z : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>
// CHECK-NOT:     ge.storage
func.func @annotated(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) {
  %y = ge.relu %x {ge.storage = {x = "NC1HWC0", y = "NC1HWC0"}} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %z = ge.relu %x {ge.storage = {x = "NC1HWC0"}} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %s = ge.sigmoid %y : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  func.return %y, %s, %z : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>
}

// -----

// An operand stored in FRACTAL_NZ and annotated ND is converted back; an annotation naming the
// format a value already has changes nothing; a result produced in FRACTAL_NZ goes back to the
// declared type at the return.

// CHECK-LABEL: func.func @storage_to_storage
// CHECK-NEXT:    %0 = ge.trans_data %a {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x32xf16>
// CHECK-NEXT:    %b = ge.matmul %0, %a : (tensor<32x32xf16>, tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK-NEXT:    %1 = ge.trans_data %b {src_format = "FRACTAL_NZ", dst_format = "ND"}
// CHECK-NEXT:    func.return %1 : tensor<32x32xf16>
func.func @storage_to_storage(%a: tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x32xf16> {
  %b = ge.matmul %a, %a {ge.storage = {A = "ND", B = "FRACTAL_NZ", Y = "FRACTAL_NZ"}} : (tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>, tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x32xf16>
  func.return %b : tensor<32x32xf16>
}
