// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv: input channels 3 do not match weight channels 4 x group 1
  %0 = ge.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv_group_outputs(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // CHECK: ge.conv: output channels 6 are not divisible by group 4
  %0 = ge.conv %x, %w {group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_group_positive(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // CHECK: ge.conv: group must be positive, got 0
  %0 = ge.conv %x, %w {group = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_kernel_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x5x5xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv: kernel_shape [3, 3] does not match weight spatial dims [5, 5]
  %0 = ge.conv %x, %w {kernel_shape = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>, tensor<2x3x5x5xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv: pads must have 4 values (2 per spatial axis), got 3
  %0 = ge.conv %x, %w {pads = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv_negative_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv: pads must be non-negative, got [0, -1, 0, 0]
  %0 = ge.conv %x, %w {pads = array<i64: 0, -1, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv_strides(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv: strides must have 2 values (1 per spatial axis), got 3
  %0 = ge.conv %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv_dilations(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv: dilations must be positive, got [1, 0]
  %0 = ge.conv %x, %w {dilations = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv_auto_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv: auto_pad must be one of NOTSET, SAME_UPPER, SAME_LOWER, VALID, got "SAME"
  %0 = ge.conv %x, %w {auto_pad = "SAME"} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv_no_output(%x: tensor<1x3x2x8xf32>, %w: tensor<2x3x5x3xf32>) -> tensor<1x2x1x6xf32> {
  // CHECK: ge.conv: spatial axis 0 has no output: input size 2, pads 1+0, kernel extent 5, stride 1
  %0 = ge.conv %x, %w {pads = array<i64: 1, 0, 0, 0>} : (tensor<1x3x2x8xf32>, tensor<2x3x5x3xf32>) -> tensor<1x2x1x6xf32>
  func.return %0 : tensor<1x2x1x6xf32>
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv: weight rank 3 does not match input rank 4
  %0 = ge.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv_input_rank(%x: tensor<1x3xf32>, %w: tensor<2x3xf32>) -> tensor<1x2xf32> {
  // CHECK: ge.conv: operand 'X' must have rank >= 3 (N, C and spatial dims), got rank 2
  %0 = ge.conv %x, %w : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<1x2xf32>
  func.return %0 : tensor<1x2xf32>
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv: bias of shape (3,) does not match [2] output channels
  %0 = ge.conv %x, %w, B = %b : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @conv_int(%x: tensor<1x3x8x8xi32>, %w: tensor<2x3x3x3xi32>) -> tensor<1x2x6x6xi32> {
  // CHECK: ge.conv: operand 'X' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.conv %x, %w : (tensor<1x3x8x8xi32>, tensor<2x3x3x3xi32>) -> tensor<1x2x6x6xi32>
  func.return %0 : tensor<1x2x6x6xi32>
}

// -----

func.func @conv_result_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.conv: result #0 has type tensor<1x2x8x8xf32> but its operands imply tensor<1x2x6x6xf32, #ge.fmt<NCHW>>
  %0 = ge.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @pool_kernel_required(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  // CHECK: ge.max_pool: kernel_shape is required
  %0 = ge.max_pool %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @pool_kernel_rank(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  // CHECK: ge.avg_pool: kernel_shape must have 2 values (1 per spatial axis), got 1
  %0 = ge.avg_pool %x {kernel_shape = array<i64: 3>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}

// -----

func.func @pool_ceil_mode(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32> {
  // CHECK: ge.avg_pool: ceil_mode must be 0 or 1, got 2
  %0 = ge.avg_pool %x {kernel_shape = array<i64: 3, 3>, ceil_mode = 2 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32>
  func.return %0 : tensor<1x3x6x6xf32>
}

// -----

func.func @pool_count_include_pad(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32> {
  // CHECK: ge.avg_pool: count_include_pad must be 0 or 1, got 3
  %0 = ge.avg_pool %x {kernel_shape = array<i64: 3, 3>, count_include_pad = 3 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32>
  func.return %0 : tensor<1x3x6x6xf32>
}

// -----

func.func @pool_storage_order(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32> {
  // CHECK: ge.max_pool: storage_order must be 0 or 1, got 2
  %0 = ge.max_pool %x {kernel_shape = array<i64: 3, 3>, storage_order = 2 : i64} : (tensor<1x3x8x8xf32>) -> tensor<1x3x6x6xf32>
  func.return %0 : tensor<1x3x6x6xf32>
}

// -----

func.func @pool_indices_type(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x6x6xi32>) {
  // CHECK: ge.max_pool: result #1 has type tensor<1x3x6x6xi32> but its operands imply tensor<1x3x6x6xi64, #ge.fmt<NCHW>>
  %0, %1 = ge.max_pool %x {kernel_shape = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x6x6xi32>)
  func.return %0, %1 : tensor<1x3x6x6xf32>, tensor<1x3x6x6xi32>
}

// -----

func.func @avg_pool_int(%x: tensor<1x3x8x8xi8>) -> tensor<1x3x6x6xi8> {
  // CHECK: ge.avg_pool: operand 'X' has element type i8; expected one of f32, f16, bf16, f64
  %0 = ge.avg_pool %x {kernel_shape = array<i64: 3, 3>} : (tensor<1x3x8x8xi8>) -> tensor<1x3x6x6xi8>
  func.return %0 : tensor<1x3x6x6xi8>
}

// -----

func.func @global_pool_rank(%x: tensor<3x8xf32>) -> tensor<3x1xf32> {
  // CHECK: ge.global_avg_pool: operand 'X' must have rank >= 3 (N, C and spatial dims), got rank 2
  %0 = ge.global_avg_pool %x : (tensor<3x8xf32>) -> tensor<3x1xf32>
  func.return %0 : tensor<3x1xf32>
}

// -----

func.func @batch_norm_channels(%x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>, %d: tensor<4xf32>) -> tensor<2x3x4x4xf32> {
  // CHECK: ge.batch_norm: operand 'input_var' must have shape (3,), got (4,)
  %0 = ge.batch_norm %x, %c, %c, %c, %d : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  func.return %0 : tensor<2x3x4x4xf32>
}

// -----

func.func @batch_norm_rank(%x: tensor<3xf32>, %c: tensor<3xf32>) -> tensor<3xf32> {
  // CHECK: ge.batch_norm: operand 'X' must have rank >= 2 (N, C, ...), got rank 1
  %0 = ge.batch_norm %x, %c, %c, %c, %c : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @batch_norm_running_stats(%x: tensor<2x3xf32>, %c: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  // CHECK: ge.batch_norm: running_mean and running_var are results only in training mode (training_mode = 1)
  %0, %1, %2 = ge.batch_norm %x, %c, %c, %c, %c : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return %0, %1, %2 : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

func.func @batch_norm_training_mode(%x: tensor<2x3xf32>, %c: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: ge.batch_norm: training_mode must be 0 or 1, got 2
  %0 = ge.batch_norm %x, %c, %c, %c, %c {training_mode = 2 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @batch_norm_stats_dtype(%x: tensor<2x3xf32>, %c: tensor<3xf32>, %d: tensor<3xf16>) -> tensor<2x3xf32> {
  // CHECK: ge.batch_norm: operands 'input_mean' and 'input_var' must have one element type, got f32 and f16
  %0 = ge.batch_norm %x, %c, %c, %c, %d : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf16>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  // CHECK: ge.layer_norm: axis 2 is out of range for rank 2
  %0 = ge.layer_norm %x, %s {axis = 2 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_stash(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> tensor<2x8xf32> {
  // CHECK: ge.layer_norm: stash_type 7 is not one of 1 (f32), 10 (f16), 11 (f64), 16 (bf16)
  %0 = ge.layer_norm %x, %s {stash_type = 7 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %s: tensor<4xf32>) -> tensor<2x8xf32> {
  // CHECK: ge.layer_norm: operand 'Scale' of shape (4,) does not broadcast to (2, 8)
  %0 = ge.layer_norm %x, %s : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_stats_shape(%x: tensor<2x8xf32>, %s: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2xf32>) {
  // CHECK: ge.layer_norm: result #1 has type tensor<2xf32> but its operands imply tensor<2x1xf32>
  %0, %1 = ge.layer_norm %x, %s : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2xf32>)
  func.return %0, %1 : tensor<2x8xf32>, tensor<2xf32>
}

// -----

func.func @dropout_ratio() -> tensor<4xf32> {
  %x = ge.constant dense<1.0> : tensor<4xf32>
  %r = ge.constant dense<1.5> : tensor<f32>
  // CHECK: ge.dropout: ratio 1.5 must be in [0, 1)
  %0 = ge.dropout %x, ratio = %r : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @dropout_training_mode(%x: tensor<4xf32>, %t: tensor<i64>) -> tensor<4xf32> {
  // CHECK: ge.dropout: operand 'training_mode' has element type i64; expected one of i1
  %0 = ge.dropout %x, training_mode = %t : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @dropout_mask_type(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: ge.dropout: result #1 has type tensor<4xf32> but its operands imply tensor<4xi1>
  %0, %1 = ge.dropout %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @clip_scalar(%x: tensor<4xf32>, %m: tensor<2xf32>) -> tensor<4xf32> {
  // CHECK: ge.clip: operand 'min' must be a scalar, got shape (2,)
  %0 = ge.clip %x, min = %m : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @clip_dtype(%x: tensor<4xi32>, %m: tensor<i64>) -> tensor<4xi32> {
  // CHECK: ge.clip: operands 'input' and 'max' must have one element type, got i32 and i64
  %0 = ge.clip %x, max = %m : (tensor<4xi32>, tensor<i64>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK: ge.softmax: axis -3 is out of range for rank 2
  %0 = ge.softmax %x {axis = -3 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

func.func @gemm_inner(%a: tensor<8x64xf32>, %b: tensor<32x16xf32>) -> tensor<8x16xf32> {
  // CHECK: ge.gemm: inner dimensions 64 and 32 do not match
  %0 = ge.gemm %a, %b : (tensor<8x64xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  func.return %0 : tensor<8x16xf32>
}

// -----

func.func @gemm_bias(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x4xf32>) -> tensor<3x5xf32> {
  // CHECK: ge.gemm: operand 'C' of shape (3, 4) does not broadcast to (3, 5)
  %0 = ge.gemm %a, %b, C = %c : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<3x4xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  // CHECK: ge.gemm: operand 'A' must have rank 2, got rank 3
  %0 = ge.gemm %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @matmul_inner(%a: tensor<2x8x64xf32>, %b: tensor<32x16xf32>) -> tensor<2x8x16xf32> {
  // CHECK: ge.matmul: inner dimensions 64 and 32 do not match
  %0 = ge.matmul %a, %b : (tensor<2x8x64xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  func.return %0 : tensor<2x8x16xf32>
}

// -----

func.func @matmul_batch(%a: tensor<2x8x4xf32>, %b: tensor<3x4x16xf32>) -> tensor<2x8x16xf32> {
  // CHECK: ge.matmul: shapes (2,) and (3,) do not broadcast (dimension 0 of the result)
  %0 = ge.matmul %a, %b : (tensor<2x8x4xf32>, tensor<3x4x16xf32>) -> tensor<2x8x16xf32>
  func.return %0 : tensor<2x8x16xf32>
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) -> tensor<f32> {
  // CHECK: ge.matmul: operands must have rank >= 1, got shapes () and (4,)
  %0 = ge.matmul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @lrn_size(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: ge.lrn: size must be a positive channel count, got 0
  %0 = ge.lrn %x {size = 0 : i64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @lrn_without_size(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  // CHECK: ge.lrn: size must be a positive channel count, got None
  %0 = ge.lrn %x : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %0 : tensor<1x8x4x4xf32>
}

// -----

func.func @lrn_rank(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // CHECK: ge.lrn: X must be N x C x D1 ... (rank 3 or more), got rank 2
  %0 = ge.lrn %x {size = 3 : i64} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}
