// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @global_rank(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: ge.global_max_pool: operand 'X' must have rank >= 3 (N, C and spatial dims), got rank 2
  %0 = ge.global_max_pool %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @global_dtype(%x: tensor<2x3x4xi32>) -> tensor<2x3x1xi32> {
  // CHECK: ge.global_lp_pool: operand 'X' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.global_lp_pool %x : (tensor<2x3x4xi32>) -> tensor<2x3x1xi32>
  func.return %0 : tensor<2x3x1xi32>
}

// -----

func.func @global_lp_p(%x: tensor<2x3x4xf32>) -> tensor<2x3x1xf32> {
  // CHECK: ge.global_lp_pool: p must be a positive integer, got 0
  %0 = ge.global_lp_pool %x {p = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  func.return %0 : tensor<2x3x1xf32>
}

// -----

func.func @lp_p(%x: tensor<2x3x4xf32>) -> tensor<2x3x3xf32> {
  // CHECK: ge.lp_pool: p must be a positive integer, got -1
  %0 = ge.lp_pool %x {kernel_shape = array<i64: 2>, p = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x3xf32>
  func.return %0 : tensor<2x3x3xf32>
}

// -----

func.func @lp_kernel(%x: tensor<2x3x4xf32>) -> tensor<2x3x3xf32> {
  // CHECK: ge.lp_pool: kernel_shape is required
  %0 = ge.lp_pool %x : (tensor<2x3x4xf32>) -> tensor<2x3x3xf32>
  func.return %0 : tensor<2x3x3xf32>
}

// -----

func.func @lp_no_window(%x: tensor<2x3x4xf32>) -> tensor<2x3x1xf32> {
  // CHECK: ge.lp_pool: spatial axis 0 has no output: input size 4, pads 0+0, kernel extent 5, stride 1
  %0 = ge.lp_pool %x {kernel_shape = array<i64: 5>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  func.return %0 : tensor<2x3x1xf32>
}

// -----

func.func @unpool_indices_shape(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x3xi64>) -> tensor<1x2x4x4xf32> {
  // CHECK: ge.max_unpool: indices of shape (1, 2, 2, 3) must have X's shape (1, 2, 2, 2)
  %0 = ge.max_unpool %x, %i {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x3xi64>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @unpool_indices_type(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi32>) -> tensor<1x2x4x4xf32> {
  // CHECK: ge.max_unpool: operand 'I' has element type i32; expected one of i64
  %0 = ge.max_unpool %x, %i {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @unpool_kernel(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32> {
  // CHECK: ge.max_unpool: kernel_shape must have 2 values (1 per spatial axis), got 1
  %0 = ge.max_unpool %x, %i {kernel_shape = array<i64: 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @unpool_no_output(%x: tensor<1x2x1xf32>, %i: tensor<1x2x1xi64>) -> tensor<1x2x1xf32> {
  // CHECK: ge.max_unpool: spatial axis 0 has no output: the unpooled size is -1
  %0 = ge.max_unpool %x, %i {kernel_shape = array<i64: 1>, pads = array<i64: 1, 1>} : (tensor<1x2x1xf32>, tensor<1x2x1xi64>) -> tensor<1x2x1xf32>
  func.return %0 : tensor<1x2x1xf32>
}

// -----

func.func @unpool_output_shape_smaller(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x3x4xf32> {
  %s = ge.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  // CHECK: ge.max_unpool: output_shape [1, 2, 3, 4] is smaller than the unpooled size [1, 2, 4, 4]
  %0 = ge.max_unpool %x, %i, output_shape = %s {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>, tensor<4xi64>) -> tensor<1x2x3x4xf32>
  func.return %0 : tensor<1x2x3x4xf32>
}

// -----

func.func @unpool_output_shape_channels(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x3x4x4xf32> {
  %s = ge.constant dense<[1, 3, 4, 4]> : tensor<4xi64>
  // CHECK: ge.max_unpool: output_shape [1, 3, 4, 4] must keep X's N and C [1, 2]
  %0 = ge.max_unpool %x, %i, output_shape = %s {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>, tensor<4xi64>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @unpool_output_shape_length(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>, %s: tensor<2xi64>) -> tensor<1x2x?x?xf32> {
  // CHECK: ge.max_unpool: operand 'output_shape' must be 1-D with 4 values, got shape (2,)
  %0 = ge.max_unpool %x, %i, output_shape = %s {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>, tensor<2xi64>) -> tensor<1x2x?x?xf32>
  func.return %0 : tensor<1x2x?x?xf32>
}
