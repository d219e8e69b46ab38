// A value computed from literal constants alone that holds the batch (an exported causal mask,
// expanded to [B, 1, S, S]) is split with the inputs: its first rows, when its rows are the same.
// (Its errors, and the numerics: test_data_parallel.py.)
// RUN: ge-opt %s -p 'autodiff,data-parallel{devices=2}' | filecheck %s

// CHECK-LABEL: func.func @main(%x: tensor<2x3xf32>
// The whole-batch mask, unused now, is gone.
// CHECK-NOT:   ge.expand %row
// CHECK:       %[[ROWS:.*]] = ge.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<2x3xf32>
// CHECK:       ge.add %{{.*}}, %[[ROWS]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @main(%x: tensor<4x3xf32> {ge.name = "x"}) -> (tensor<f32> {ge.name = "loss"}) {
  %w = ge.constant parameter<"w"> dense<0.5> : tensor<3x3xf32>
  %row = ge.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  %shape = ge.constant dense<[4, 3]> : tensor<2xi64>
  %mask = ge.expand %row, %shape : (tensor<1x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  %h = ge.matmul %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %y = ge.add %h, %mask : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %loss = ge.reduce_mean %y {keepdims = 0 : i64} : (tensor<4x3xf32>) -> tensor<f32>
  func.return %loss : tensor<f32>
}

