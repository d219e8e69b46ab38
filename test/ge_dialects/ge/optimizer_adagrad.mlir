// RUN: ge-opt %s | ge-opt | filecheck %s
// RUN: ge-opt %s --print-op-generic | ge-opt | filecheck %s

// ge.apply_adagrad (GE's ApplyAdagrad / ApplyAdagradV2) round-trips with and without its properties.

// CHECK-LABEL: func.func @adagrad
func.func @adagrad(%w: tensor<4x5xf32>, %h: tensor<4x5xf32>, %g: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
  // CHECK-NEXT: %w1, %h1 = ge.apply_adagrad %w, %h, %g : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>)
  %w1, %h1 = ge.apply_adagrad %w, %h, %g : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>)
  // CHECK-NEXT: %w2, %h2 = ge.apply_adagrad %w, %h, %g {lr = 5.000000e-02 : f32, epsilon = 1.000000e-06 : f32, update_slots = 0 : i64} : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>)
  %w2, %h2 = ge.apply_adagrad %w, %h, %g {lr = 0.05 : f32, epsilon = 1.0e-06 : f32, update_slots = 0 : i64} : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>)
  func.return %w1, %h1, %w2, %h2 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}
