// RUN: ge-opt %s | ge-opt | filecheck %s

// ge.trans_data round-trips between every pair of formats it supports; the type keeps the logical
// shape, the encoding says origin and storage.

// CHECK-LABEL: func.func @image
func.func @image(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>, %u: tensor<2x20x5x5xf32>) -> (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>, tensor<2x20x5x5xf32, #ge.fmt<NCHW, FRACTAL_Z>>, tensor<1x3x8x8xf32, #ge.fmt<NCHW, NHWC>>) {
  // CHECK: %{{.*}} = ge.trans_data %{{.*}} {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
  // CHECK: ge.trans_data %{{.*}} {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW>>
  %1 = ge.trans_data %0 {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW>>
  // an unencoded (ND) 4-D tensor is read as NCHW
  // CHECK: ge.trans_data %{{.*}} {src_format = "ND", dst_format = "FRACTAL_Z"} : (tensor<2x20x5x5xf32>) -> tensor<2x20x5x5xf32, #ge.fmt<NCHW, FRACTAL_Z>>
  %2 = ge.trans_data %u {src_format = "ND", dst_format = "FRACTAL_Z"} : (tensor<2x20x5x5xf32>) -> tensor<2x20x5x5xf32, #ge.fmt<NCHW, FRACTAL_Z>>
  // CHECK: ge.trans_data %{{.*}} {src_format = "NCHW", dst_format = "NHWC"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NHWC>>
  %3 = ge.trans_data %x {src_format = "NCHW", dst_format = "NHWC"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NHWC>>
  func.return %1, %2, %3 : tensor<1x3x8x8xf32, #ge.fmt<NCHW>>, tensor<2x20x5x5xf32, #ge.fmt<NCHW, FRACTAL_Z>>, tensor<1x3x8x8xf32, #ge.fmt<NCHW, NHWC>>
}

// CHECK-LABEL: func.func @storage_to_storage
func.func @storage_to_storage(%x: tensor<1x8x8x3xf16, #ge.fmt<NHWC>>, %d: tensor<?x17x4x4xi8, #ge.fmt<NCHW, NC1HWC0>>) -> (tensor<1x8x8x3xf16, #ge.fmt<NHWC, FRACTAL_Z>>, tensor<?x17x4x4xi8, #ge.fmt<NCHW, NHWC>>) {
  // channels-last origin: the logical shape is N, H, W, C
  // CHECK: ge.trans_data %{{.*}} {src_format = "NHWC", dst_format = "NC1HWC0"} : (tensor<1x8x8x3xf16, #ge.fmt<NHWC>>) -> tensor<1x8x8x3xf16, #ge.fmt<NHWC, NC1HWC0>>
  %0 = ge.trans_data %x {src_format = "NHWC", dst_format = "NC1HWC0"} : (tensor<1x8x8x3xf16, #ge.fmt<NHWC>>) -> tensor<1x8x8x3xf16, #ge.fmt<NHWC, NC1HWC0>>
  // CHECK: ge.trans_data %{{.*}} {src_format = "NC1HWC0", dst_format = "FRACTAL_Z"} : (tensor<1x8x8x3xf16, #ge.fmt<NHWC, NC1HWC0>>) -> tensor<1x8x8x3xf16, #ge.fmt<NHWC, FRACTAL_Z>>
  %1 = ge.trans_data %0 {src_format = "NC1HWC0", dst_format = "FRACTAL_Z"} : (tensor<1x8x8x3xf16, #ge.fmt<NHWC, NC1HWC0>>) -> tensor<1x8x8x3xf16, #ge.fmt<NHWC, FRACTAL_Z>>
  // a dynamic batch is fine: NC1HWC0 only splits C
  // CHECK: ge.trans_data %{{.*}} {src_format = "NC1HWC0", dst_format = "NHWC"} : (tensor<?x17x4x4xi8, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<?x17x4x4xi8, #ge.fmt<NCHW, NHWC>>
  %2 = ge.trans_data %d {src_format = "NC1HWC0", dst_format = "NHWC"} : (tensor<?x17x4x4xi8, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<?x17x4x4xi8, #ge.fmt<NCHW, NHWC>>
  func.return %1, %2 : tensor<1x8x8x3xf16, #ge.fmt<NHWC, FRACTAL_Z>>, tensor<?x17x4x4xi8, #ge.fmt<NCHW, NHWC>>
}

// CHECK-LABEL: func.func @fractal_nz
func.func @fractal_nz(%a: tensor<2x33x70xf32>, %b: tensor<16x16xbf16>) -> (tensor<2x33x70xf32>, tensor<16x16xbf16, #ge.fmt<ND, FRACTAL_NZ>>) {
  // CHECK: ge.trans_data %{{.*}} {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<2x33x70xf32>) -> tensor<2x33x70xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %0 = ge.trans_data %a {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<2x33x70xf32>) -> tensor<2x33x70xf32, #ge.fmt<ND, FRACTAL_NZ>>
  // CHECK: ge.trans_data %{{.*}} {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<2x33x70xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<2x33x70xf32>
  %1 = ge.trans_data %0 {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<2x33x70xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<2x33x70xf32>
  // CHECK: ge.trans_data %{{.*}} {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<16x16xbf16>) -> tensor<16x16xbf16, #ge.fmt<ND, FRACTAL_NZ>>
  %2 = ge.trans_data %b {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<16x16xbf16>) -> tensor<16x16xbf16, #ge.fmt<ND, FRACTAL_NZ>>
  func.return %1, %2 : tensor<2x33x70xf32>, tensor<16x16xbf16, #ge.fmt<ND, FRACTAL_NZ>>
}
