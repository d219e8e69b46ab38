// Optimization levels and GE's option names.
// RUN: ge-opt %s --ge-option ge.oo.level=O1 --strip-debuginfo | filecheck %s --check-prefix=O1
// RUN: ge-opt %s -p 'ge-optimize{level=3}' --strip-debuginfo | filecheck %s --check-prefix=O3
// RUN: ge-opt %s --ge-option ge.oo.level=O3 --ge-option ge.exec.precision_mode=force_fp16 --strip-debuginfo | filecheck %s --check-prefix=FP16
// RUN: ge-opt %s -p 'ge-optimize{level=0}' --strip-debuginfo | filecheck %s --check-prefix=O0
// RUN: ge-opt %s -p 'ge-optimize,lower-to-tasks,plan-memory,lower-to-streams' --ge-option ge.exec.disableReuseMemory=1 --ge-option ge.enableSingleStream=true | filecheck %s --check-prefix=GE
// RUN: ge-opt %s -p 'ge-optimize,lower-to-tasks,plan-memory,lower-to-streams' --ge-option ge.streamNum=2 --ge-option ge.socVersion=Ascend910 | filecheck %s --check-prefix=GE2
// RUN: not ge-opt %s -p 'ge-optimize,lower-to-tasks' --ge-option ge.socVersion=Ascend999 2>&1 | filecheck %s --check-prefix=SOC
// RUN: not ge-opt %s --ge-option ge.streamNum=two 2>&1 | filecheck %s --check-prefix=BADVALUE
// RUN: not ge-opt %s --ge-option ge.streamNum=2 2>&1 | filecheck %s --check-prefix=NOPASS
// RUN: not ge-opt %s --ge-option ge.oo.level=O7 2>&1 | filecheck %s --check-prefix=BADLEVEL
// RUN: not ge-opt %s -p 'ge-optimize{precision_mode=fast}' 2>&1 | filecheck %s --check-prefix=BADMODE

// Level 1 is cleanup and layout without fusion, as GE's O1.
// O1-NOT: fused.group
// O1:     ge.matmul
// O1:     ge.add
// O1:     ge.relu
// O3: fused.group "cube+elementwise" "cube_epilogue"
// FP16: fused.group "cube+elementwise" "cube_epilogue" {{.*}} -> tensor<64x64xf16
// O0-NOT: fused.group
// O0:     ge.add
// GE:     task.memory = {pool = [[POOL:[0-9]+]] : i64, no_reuse = [[POOL]] : i64
// GE:     stream.count = 1 : i64
// GE2:    stream.count = 2 : i64
// SOC:      ge-opt: error: --ge-option ge.socVersion: unknown target 'ascend999' (targets: ascend910, ascend910b)
// BADVALUE: ge-opt: error: --ge-option ge.streamNum: 'two' is not a non-negative integer
// NOPASS:   ge-opt: error: --ge-option ge.streamNum applies to lower-to-streams, which the pipeline does not run
// BADLEVEL: ge-opt: error: ge-optimize: level 'O7' is not one of 0, 1, 2, 3 (or O0..O3)
// BADMODE:  ge-opt: error: ge-optimize: precision_mode 'fast' is not one of force_fp16, force_fp32, allow_fp32_to_fp16, must_keep_origin_dtype, allow_mix_precision, allow_mix_precision_bf16
func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %v: tensor<64x64xf32>, %b: tensor<64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %0 = ge.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("/mm")
  %1 = ge.add %0, %b : (tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32> loc("/bias")
  %2 = ge.relu %1 : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("/relu")
  %3 = ge.matmul %x, %v : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("/mm2")
  %4 = ge.sigmoid %3 : (tensor<64x64xf32>) -> tensor<64x64xf32> loc("/sig")
  func.return %2, %4 : tensor<64x64xf32>, tensor<64x64xf32>
}
