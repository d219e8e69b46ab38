// RUN: ge-opt %s -p "mixed-precision{mode=force_fp32}" | filecheck %s --check-prefix=FP32
// RUN: ge-opt %s -p "mixed-precision{mode=force_fp32}" --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=FP32-REMARK
// RUN: ge-opt %s -p "mixed-precision{mode=cube_fp16in_fp32out}" | filecheck %s --check-prefix=FP32
// RUN: ge-opt %s -p "mixed-precision{mode=allow_mix_precision}" | filecheck %s --check-prefix=SAME
// RUN: ge-opt %s -p "mixed-precision{mode=allow_mix_precision_bf16}" | filecheck %s --check-prefix=SAME
// RUN: ge-opt %s -p "mixed-precision{mode=force_fp16}" | filecheck %s --check-prefix=SAME
// RUN: ge-opt %s -p "mixed-precision{mode=allow_fp32_to_fp16}" | filecheck %s --check-prefix=SAME
// RUN: ge-opt %s -p "mixed-precision{mode=must_keep_origin_dtype}" | filecheck %s --check-prefix=SAME

// An f16 graph. force_fp32 computes in f32: the Cube op f16-in / f32-out (its inputs are f16
// values, exact in f32), vector ops in f32, except the op without an f32 kernel. The other
// modes leave it alone (they only lower f32).

// FP32-LABEL: func.func @half
// FP32-NEXT: %[[X:.*]] = ge.cast %x {to = 1 : i64} : (tensor<1x4x4xf16>) -> tensor<1x4x4xf32>
// FP32-NEXT: %[[M:.*]] = ge.matmul %[[X]], %[[X]] : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32> loc("/mm")
// FP32-NEXT: %[[T:.*]] = ge.tanh %[[M]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32> loc("/tanh")
// FP32-NEXT: %[[D:.*]] = ge.cast %[[T]] {to = 10 : i64} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// FP32-NEXT: %[[A:.*]] = ge.avg_pool %[[D]] {kernel_shape = array<i64: 1>} : (tensor<1x4x4xf16>) -> tensor<1x4x4xf16> loc("/avg")
// FP32-NEXT: func.return %[[A]] : tensor<1x4x4xf16>
// FP32-REMARK: remark: mixed-precision: applied cube on [/mm]: Cube op: f16 inputs, f32 accumulation and f32 output
// FP32-REMARK: remark: mixed-precision: applied force_fp32 on [/tanh]: computes in f32
// FP32-REMARK: remark: mixed-precision: rejected fp16-only on [/avg]: the device has no f32 kernel: keeps f16

// SAME-LABEL: func.func @half
// SAME-NEXT:  ge.matmul %x, %x : (tensor<1x4x4xf16>, tensor<1x4x4xf16>) -> tensor<1x4x4xf16> loc("/mm")
// SAME-NEXT:  ge.tanh %{{.*}} : (tensor<1x4x4xf16>) -> tensor<1x4x4xf16> loc("/tanh")
// SAME-NEXT:  ge.avg_pool %{{.*}} {kernel_shape = array<i64: 1>} : (tensor<1x4x4xf16>) -> tensor<1x4x4xf16> loc("/avg")
// SAME-NEXT:  func.return
func.func @half(%x: tensor<1x4x4xf16>) -> tensor<1x4x4xf16> {
  %0 = ge.matmul %x, %x : (tensor<1x4x4xf16>, tensor<1x4x4xf16>) -> tensor<1x4x4xf16> loc("/mm")
  %1 = ge.tanh %0 : (tensor<1x4x4xf16>) -> tensor<1x4x4xf16> loc("/tanh")
  %2 = ge.avg_pool %1 {kernel_shape = array<i64: 1>} : (tensor<1x4x4xf16>) -> tensor<1x4x4xf16> loc("/avg")
  func.return %2 : tensor<1x4x4xf16>
}
