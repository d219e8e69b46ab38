// RUN: ge-opt %s -p merge-trans-data --split-input-file | filecheck %s
// RUN: ge-opt %s -p merge-trans-data --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Two TransData of one value with the same conversion become one.

// CHECK-LABEL: func.func @siblings
// CHECK-NEXT:    %a = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"}
// CHECK-NEXT:    %s = ge.sigmoid %a
// CHECK-NEXT:    %r = ge.relu %a
// CHECK-NEXT:    func.return
// REMARK: applied merge on [/nz_a, /nz_b]: two ND -> FRACTAL_NZ conversions of one value merged
func.func @siblings(%x: tensor<32x64xf32>) -> (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>) {
  %a = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/nz_a")
  %s = ge.sigmoid %a : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %b = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/nz_b")
  %r = ge.relu %b : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
  func.return %s, %r : tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
}

// -----

// Not alike: one value converted to two different formats stays two TransData.

// CHECK-LABEL: func.func @different_conversions
// CHECK:         ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"}
// CHECK-NEXT:    ge.trans_data %x {src_format = "NCHW", dst_format = "FRACTAL_Z"}
func.func @different_conversions(%x: tensor<16x16x3x3xf16, #ge.fmt<NCHW>>) -> (tensor<16x16x3x3xf16, #ge.fmt<NCHW, NC1HWC0>>, tensor<16x16x3x3xf16, #ge.fmt<NCHW, FRACTAL_Z>>) {
  %a = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<16x16x3x3xf16, #ge.fmt<NCHW>>) -> tensor<16x16x3x3xf16, #ge.fmt<NCHW, NC1HWC0>>
  %b = ge.trans_data %x {src_format = "NCHW", dst_format = "FRACTAL_Z"} : (tensor<16x16x3x3xf16, #ge.fmt<NCHW>>) -> tensor<16x16x3x3xf16, #ge.fmt<NCHW, FRACTAL_Z>>
  func.return %a, %b : tensor<16x16x3x3xf16, #ge.fmt<NCHW, NC1HWC0>>, tensor<16x16x3x3xf16, #ge.fmt<NCHW, FRACTAL_Z>>
}

// -----

// An outer TransData dominates one in a nested region (merged); two in sibling regions (then and
// else) do not dominate each other (rejected).

// CHECK-LABEL: func.func @regions
// CHECK:         %a = ge.trans_data %x
// CHECK:         scf.if
// CHECK-NEXT:      ge.relu %a
// CHECK:         scf.if
// CHECK-NEXT:      %t = ge.trans_data %y
// CHECK:         } else {
// CHECK-NEXT:      %e = ge.trans_data %y
// REMARK: applied merge on [/outer, /nested]
// REMARK: rejected merge on [/then, /else]: ge.trans_data '/then' and ge.trans_data '/else' convert one value alike, but in sibling regions (neither dominates the other's users)
func.func @regions(%x: tensor<32x64xf32>, %y: tensor<16x16xf32>, %c: i1) -> (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<16x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) {
  %a = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/outer")
  %0 = scf.if %c -> (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>) {
    %b = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/nested")
    %r = ge.relu %b : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
    scf.yield %r : tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
  } else {
    scf.yield %a : tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
  }
  %1 = scf.if %c -> (tensor<16x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) {
    %t = ge.trans_data %y {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<16x16xf32>) -> tensor<16x16xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/then")
    scf.yield %t : tensor<16x16xf32, #ge.fmt<ND, FRACTAL_NZ>>
  } else {
    %e = ge.trans_data %y {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<16x16xf32>) -> tensor<16x16xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/else")
    scf.yield %e : tensor<16x16xf32, #ge.fmt<ND, FRACTAL_NZ>>
  }
  func.return %0, %1 : tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<16x16xf32, #ge.fmt<ND, FRACTAL_NZ>>
}
