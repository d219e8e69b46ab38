// RUN: ge-opt %s -p 'assign-formats,adjust-hw-layout' --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'assign-formats,adjust-hw-layout{outputs=false}' --split-input-file | filecheck %s --check-prefix=INPUTS
// RUN: ge-opt %s -p 'assign-formats,adjust-hw-layout' --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: ge-opt %s --ge-option is_input_adjust_hw_layout=true --ge-option is_output_adjust_hw_layout=1 --split-input-file | filecheck %s --check-prefix=GE
// RUN: not ge-opt %s --ge-option is_input_adjust_hw_layout=yes 2>&1 | filecheck %s --check-prefix=BADVALUE

// An image read by a conv is given in NC1HWC0 and the conv's feature map returned in it: both
// TransData go (GE's is_input_adjust_hw_layout / is_output_adjust_hw_layout).

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {ge.name = "image"}, %w: tensor<16x3x3x3xf32>) -> (tensor<1x16x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {ge.name = "features"})
// CHECK-NOT:     ge.trans_data
// CHECK:         %y = ge.conv %x, %w
// CHECK:         func.return %r : tensor<1x16x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
// INPUTS-LABEL: func.func @main
// INPUTS-SAME:    (%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {ge.name = "image"}, %w: tensor<16x3x3x3xf32>) -> (tensor<1x16x8x8xf32> {ge.name = "features"})
// INPUTS:         ge.trans_data %r {src_format = "NC1HWC0", dst_format = "ND"}
// REMARK: applied input on [func.func]: input 'image' is given in NC1HWC0: no TransData
// REMARK: applied output on [func.func]: output 'features' is returned in NC1HWC0: no TransData
// GE:      func.func @main(%{{.*}}: tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {ge.name = "image"}, %{{.*}}: tensor<16x3x3x3xf32>) -> (tensor<1x16x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {ge.name = "features"})
// BADVALUE: ge-opt: error: --ge-option is_input_adjust_hw_layout: 'yes' is not 0, 1, true or false
func.func @main(%x: tensor<1x3x8x8xf32> {ge.name = "image"}, %w: tensor<16x3x3x3xf32>) -> (tensor<1x16x8x8xf32> {ge.name = "features"}) {
  %y = ge.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32> loc("/conv")
  %r = ge.relu %y : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("/relu")
  func.return %r : tensor<1x16x8x8xf32>
}

// -----

// The graph's other boundaries stay: an image also read as it is (the add), a matrix read in
// FRACTAL_NZ (GE's options give NC1HWC0 only), a result converted from FRACTAL_NZ, a result also
// read inside the graph (returned as stored: its TransData stays for the add).

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%x: tensor<1x8x4x4xf32> {ge.name = "image"}, %w: tensor<16x8x1x1xf32>, %a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x16x4x4xf32>, tensor<32x32xf32>, tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>)
// CHECK:         %[[IMAGE:.*]] = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"}
// CHECK:         %s = ge.add %x, %x
// CHECK:         %[[NZ:.*]] = ge.trans_data %a {src_format = "ND", dst_format = "FRACTAL_NZ"}
// CHECK:         %[[BACK:.*]] = ge.trans_data %y {src_format = "NC1HWC0", dst_format = "ND"}
// CHECK:         %t = ge.add %[[BACK]], %[[BACK]]
// CHECK:         ge.trans_data %m {src_format = "FRACTAL_NZ", dst_format = "ND"}
// CHECK:         func.return %s, %t, %{{.*}}, %y : tensor<1x8x4x4xf32>, tensor<1x16x4x4xf32>, tensor<32x32xf32>, tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
func.func @main(%x: tensor<1x8x4x4xf32> {ge.name = "image"}, %w: tensor<16x8x1x1xf32>, %a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x16x4x4xf32>, tensor<32x32xf32>, tensor<1x16x4x4xf32>) {
  %y = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32> loc("/conv")
  %s = ge.add %x, %x : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("/plain")
  %m = ge.matmul %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> loc("/mm")
  %t = ge.add %y, %y : (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32> loc("/twice")
  func.return %s, %t, %m, %y : tensor<1x8x4x4xf32>, tensor<1x16x4x4xf32>, tensor<32x32xf32>, tensor<1x16x4x4xf32>
}
