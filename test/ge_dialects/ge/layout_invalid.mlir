// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @src_format_mismatch(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {
  // CHECK: ge.trans_data: src_format NHWC does not match the operand's storage format NCHW
  %0 = ge.trans_data %x {src_format = "NHWC", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
  func.return %0 : tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
}

// -----

func.func @nothing_to_convert(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW>> {
  // CHECK: ge.trans_data: src_format and dst_format are both NCHW: nothing to convert
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NCHW"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW>>
  func.return %0 : tensor<1x3x8x8xf32, #ge.fmt<NCHW>>
}

// -----

func.func @dst_format_mismatch(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NHWC>> {
  // CHECK: ge.trans_data: result storage format NHWC does not match dst_format NC1HWC0
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NHWC>>
  func.return %0 : tensor<1x3x8x8xf32, #ge.fmt<NCHW, NHWC>>
}

// -----

func.func @unknown_format(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW>> {
  // CHECK: ge.trans_data: dst_format: unknown storage format NC4HW4
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC4HW4"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW>>
  func.return %0 : tensor<1x3x8x8xf32, #ge.fmt<NCHW>>
}

// -----

func.func @image_format_rank(%x: tensor<3x8x8xf32>) -> tensor<3x8x8xf32, #ge.fmt<ND, NC1HWC0>> {
  // CHECK: ge.trans_data: dst_format: NC1HWC0 needs a 4-D NCHW or NHWC tensor, got origin ND of rank 3
  %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"} : (tensor<3x8x8xf32>) -> tensor<3x8x8xf32, #ge.fmt<ND, NC1HWC0>>
  func.return %0 : tensor<3x8x8xf32, #ge.fmt<ND, NC1HWC0>>
}

// -----

func.func @no_c0(%x: tensor<1x3x8x8xf64, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf64, #ge.fmt<NCHW, NC1HWC0>> {
  // CHECK: ge.trans_data: dst_format: NC1HWC0 has no C0 for element type f64
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf64, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf64, #ge.fmt<NCHW, NC1HWC0>>
  func.return %0 : tensor<1x3x8x8xf64, #ge.fmt<NCHW, NC1HWC0>>
}

// -----

func.func @dynamic_channels(%x: tensor<1x?x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x?x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {
  // CHECK: ge.trans_data: dst_format: NC1HWC0 needs static dims [1] (they are split into blocks)
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x?x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x?x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
  func.return %0 : tensor<1x?x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
}

// -----

func.func @nz_rank(%x: tensor<64xf16>) -> tensor<64xf16, #ge.fmt<ND, FRACTAL_NZ>> {
  // CHECK: ge.trans_data: dst_format: FRACTAL_NZ needs rank >= 2, got rank 1
  %0 = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<64xf16>) -> tensor<64xf16, #ge.fmt<ND, FRACTAL_NZ>>
  func.return %0 : tensor<64xf16, #ge.fmt<ND, FRACTAL_NZ>>
}

// -----

func.func @origin_changes(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NHWC, NC1HWC0>> {
  // CHECK: ge.trans_data: origin format changes from NCHW to NHWC
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NHWC, NC1HWC0>>
  func.return %0 : tensor<1x3x8x8xf32, #ge.fmt<NHWC, NC1HWC0>>
}

// -----

func.func @shape_changes(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x4x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {
  // CHECK: ge.trans_data: result #0 has type tensor<1x4x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> but its operands imply tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x4x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
  func.return %0 : tensor<1x4x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
}

// -----

func.func @dtype_changes(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf16, #ge.fmt<NCHW, NC1HWC0>> {
  // CHECK: ge.trans_data: result #0 has type tensor<1x3x8x8xf16, #ge.fmt<NCHW, NC1HWC0>> but its operands imply tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf16, #ge.fmt<NCHW, NC1HWC0>>
  func.return %0 : tensor<1x3x8x8xf16, #ge.fmt<NCHW, NC1HWC0>>
}

// -----

func.func @missing_property(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {
  // CHECK: dst_format
  %0 = ge.trans_data %x {src_format = "NCHW"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
  func.return %0 : tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
}
