// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @rank(%x: tensor<2x3xf32>, %c: tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK: ge.instance_norm: operand 'input' must have rank >= 3 (N, C and spatial dims), got rank 2
  %0 = ge.instance_norm %x, %c, %c : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @scale_shape(%x: tensor<2x3x4xf32>, %c: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<2x3x4xf32> {
  // CHECK: ge.instance_norm: operand 'scale' must have shape (3,), got (4,)
  %0 = ge.instance_norm %x, %c, %b : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @bias_shape(%x: tensor<2x3x4xf32>, %c: tensor<3xf32>, %b: tensor<1x3xf32>) -> tensor<2x3x4xf32> {
  // CHECK: ge.instance_norm: operand 'B' must have shape (3,), got (1, 3)
  %0 = ge.instance_norm %x, %c, %b : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<1x3xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @dtypes(%x: tensor<2x3x4xf16>, %c: tensor<3xf32>) -> tensor<2x3x4xf16> {
  // CHECK: ge.instance_norm: operands 'input' and 'scale' must have one element type, got f16 and f32
  %0 = ge.instance_norm %x, %c, %c : (tensor<2x3x4xf16>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf16>
  func.return %0 : tensor<2x3x4xf16>
}

// -----

func.func @input_dtype(%x: tensor<2x3x4xi32>, %c: tensor<3xi32>) -> tensor<2x3x4xi32> {
  // CHECK: ge.instance_norm: operand 'input' has element type i32; expected one of f32, f16, bf16, f64
  %0 = ge.instance_norm %x, %c, %c : (tensor<2x3x4xi32>, tensor<3xi32>, tensor<3xi32>) -> tensor<2x3x4xi32>
  func.return %0 : tensor<2x3x4xi32>
}
