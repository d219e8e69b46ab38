// RUN: ge-opt %s -p fuse-trans-data --split-input-file | filecheck %s
// RUN: ge-opt %s -p fuse-trans-data --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: ge-opt %s -p 'fuse-trans-data{target=ascend910}' --split-input-file --remarks 2>&1 | filecheck %s --check-prefix=A910

// On the 910B (the default target) a TransData between ND and FRACTAL_NZ joins the kernel next to
// it: the reader's load converts (prologue), else the producer's store (epilogue). On the 910 the
// MTE has no such channel: only a copy kernel beside a conversion takes it (@copies).

// CHECK-LABEL: func.func @matmuls
// CHECK-NEXT:    %r1 = fused.group "cube+elementwise" "cube_epilogue" (%x, %w1) : (tensor<32x64xf32>, tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>> {
// CHECK-NEXT:    ^bb0(%0: tensor<32x64xf32>, %1: tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>):
// CHECK-NEXT:      %a = ge.trans_data %0 {src_format = "ND", dst_format = "FRACTAL_NZ"}
// CHECK-NEXT:      %m1 = ge.matmul %a, %1
// CHECK-NEXT:      %r1_1 = ge.relu %m1
// CHECK-NEXT:      fused.yield %r1_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %m2 = ge.matmul %r1, %w2
// CHECK-NEXT:    %t = fused.group "elementwise" "with_trans_data" (%m2) : (tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<16x32xf32> {
// CHECK-NEXT:    ^bb0(%0: tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>):
// CHECK-NEXT:      %1 = ge.trans_data %0 {src_format = "FRACTAL_NZ", dst_format = "ND"}
// CHECK-NEXT:      %t_1 = ge.transpose %1
// CHECK-NEXT:      fused.yield %t_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %t
// REMARK: applied trans-data-on-the-move on [fused.group]: ND -> FRACTAL_NZ of its input converted on the load by its reader
// REMARK: applied trans-data-on-the-move on [ge.transpose]: FRACTAL_NZ -> ND of its input converted on the load by its reader
// A910: rejected trans-data-on-the-move on [ge.trans_data]: ND -> FRACTAL_NZ stays a kernel: the MTE of ascend910 does not convert ND <-> FRACTAL_NZ on the move
// A910-LABEL: func.func @matmuls
// A910:         ge.trans_data %x
// A910:         fused.group "elementwise" "with_trans_data" (%m2)
func.func @matmuls(%x: tensor<32x64xf32>, %w1: tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, %w2: tensor<48x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<16x32xf32> {
  %0 = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %r = fused.group "cube+elementwise" "cube_epilogue" (%0, %w1) : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>> {
  ^bb0(%a: tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, %b: tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>):
    %m1 = ge.matmul %a, %b : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
    %r1 = ge.relu %m1 : (tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
    fused.yield %r1 : tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
  }
  %m2 = ge.matmul %r, %w2 : (tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<48x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %1 = ge.trans_data %m2 {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x16xf32>
  %t = ge.transpose %1 {perm = array<i64: 1, 0>} : (tensor<32x16xf32>) -> tensor<16x32xf32>
  func.return %t : tensor<16x32xf32>
}

// -----

// The reader of the converted result is the graph's return: the producer stores both layouts (the
// NZ one for the next matmul).

// CHECK-LABEL: func.func @epilogue
// CHECK-NEXT:    %r, %nd = fused.group "cube+elementwise" "cube_epilogue" (%x, %w) : {{.*}} -> (tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<32x48xf32>) {
// CHECK:           %r_1 = ge.relu
// CHECK-NEXT:      %nd_1 = ge.trans_data %r_1 {src_format = "FRACTAL_NZ", dst_format = "ND"}
// CHECK-NEXT:      fused.yield %r_1, %nd_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %next = ge.matmul %r, %v
// CHECK-NEXT:    func.return %nd, %next
// REMARK: applied trans-data-on-the-move on [fused.group]: FRACTAL_NZ -> ND of its result converted on the store
func.func @epilogue(%x: tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, %w: tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, %v: tensor<48x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> (tensor<32x48xf32>, tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) {
  %g = fused.group "cube+elementwise" "cube_epilogue" (%x, %w) : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>> {
  ^bb0(%a: tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, %b: tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>):
    %m = ge.matmul %a, %b : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
    %r = ge.relu %m : (tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
    fused.yield %r : tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
  }
  %nd = ge.trans_data %g {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32>
  %next = ge.matmul %g, %v : (tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<48x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>
  func.return %nd, %next : tensor<32x48xf32>, tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>
}

// -----

// Two kernels read one conversion: each converts on its own load.

// CHECK-LABEL: func.func @two_readers
// CHECK-NEXT:    %p = fused.group "cube+elementwise" "with_trans_data" (%x, %w)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %nz = ge.trans_data %0 {src_format = "ND", dst_format = "FRACTAL_NZ"}
// CHECK-NEXT:      %p_1 = ge.matmul %nz
// CHECK:         %q = fused.group "cube+elementwise" "with_trans_data" (%x, %v)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %nz = ge.trans_data %0 {src_format = "ND", dst_format = "FRACTAL_NZ"}
// CHECK-NEXT:      %q_1 = ge.matmul %nz
// CHECK:         func.return %p, %q
// REMARK: applied trans-data-on-the-move on [ge.matmul, ge.matmul]: ND -> FRACTAL_NZ of its input converted on the load by each of its 2 readers

func.func @two_readers(%x: tensor<32x64xf32>, %w: tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, %v: tensor<64x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> (tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) {
  %nz = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %p = ge.matmul %nz, %w : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %q = ge.matmul %nz, %v : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>
  func.return %p, %q : tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>
}

// -----

// What stays a kernel, with the reason: a conversion between a graph input and the return, and one
// the MTE does not make (NC1HWC0 -> NCHW needs a transpose of the blocks) with no copy and no
// Vector kernel beside it.

// CHECK-LABEL: func.func @stays
// CHECK-NEXT:    %nz = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"}
// CHECK-NEXT:    %c = ge.trans_data %y {src_format = "NC1HWC0", dst_format = "NCHW"}
// REMARK: rejected trans-data-on-the-move on [ge.trans_data]: ND -> FRACTAL_NZ stays a kernel: its source comes from a graph input, not an AI Core kernel, and func.return reads it
// REMARK: rejected trans-data-on-the-move on [ge.trans_data]: NC1HWC0 -> NCHW stays a kernel: the MTE converts only between ND and FRACTAL_NZ on the move, no copy kernel (transpose, reshape, concat, slice ...) reads or writes it alone, and neither its readers nor its producer are Vector kernels

func.func @stays(%x: tensor<32x64xf32>, %y: tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) {
  %nz = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %c = ge.trans_data %y {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  func.return %nz, %c : tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
}

// -----

// Between NCHW and NC1HWC0 beside a Vector kernel that is no copy, the kernel converts the tile in
// its UB (Ascend C's TransDataTo5HD, a Vector instruction): f32 on the 910B, up to 16-bit types on
// the 910, whose f32 conversion stays a kernel.

// CHECK-LABEL: func.func @vector
// CHECK:         %m = fused.group "elementwise" "with_trans_data" (%s)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %d = ge.trans_data %0 {src_format = "NC1HWC0", dst_format = "NCHW"}
// CHECK-NEXT:      %m_1 = ge.max_pool %d
// CHECK:         %h = fused.group "elementwise" "with_trans_data" (%z)
// REMARK: applied trans-data-on-the-move on [ge.max_pool]: NC1HWC0 -> NCHW of its input converted in the UB (TransDataTo5HD) by its reader
// REMARK: applied trans-data-on-the-move on [ge.relu]: NC1HWC0 -> NCHW of its result converted in the UB (TransDataTo5HD)
// A910-LABEL: func.func @vector
// A910:         %d = ge.trans_data %s {src_format = "NC1HWC0", dst_format = "NCHW"}
// A910:         %h = fused.group "elementwise" "with_trans_data" (%z)
func.func @vector(%y: tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, %z: tensor<1x16x4x4xf16, #ge.fmt<NCHW, NC1HWC0>>) -> (tensor<1x16x2x2xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf16, #ge.fmt<NCHW>>) {
  %s = ge.relu %y : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
  %d = ge.trans_data %s {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %m = ge.max_pool %d {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x16x2x2xf32, #ge.fmt<NCHW>>
  %r = ge.relu %z : (tensor<1x16x4x4xf16, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf16, #ge.fmt<NCHW, NC1HWC0>>
  %h = ge.trans_data %r {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x16x4x4xf16, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf16, #ge.fmt<NCHW>>
  func.return %m, %h : tensor<1x16x2x2xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf16, #ge.fmt<NCHW>>
}

// -----

// A conversion next to a copy kernel (MovesData: transpose, reshape, slice ...) is done in the same
// copy on every target, as GE's TransData writes NHWC from NC1HWC0 in one kernel; a max pool moves
// data too but compares values: no copy (on the 910, whose TransDataTo5HD takes no f32, its
// conversion stays; on the 910B it converts in its UB, @vector).

// CHECK-LABEL: func.func @copies
// CHECK:         %t = fused.group "elementwise" "with_trans_data" (%r)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %c = ge.trans_data %0 {src_format = "NC1HWC0", dst_format = "NCHW"}
// CHECK-NEXT:      %t_1 = ge.transpose %c
// REMARK: applied trans-data-on-the-move on [ge.transpose]: NC1HWC0 -> NCHW of its input done in the same copy
// A910-LABEL: func.func @copies
// A910:         fused.group "elementwise" "with_trans_data"
// A910:         %d = ge.trans_data %s {src_format = "NC1HWC0", dst_format = "NCHW"}
// A910-NEXT:    %m = ge.max_pool %d
func.func @copies(%y: tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, %z: tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> (tensor<1x4x4x16xf32>, tensor<1x16x2x2xf32, #ge.fmt<NCHW>>) {
  %r = ge.relu %y : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
  %c = ge.trans_data %r {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %t = ge.transpose %c {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x4x4x16xf32>
  %s = ge.relu %z : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
  %d = ge.trans_data %s {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %m = ge.max_pool %d {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x16x2x2xf32, #ge.fmt<NCHW>>
  func.return %t, %m : tensor<1x4x4x16xf32>, tensor<1x16x2x2xf32, #ge.fmt<NCHW>>
}

// -----

// A conversion whose every reader is a copy is done in each (RexNet: two slices at channel 16 of
// a 27-channel conv result, not whole C0 blocks): each copy converts the part it copies.

// CHECK-LABEL: func.func @two_copies
// CHECK-NOT:     ge.trans_data %r
// CHECK:         %a = fused.group "elementwise" "with_trans_data" (%r
// CHECK:           ge.trans_data
// CHECK-NEXT:      ge.slice
// CHECK:         %b = fused.group "elementwise" "with_trans_data" (%r
// CHECK:           ge.trans_data
// CHECK-NEXT:      ge.slice
// REMARK: applied trans-data-on-the-move on [ge.slice, ge.slice]: NC1HWC0 -> NCHW of its input done in the same copy by each of its 2 readers
// A910-LABEL: func.func @two_copies
// A910-COUNT-2: fused.group "elementwise" "with_trans_data"
func.func @two_copies(%y: tensor<1x27x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> (tensor<1x16x2x2xf32, #ge.fmt<NCHW>>, tensor<1x11x2x2xf32, #ge.fmt<NCHW>>) {
  %r = ge.relu %y : (tensor<1x27x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x27x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
  %c = ge.trans_data %r {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x27x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x27x2x2xf32, #ge.fmt<NCHW>>
  %zero = ge.constant dense<0> : tensor<1xi64>
  %mid = ge.constant dense<16> : tensor<1xi64>
  %end = ge.constant dense<27> : tensor<1xi64>
  %one = ge.constant dense<1> : tensor<1xi64>
  %a = ge.slice %c, %zero, %mid, axes = %one : (tensor<1x27x2x2xf32, #ge.fmt<NCHW>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x16x2x2xf32, #ge.fmt<NCHW>>
  %b = ge.slice %c, %mid, %end, axes = %one : (tensor<1x27x2x2xf32, #ge.fmt<NCHW>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x11x2x2xf32, #ge.fmt<NCHW>>
  func.return %a, %b : tensor<1x16x2x2xf32, #ge.fmt<NCHW>>, tensor<1x11x2x2xf32, #ge.fmt<NCHW>>
}

// -----

// ... but not when one reader is no copy (a max pool compares values): no copy takes it. On the
// 910B the relu converts its result in its UB (TransDataTo5HD); on the 910 (no f32) it stays a kernel.

// CHECK-LABEL: func.func @copy_and_pool
// CHECK:         fused.group "elementwise" "with_trans_data" (%y)
// CHECK:         ge.slice
// CHECK:         ge.max_pool
// A910-LABEL: func.func @copy_and_pool
// A910:         %c = ge.trans_data %r {src_format = "NC1HWC0", dst_format = "NCHW"}
// A910:         ge.slice %c
// A910:         ge.max_pool %c
func.func @copy_and_pool(%y: tensor<1x27x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> (tensor<1x16x2x2xf32, #ge.fmt<NCHW>>, tensor<1x27x1x1xf32, #ge.fmt<NCHW>>) {
  %r = ge.relu %y : (tensor<1x27x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x27x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
  %c = ge.trans_data %r {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x27x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x27x2x2xf32, #ge.fmt<NCHW>>
  %zero = ge.constant dense<0> : tensor<1xi64>
  %mid = ge.constant dense<16> : tensor<1xi64>
  %one = ge.constant dense<1> : tensor<1xi64>
  %a = ge.slice %c, %zero, %mid, axes = %one : (tensor<1x27x2x2xf32, #ge.fmt<NCHW>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x16x2x2xf32, #ge.fmt<NCHW>>
  %m = ge.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x27x2x2xf32, #ge.fmt<NCHW>>) -> tensor<1x27x1x1xf32, #ge.fmt<NCHW>>
  func.return %a, %m : tensor<1x16x2x2xf32, #ge.fmt<NCHW>>, tensor<1x27x1x1xf32, #ge.fmt<NCHW>>
}
