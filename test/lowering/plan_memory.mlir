// RUN: ge-opt %s -p lower-to-tasks,plan-memory --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'lower-to-tasks,plan-memory{reuse=false}' --split-input-file | filecheck %s --check-prefix=NOREUSE

// A chain of 4 KiB tensors: /a and /b are dead by the time /c and /d write, so two slots suffice
// (the elementwise tasks even write in place); the graph output is not in the pool (-1).
// CHECK:      builtin.module attributes {{{.*}}task.memory = {pool = 4096 : i64, no_reuse = 12288 : i64, lower_bound = 4096 : i64
// CHECK:      task.kernel "/a" {{.*}}offsets = array<i64: 0>
// CHECK:      task.kernel "/b" {{.*}}offsets = array<i64: 0>
// CHECK:      task.kernel "/c" {{.*}}offsets = array<i64: 0>
// CHECK:      task.kernel "/d" {{.*}}offsets = array<i64: -1>
// NOREUSE:    builtin.module attributes {{{.*}}task.memory = {pool = 12288 : i64, no_reuse = 12288 : i64
func.func @chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = ge.relu %x : (tensor<1024xf32>) -> tensor<1024xf32> loc("/a")
  %1 = ge.sigmoid %0 : (tensor<1024xf32>) -> tensor<1024xf32> loc("/b")
  %2 = ge.tanh %1 : (tensor<1024xf32>) -> tensor<1024xf32> loc("/c")
  %3 = ge.relu %2 : (tensor<1024xf32>) -> tensor<1024xf32> loc("/d")
  func.return %3 : tensor<1024xf32>
}



// -----

// A value is planned in the bytes of its storage format: 1x3x8x8 f32 in NC1HWC0 is [1, 1, 8, 8, 8]
// (C padded to C0 = 8), 2048 bytes, not the 768 of its logical elements. The relu writes in place
// (same storage); the input and the output are not in the pool.
// CHECK:      builtin.module attributes {{{.*}}task.memory = {pool = 2048 : i64, no_reuse = 4096 : i64, lower_bound = 2048 : i64
// CHECK-SAME: io = 1536 : i64
// CHECK:      task.kernel "/to5hd" {{.*}}offsets = array<i64: 0>
// CHECK:      task.kernel "/relu" {{.*}}offsets = array<i64: 0>
// CHECK:      task.kernel "/back" {{.*}}offsets = array<i64: -1>
// NOREUSE:    builtin.module attributes {{{.*}}task.memory = {pool = 4096 : i64, no_reuse = 4096 : i64
func.func @padded(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW>> {
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> loc("/to5hd")
  %1 = ge.relu %0 : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> loc("/relu")
  %2 = ge.trans_data %1 {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW>> loc("/back")
  func.return %2 : tensor<1x3x8x8xf32, #ge.fmt<NCHW>>
}
