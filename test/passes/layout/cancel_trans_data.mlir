// RUN: ge-opt %s -p cancel-trans-data --split-input-file | filecheck %s
// RUN: ge-opt %s -p cancel-trans-data --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// A -> B -> A: the users read the source; both TransData go.

// CHECK-LABEL: func.func @pair
// CHECK-NEXT:    %r = ge.relu %x : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
// CHECK-NEXT:    func.return %r
// REMARK: applied cancel-pair on [/to5hd, /back]: NCHW -> NC1HWC0 -> NCHW cancelled
func.func @pair(%x: tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> {
  %a = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>> loc("/to5hd")
  %b = ge.trans_data %a {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> loc("/back")
  %r = ge.relu %b : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
  func.return %r : tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
}

// -----

// The first TransData has another user: it stays, the pair's second half goes.

// CHECK-LABEL: func.func @first_kept
// CHECK-NEXT:    %a = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"}
// CHECK-NEXT:    %s = ge.sigmoid %a
// CHECK-NEXT:    %r = ge.relu %x : (tensor<32x32xf16>) -> tensor<32x32xf16>
// CHECK-NEXT:    func.return
func.func @first_kept(%x: tensor<32x32xf16>) -> (tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>, tensor<32x32xf16>) {
  %a = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x32xf16>) -> tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>
  %s = ge.sigmoid %a : (tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>
  %b = ge.trans_data %a {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x32xf16>
  %r = ge.relu %b : (tensor<32x32xf16>) -> tensor<32x32xf16>
  func.return %s, %r : tensor<32x32xf16, #ge.fmt<ND, FRACTAL_NZ>>, tensor<32x32xf16>
}

// -----

// Not a pair: A -> B -> C (another layout at the end) is left alone.

// CHECK-LABEL: func.func @chain
// CHECK:         ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"}
// CHECK-NEXT:    ge.trans_data %{{.*}} {src_format = "NC1HWC0", dst_format = "NHWC"}
func.func @chain(%x: tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NHWC>> {
  %a = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
  %b = ge.trans_data %a {src_format = "NC1HWC0", dst_format = "NHWC"} : (tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NHWC>>
  func.return %b : tensor<1x8x4x4xf32, #ge.fmt<NCHW, NHWC>>
}

// -----

// Rejected: the pair returns to the source's layout but under another type (an unencoded tensor
// comes back as #ge.fmt<NCHW>); the return needs exactly that type.

// CHECK-LABEL: func.func @types_differ
// CHECK:         ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"}
// CHECK-NEXT:    ge.trans_data %{{.*}} {src_format = "NC1HWC0", dst_format = "NCHW"}
// REMARK: rejected cancel-pair on [/in, /out]: ge.trans_data '/in' and ge.trans_data '/out' return to the layout of tensor<1x8x4x4xf32> but as tensor<1x8x4x4xf32, #ge.fmt<NCHW>>: their users would see another type
func.func @types_differ(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> {
  %a = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>> loc("/in")
  %b = ge.trans_data %a {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> loc("/out")
  func.return %b : tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
}
