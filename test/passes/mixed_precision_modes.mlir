// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=force_fp16}" | filecheck %s --check-prefix=FP16
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=allow_mix_precision}" | filecheck %s --check-prefix=MIX
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=allow_mix_precision_bf16}" | filecheck %s --check-prefix=BF16
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=allow_fp32_to_fp16}" | filecheck %s --check-prefix=CUBE
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=allow_fp32_to_bf16}" | filecheck %s --check-prefix=CUBEBF
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=force_fp32}" | filecheck %s --check-prefix=FP32
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=must_keep_origin_dtype}" | filecheck %s --check-prefix=KEEP
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=must_keep_origin_dtype}" --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=KEEP-REMARK
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=allow_fp32_to_fp16}" --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=CUBE-REMARK

// GE's aliases give the same result as the names they stand for.
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=allow_mix_precision_fp16}" > %t.alias
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=allow_mix_precision}" > %t.name
// RUN: diff %t.alias %t.name
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=cube_fp16in_fp32out}" > %t.alias
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=force_fp32}" > %t.name
// RUN: diff %t.alias %t.name

// An f32 graph: force_fp32 and must_keep_origin_dtype leave it exactly as it is.
// RUN: ge-opt %s --split-input-file > %t.plain
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=force_fp32}" > %t.fp32
// RUN: ge-opt %s --split-input-file -p "mixed-precision{mode=must_keep_origin_dtype}" > %t.keep
// RUN: diff %t.plain %t.fp32
// RUN: diff %t.plain %t.keep

// A Cube op (conv), a gray op (relu), a black op (reduce_mean), a gray op with an f32 input
// (sub) and an op the device has no f32 kernel for (avg_pool), in every mode.

// FP16-LABEL: func.func @modes
// FP16:      ge.conv {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/conv")
// FP16-NEXT: ge.relu {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/relu")
// FP16-NEXT: ge.reduce_mean {{.*}} -> tensor<1x1x1x1xf16, #ge.fmt<NCHW>> loc("/mean")
// FP16-NEXT: ge.sub {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/sub")
// FP16-NEXT: ge.avg_pool {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/avg")
// FP16-NEXT: ge.cast {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>>
// FP16-NEXT: func.return

// MIX-LABEL: func.func @modes
// MIX:       %[[C:.*]] = ge.conv {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/conv")
// MIX-NEXT:  %[[R:.*]] = ge.relu %[[C]] {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/relu")
// MIX-NEXT:  %[[UP:.*]] = ge.cast %[[R]] {to = 1 : i64} {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>>
// MIX-NEXT:  %[[M:.*]] = ge.reduce_mean %[[UP]] {{.*}} -> tensor<1x1x1x1xf32, #ge.fmt<NCHW>> loc("/mean")
// MIX-NEXT:  %[[S:.*]] = ge.sub %[[UP]], %[[M]] {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/sub")
// MIX-NEXT:  %[[DOWN:.*]] = ge.cast %[[S]] {to = 10 : i64} {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>>
// MIX-NEXT:  %[[A:.*]] = ge.avg_pool %[[DOWN]] {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/avg")
// MIX-NEXT:  %[[OUT:.*]] = ge.cast %[[A]] {to = 1 : i64} {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>>
// MIX-NEXT:  func.return %[[OUT]]

// BF16-LABEL: func.func @modes
// BF16:      ge.cast %x {to = 16 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xbf16>
// BF16:      ge.conv {{.*}} -> tensor<1x2x4x4xbf16, #ge.fmt<NCHW>> loc("/conv")
// BF16-NEXT: ge.relu {{.*}} -> tensor<1x2x4x4xbf16, #ge.fmt<NCHW>> loc("/relu")
// BF16-NEXT: ge.cast {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>>
// BF16-NEXT: ge.reduce_mean {{.*}} -> tensor<1x1x1x1xf32, #ge.fmt<NCHW>> loc("/mean")
// BF16-NEXT: ge.sub {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/sub")
// BF16-NEXT: ge.cast {{.*}} {to = 10 : i64} {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>>
// BF16-NEXT: ge.avg_pool {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/avg")

// CUBE-LABEL: func.func @modes
// CUBE:      ge.conv {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/conv")
// CUBE-NEXT: ge.cast {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>>
// CUBE-NEXT: ge.relu {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/relu")
// CUBE-NEXT: ge.reduce_mean {{.*}} -> tensor<1x1x1x1xf32, #ge.fmt<NCHW>> loc("/mean")
// CUBE-NEXT: ge.sub {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/sub")
// CUBE-NEXT: ge.cast {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>>
// CUBE-NEXT: ge.avg_pool {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>> loc("/avg")
// CUBE-REMARK: remark: mixed-precision: applied cube on [/conv]: Cube op: f16 inputs, f32 accumulation
// CUBE-REMARK: remark: mixed-precision: rejected vector on [/relu]: has an f32 kernel: keeps f32
// CUBE-REMARK: remark: mixed-precision: applied fp16-only on [/avg]: the device has no f32 kernel: computes in f16

// CUBEBF-LABEL: func.func @modes
// CUBEBF:      ge.conv {{.*}} -> tensor<1x2x4x4xbf16, #ge.fmt<NCHW>> loc("/conv")
// CUBEBF-NEXT: ge.cast {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>>
// CUBEBF-NEXT: ge.relu {{.*}} -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/relu")

// FP32-LABEL: func.func @modes
// FP32-NOT:  ge.cast
// FP32-NOT:  f16
// FP32:      func.return
// KEEP-LABEL: func.func @modes
// KEEP-NOT:  ge.cast
// KEEP-NOT:  f16
// KEEP:      func.return
// KEEP-REMARK: remark: mixed-precision: note fp16-only on [/avg]: the device has no f32 kernel for this op; GE rejects must_keep_origin_dtype here
func.func @modes(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> {
  %0 = ge.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/conv")
  %1 = ge.relu %0 : (tensor<1x2x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/relu")
  %2 = ge.reduce_mean %1 : (tensor<1x2x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x1x1x1xf32, #ge.fmt<NCHW>> loc("/mean")
  %3 = ge.sub %1, %2 : (tensor<1x2x4x4xf32, #ge.fmt<NCHW>>, tensor<1x1x1x1xf32, #ge.fmt<NCHW>>) -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/sub")
  %4 = ge.avg_pool %3 {kernel_shape = array<i64: 1, 1>} : (tensor<1x2x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/avg")
  func.return %4 : tensor<1x2x4x4xf32, #ge.fmt<NCHW>>
}
