// RUN: ge-opt %s | ge-opt | filecheck %s
// ge.lstm and ge.lstm_grad print and parse back, with their optional operands and results.

// CHECK-LABEL: func.func @bidirectional
func.func @bidirectional(%x: tensor<5x3x4xf32>, %w: tensor<2x24x4xf32>, %r: tensor<2x24x6xf32>, %b: tensor<2x48xf32>, %h: tensor<2x3x6xf32>) -> tensor<2x3x6xf32> {
  // CHECK: ge.lstm %{{.*}}, %{{.*}}, %{{.*}}, B = %{{.*}}, initial_h = %{{.*}} {direction = "bidirectional", hidden_size = 6 : i64} : {{.*}} -> (tensor<5x2x3x6xf32>, tensor<2x3x6xf32>, tensor<2x3x6xf32>)
  %y, %yh, %yc = ge.lstm %x, %w, %r, B = %b, initial_h = %h {direction = "bidirectional", hidden_size = 6 : i64} : (tensor<5x3x4xf32>, tensor<2x24x4xf32>, tensor<2x24x6xf32>, tensor<2x48xf32>, tensor<2x3x6xf32>) -> (tensor<5x2x3x6xf32>, tensor<2x3x6xf32>, tensor<2x3x6xf32>)
  func.return %yc : tensor<2x3x6xf32>
}

// CHECK-LABEL: func.func @batch_major_sequence_only
func.func @batch_major_sequence_only(%x: tensor<3x5x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>, %n: tensor<3xi32>) -> tensor<3x5x1x6xf32> {
  // CHECK: ge.lstm %{{.*}}, %{{.*}}, %{{.*}}, sequence_lens = %{{.*}} {layout = 1 : i64} : {{.*}} -> tensor<3x5x1x6xf32>
  %y = ge.lstm %x, %w, %r, sequence_lens = %n {layout = 1 : i64} : (tensor<3x5x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<3xi32>) -> tensor<3x5x1x6xf32>
  func.return %y : tensor<3x5x1x6xf32>
}

// CHECK-LABEL: func.func @gradient
func.func @gradient(%x: tensor<5x3x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>, %dy: tensor<5x1x3x6xf32>, %ds: tensor<1x3x6xf32>) -> tensor<1x48xf32> {
  // CHECK: ge.lstm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : {{.*}} -> (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x48xf32>, tensor<1x3x6xf32>, tensor<1x3x6xf32>)
  %dx, %dw, %dr, %db, %dh, %dc = ge.lstm_grad %x, %w, %r, %dy, %ds, %ds : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<5x1x3x6xf32>, tensor<1x3x6xf32>, tensor<1x3x6xf32>) -> (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x48xf32>, tensor<1x3x6xf32>, tensor<1x3x6xf32>)
  func.return %db : tensor<1x48xf32>
}
