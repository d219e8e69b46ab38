// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @channels(%x: tensor<1x3x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv_transpose: input channels 3 do not match weight dim 0 (2)
  %0 = ge.conv_transpose %x, %w : (tensor<1x3x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @group_divides(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK: ge.conv_transpose: input channels 3 are not divisible by group 2
  %0 = ge.conv_transpose %x, %w {group = 2 : i64} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @group_positive(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv_transpose: group must be positive, got 0
  %0 = ge.conv_transpose %x, %w {group = 0 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @bias(%x: tensor<1x4x4x4xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x6x6x6xf32> {
  // CHECK: ge.conv_transpose: bias of shape (3,) does not match [6] output channels
  %0 = ge.conv_transpose %x, %w, B = %b {group = 2 : i64} : (tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @weight_rank(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv_transpose: weight rank 3 does not match input rank 4
  %0 = ge.conv_transpose %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @kernel_shape(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv_transpose: kernel_shape [2, 2] does not match weight spatial dims [3, 3]
  %0 = ge.conv_transpose %x, %w {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @auto_pad(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv_transpose: auto_pad must be one of NOTSET, SAME_UPPER, SAME_LOWER, VALID, got "SAME"
  %0 = ge.conv_transpose %x, %w {auto_pad = "SAME"} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @pads_with_auto_pad(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv_transpose: pads cannot be given with auto_pad "VALID"
  %0 = ge.conv_transpose %x, %w {auto_pad = "VALID", pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @pads_count(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv_transpose: pads must have 4 values, got 2
  %0 = ge.conv_transpose %x, %w {pads = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @strides_positive(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv_transpose: strides must be positive, got [1, 0]
  %0 = ge.conv_transpose %x, %w {strides = array<i64: 1, 0>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @output_padding_stride(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x11x11xf32> {
  // CHECK: ge.conv_transpose: output_padding[1] = 2 must be less than strides[1] = 2
  %0 = ge.conv_transpose %x, %w {strides = array<i64: 2, 2>, output_padding = array<i64: 1, 2>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x11x11xf32>
  func.return %0 : tensor<1x2x11x11xf32>
}

// -----

func.func @output_shape_count(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // CHECK: ge.conv_transpose: output_shape must have 2 values, got 4
  %0 = ge.conv_transpose %x, %w {output_shape = array<i64: 1, 2, 6, 6>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @output_shape_too_large(%x: tensor<1x2x3xf32>, %w: tensor<2x2x3xf32>) -> tensor<1x2x9xf32> {
  // CHECK: ge.conv_transpose: output_shape[0] = 9 does not fit input size 3: a stride-2 transposed convolution of it gives at most 8 positions
  %0 = ge.conv_transpose %x, %w {strides = array<i64: 2>, output_shape = array<i64: 9>} : (tensor<1x2x3xf32>, tensor<2x2x3xf32>) -> tensor<1x2x9xf32>
  func.return %0 : tensor<1x2x9xf32>
}

// -----

func.func @no_output(%x: tensor<1x2x3xf32>, %w: tensor<2x2x3xf32>) -> tensor<1x2x1xf32> {
  // CHECK: ge.conv_transpose: spatial axis 0 has no output: the full output of 5 positions less pads 3+3 is -1
  %0 = ge.conv_transpose %x, %w {pads = array<i64: 3, 3>} : (tensor<1x2x3xf32>, tensor<2x2x3xf32>) -> tensor<1x2x1xf32>
  func.return %0 : tensor<1x2x1xf32>
}

// -----

func.func @result_shape(%x: tensor<1x2x3xf32>, %w: tensor<2x2x3xf32>) -> tensor<1x2x6xf32> {
  // CHECK: ge.conv_transpose: result #0 has type tensor<1x2x6xf32> but its operands imply tensor<1x2x5xf32>
  %0 = ge.conv_transpose %x, %w : (tensor<1x2x3xf32>, tensor<2x2x3xf32>) -> tensor<1x2x6xf32>
  func.return %0 : tensor<1x2x6xf32>
}

// -----

func.func @dtype(%x: tensor<1x2x3xi32>, %w: tensor<2x2x3xi32>) -> tensor<1x2x5xi32> {
  // CHECK: ge.conv_transpose: operand 'X' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.conv_transpose %x, %w : (tensor<1x2x3xi32>, tensor<2x2x3xi32>) -> tensor<1x2x5xi32>
  func.return %0 : tensor<1x2x5xi32>
}
