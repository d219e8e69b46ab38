// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier error of the backward conv and pool ops, one per split.

func.func @input_dy_rank(%dy: tensor<1x6xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x4x9x9xf32> {
  // CHECK: ge.conv_backprop_input: operand 'dy' must have rank >= 3 (N, C and spatial dims), got rank 2
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 9, 9>} : (tensor<1x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x4x9x9xf32>
  func.return %0 : tensor<1x4x9x9xf32>
}

// -----

func.func @input_weight_rank(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3xf32>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: weight rank 3 does not match dy rank 4
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 9, 9>} : (tensor<1x6x7x7xf32>, tensor<6x2x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_dtype(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3x3xf16>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: operands 'dy' and 'W' must have one element type, got f32 and f16
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 9, 9>} : (tensor<1x6x7x7xf32>, tensor<6x2x3x3xf16>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_int(%dy: tensor<1x6x7x7xi32>, %w: tensor<6x2x3x3xi32>) -> tensor<1x2x9x9xi32> {
  // CHECK: ge.conv_backprop_input: operand 'dy' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 9, 9>} : (tensor<1x6x7x7xi32>, tensor<6x2x3x3xi32>) -> tensor<1x2x9x9xi32>
  func.return %0 : tensor<1x2x9x9xi32>
}

// -----

func.func @input_shape_missing(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: input_shape is required
  %0 = ge.conv_backprop_input %dy, %w : (tensor<1x6x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_shape_rank(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: input_shape [1, 2, 9] must have 4 values (the rank of dy)
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 9>} : (tensor<1x6x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_shape_positive(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: input_shape must be positive, got [1, 2, 0, 9]
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 0, 9>} : (tensor<1x6x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_channels(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x5x9x9xf32> {
  // CHECK: ge.conv_backprop_input: input channels 5 do not match weight channels 2 x group 2
  %0 = ge.conv_backprop_input %dy, %w {group = 2 : i64, input_shape = array<i64: 1, 5, 9, 9>} : (tensor<1x6x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x5x9x9xf32>
  func.return %0 : tensor<1x5x9x9xf32>
}

// -----

func.func @input_group_outputs(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x4x9x9xf32> {
  // CHECK: ge.conv_backprop_input: output channels 6 are not divisible by group 4
  %0 = ge.conv_backprop_input %dy, %w {group = 4 : i64, input_shape = array<i64: 1, 4, 9, 9>} : (tensor<1x6x7x7xf32>, tensor<6x1x3x3xf32>) -> tensor<1x4x9x9xf32>
  func.return %0 : tensor<1x4x9x9xf32>
}

// -----

func.func @input_group_positive(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: group must be positive, got 0
  %0 = ge.conv_backprop_input %dy, %w {group = 0 : i64, input_shape = array<i64: 1, 2, 9, 9>} : (tensor<1x6x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_dy_channels(%dy: tensor<1x5x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: operand 'dy' has shape (1, 5, 7, 7), but the forward output of input_shape [1, 2, 9, 9] and weight (6, 2, 3, 3) is (1, 6, 7, 7)
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 9, 9>} : (tensor<1x5x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_shape_vs_dy(%dy: tensor<1x6x4x4xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x11x11xf32> {
  // CHECK: ge.conv_backprop_input: operand 'dy' has shape (1, 6, 4, 4), but the forward output of input_shape [1, 2, 11, 11] and weight (6, 2, 3, 3) is (1, 6, 5, 5)
  %0 = ge.conv_backprop_input %dy, %w {strides = array<i64: 2, 2>, input_shape = array<i64: 1, 2, 11, 11>} : (tensor<1x6x4x4xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x11x11xf32>
  func.return %0 : tensor<1x2x11x11xf32>
}

// -----

func.func @input_batch(%dy: tensor<2x6x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: operand 'dy' has shape (2, 6, 7, 7), but the forward output of input_shape [1, 2, 9, 9] and weight (6, 2, 3, 3) is (1, 6, 7, 7)
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 9, 9>} : (tensor<2x6x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_pads(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: pads must have 4 values (2 per spatial axis), got 3
  %0 = ge.conv_backprop_input %dy, %w {pads = array<i64: 1, 1, 1>, input_shape = array<i64: 1, 2, 9, 9>} : (tensor<1x6x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_strides(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32> {
  // CHECK: ge.conv_backprop_input: strides must be positive, got [0, 1]
  %0 = ge.conv_backprop_input %dy, %w {strides = array<i64: 0, 1>, input_shape = array<i64: 1, 2, 9, 9>} : (tensor<1x6x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x9x9xf32>
  func.return %0 : tensor<1x2x9x9xf32>
}

// -----

func.func @input_no_window(%dy: tensor<1x6x1x1xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x2x9xf32> {
  // CHECK: ge.conv_backprop_input: spatial axis 0 has no output: input size 2, pads 0+0, kernel extent 3, stride 1
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 2, 9>} : (tensor<1x6x1x1xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x2x9xf32>
  func.return %0 : tensor<1x2x2x9xf32>
}

// -----

func.func @input_result_type(%dy: tensor<1x6x7x7xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x2x9x8xf32> {
  // CHECK: ge.conv_backprop_input: result #0 has type tensor<1x2x9x8xf32> but its operands imply tensor<1x2x9x9xf32, #ge.fmt<NCHW>>
  %0 = ge.conv_backprop_input %dy, %w {input_shape = array<i64: 1, 2, 9, 9>} : (tensor<1x6x7x7xf32>, tensor<6x2x3x3xf32>) -> tensor<1x2x9x8xf32>
  func.return %0 : tensor<1x2x9x8xf32>
}

// -----

func.func @filter_x_rank(%x: tensor<1x2xf32>, %dy: tensor<1x6x7x7xf32>) -> tensor<6x2x3x3xf32> {
  // CHECK: ge.conv_backprop_filter: operand 'x' must have rank >= 3 (N, C and spatial dims), got rank 2
  %0 = ge.conv_backprop_filter %x, %dy {filter_shape = array<i64: 6, 2, 3, 3>} : (tensor<1x2xf32>, tensor<1x6x7x7xf32>) -> tensor<6x2x3x3xf32>
  func.return %0 : tensor<6x2x3x3xf32>
}

// -----

func.func @filter_shape_missing(%x: tensor<1x2x9x9xf32>, %dy: tensor<1x6x7x7xf32>) -> tensor<6x2x3x3xf32> {
  // CHECK: ge.conv_backprop_filter: filter_shape is required
  %0 = ge.conv_backprop_filter %x, %dy : (tensor<1x2x9x9xf32>, tensor<1x6x7x7xf32>) -> tensor<6x2x3x3xf32>
  func.return %0 : tensor<6x2x3x3xf32>
}

// -----

func.func @filter_shape_rank(%x: tensor<1x2x9x9xf32>, %dy: tensor<1x6x7x7xf32>) -> tensor<6x2x3x3xf32> {
  // CHECK: ge.conv_backprop_filter: filter_shape [6, 2, 3] must have 4 values (the rank of dy)
  %0 = ge.conv_backprop_filter %x, %dy {filter_shape = array<i64: 6, 2, 3>} : (tensor<1x2x9x9xf32>, tensor<1x6x7x7xf32>) -> tensor<6x2x3x3xf32>
  func.return %0 : tensor<6x2x3x3xf32>
}

// -----

func.func @filter_channels(%x: tensor<1x2x9x9xf32>, %dy: tensor<1x6x7x7xf32>) -> tensor<6x3x3x3xf32> {
  // CHECK: ge.conv_backprop_filter: input channels 2 do not match weight channels 3 x group 1
  %0 = ge.conv_backprop_filter %x, %dy {filter_shape = array<i64: 6, 3, 3, 3>} : (tensor<1x2x9x9xf32>, tensor<1x6x7x7xf32>) -> tensor<6x3x3x3xf32>
  func.return %0 : tensor<6x3x3x3xf32>
}

// -----

func.func @filter_dy(%x: tensor<1x2x9x9xf32>, %dy: tensor<1x6x7x6xf32>) -> tensor<6x2x3x3xf32> {
  // CHECK: ge.conv_backprop_filter: operand 'dy' has shape (1, 6, 7, 6), but the forward output of x (1, 2, 9, 9) and filter_shape [6, 2, 3, 3] is (1, 6, 7, 7)
  %0 = ge.conv_backprop_filter %x, %dy {filter_shape = array<i64: 6, 2, 3, 3>} : (tensor<1x2x9x9xf32>, tensor<1x6x7x6xf32>) -> tensor<6x2x3x3xf32>
  func.return %0 : tensor<6x2x3x3xf32>
}

// -----

func.func @filter_dy_rank(%x: tensor<1x2x9x9xf32>, %dy: tensor<1x6x7xf32>) -> tensor<6x2x3x3xf32> {
  // CHECK: ge.conv_backprop_filter: operand 'dy' has shape (1, 6, 7), but the forward output of x (1, 2, 9, 9) and filter_shape [6, 2, 3, 3] is (1, 6, 7, 7)
  %0 = ge.conv_backprop_filter %x, %dy {filter_shape = array<i64: 6, 2, 3, 3>} : (tensor<1x2x9x9xf32>, tensor<1x6x7xf32>) -> tensor<6x2x3x3xf32>
  func.return %0 : tensor<6x2x3x3xf32>
}

// -----

func.func @filter_dtype(%x: tensor<1x2x9x9xf32>, %dy: tensor<1x6x7x7xf64>) -> tensor<6x2x3x3xf32> {
  // CHECK: ge.conv_backprop_filter: operands 'x' and 'dy' must have one element type, got f32 and f64
  %0 = ge.conv_backprop_filter %x, %dy {filter_shape = array<i64: 6, 2, 3, 3>} : (tensor<1x2x9x9xf32>, tensor<1x6x7x7xf64>) -> tensor<6x2x3x3xf32>
  func.return %0 : tensor<6x2x3x3xf32>
}

// -----

func.func @filter_dilations(%x: tensor<1x2x9x9xf32>, %dy: tensor<1x6x7x7xf32>) -> tensor<6x2x3x3xf32> {
  // CHECK: ge.conv_backprop_filter: dilations must have 2 values (1 per spatial axis), got 1
  %0 = ge.conv_backprop_filter %x, %dy {dilations = array<i64: 2>, filter_shape = array<i64: 6, 2, 3, 3>} : (tensor<1x2x9x9xf32>, tensor<1x6x7x7xf32>) -> tensor<6x2x3x3xf32>
  func.return %0 : tensor<6x2x3x3xf32>
}

// -----

func.func @max_kernel_missing(%x: tensor<1x2x8x8xf32>, %dy: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.max_pool_grad: kernel_shape is required
  %0 = ge.max_pool_grad %x, %dy {strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @max_dy(%x: tensor<1x2x8x8xf32>, %dy: tensor<1x2x3x4xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.max_pool_grad: operand 'dy' has shape (1, 2, 3, 4), but the forward output of x (1, 2, 8, 8) is (1, 2, 4, 4)
  %0 = ge.max_pool_grad %x, %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @max_dy_channels(%x: tensor<1x2x8x8xf32>, %dy: tensor<1x3x4x4xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.max_pool_grad: operand 'dy' has shape (1, 3, 4, 4), but the forward output of x (1, 2, 8, 8) is (1, 2, 4, 4)
  %0 = ge.max_pool_grad %x, %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @max_ceil(%x: tensor<1x2x8x8xf32>, %dy: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.max_pool_grad: ceil_mode must be 0 or 1, got 2
  %0 = ge.max_pool_grad %x, %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @max_int(%x: tensor<1x2x8x8xi8>, %dy: tensor<1x2x4x4xi8>) -> tensor<1x2x8x8xi8> {
  // CHECK: ge.max_pool_grad: operand 'x' has element type i8; expected one of f32, f16, bf16, f64
  %0 = ge.max_pool_grad %x, %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xi8>, tensor<1x2x4x4xi8>) -> tensor<1x2x8x8xi8>
  func.return %0 : tensor<1x2x8x8xi8>
}

// -----

func.func @max_dtype(%x: tensor<1x2x8x8xf32>, %dy: tensor<1x2x4x4xf16>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.max_pool_grad: operands 'x' and 'dy' must have one element type, got f32 and f16
  %0 = ge.max_pool_grad %x, %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>, tensor<1x2x4x4xf16>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @avg_count(%dy: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.avg_pool_grad: count_include_pad must be 0 or 1, got 2
  %0 = ge.avg_pool_grad %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, count_include_pad = 2 : i64, input_shape = array<i64: 1, 2, 8, 8>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @avg_input_shape_missing(%dy: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.avg_pool_grad: input_shape is required
  %0 = ge.avg_pool_grad %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @avg_input_shape_vs_dy(%dy: tensor<1x2x4x4xf32>) -> tensor<1x2x10x8xf32> {
  // CHECK: ge.avg_pool_grad: operand 'dy' has shape (1, 2, 4, 4), but the forward output of input_shape [1, 2, 10, 8] is (1, 2, 5, 4)
  %0 = ge.avg_pool_grad %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, input_shape = array<i64: 1, 2, 10, 8>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x10x8xf32>
  func.return %0 : tensor<1x2x10x8xf32>
}

// -----

func.func @avg_kernel_rank(%dy: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.avg_pool_grad: kernel_shape must have 2 values (1 per spatial axis), got 3
  %0 = ge.avg_pool_grad %dy {kernel_shape = array<i64: 2, 2, 2>, input_shape = array<i64: 1, 2, 8, 8>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @avg_dy_rank(%dy: tensor<1x2xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.avg_pool_grad: operand 'dy' must have rank >= 3 (N, C and spatial dims), got rank 2
  %0 = ge.avg_pool_grad %dy {kernel_shape = array<i64: 2, 2>, input_shape = array<i64: 1, 2, 8, 8>} : (tensor<1x2xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}

// -----

func.func @avg_negative_pads(%dy: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  // CHECK: ge.avg_pool_grad: pads must be non-negative, got [0, -1, 0, 0]
  %0 = ge.avg_pool_grad %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, -1, 0, 0>, input_shape = array<i64: 1, 2, 8, 8>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  func.return %0 : tensor<1x2x8x8xf32>
}
