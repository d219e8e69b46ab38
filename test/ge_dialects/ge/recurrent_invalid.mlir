// RUN: ge-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @direction(%x: tensor<5x3x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32> {
  // CHECK: ge.lstm: direction must be "forward", "reverse" or "bidirectional", got "sideways"
  %y = ge.lstm %x, %w, %r {direction = "sideways"} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32>
  func.return %y : tensor<5x1x3x6xf32>
}

// -----

func.func @directions(%x: tensor<5x3x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>) -> tensor<5x2x3x6xf32> {
  // CHECK: ge.lstm: W's first dim is not the 2 direction(s): 1 vs 2
  %y = ge.lstm %x, %w, %r {direction = "bidirectional"} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>) -> tensor<5x2x3x6xf32>
  func.return %y : tensor<5x2x3x6xf32>
}

// -----

func.func @gates(%x: tensor<5x3x4xf32>, %w: tensor<1x20x4xf32>, %r: tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32> {
  // CHECK: ge.lstm: W's second dim must be 4 * hidden_size = 24, got 20
  %y = ge.lstm %x, %w, %r : (tensor<5x3x4xf32>, tensor<1x20x4xf32>, tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32>
  func.return %y : tensor<5x1x3x6xf32>
}

// -----

func.func @hidden_size(%x: tensor<5x3x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32> {
  // CHECK: ge.lstm: hidden_size and R's last dim differ: 8 vs 6
  %y = ge.lstm %x, %w, %r {hidden_size = 8 : i64} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32>
  func.return %y : tensor<5x1x3x6xf32>
}

// -----

func.func @input_size(%x: tensor<5x3x5xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32> {
  // CHECK: ge.lstm: W's input size and X's last dim differ: 4 vs 5
  %y = ge.lstm %x, %w, %r : (tensor<5x3x5xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32>
  func.return %y : tensor<5x1x3x6xf32>
}

// -----

func.func @bias(%x: tensor<5x3x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>, %b: tensor<1x24xf32>) -> tensor<5x1x3x6xf32> {
  // CHECK: ge.lstm: B must be [1, 48] (directions, 8 * hidden_size), got [1, 24]
  %y = ge.lstm %x, %w, %r, B = %b : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x24xf32>) -> tensor<5x1x3x6xf32>
  func.return %y : tensor<5x1x3x6xf32>
}

// -----

func.func @lengths(%x: tensor<5x3x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>, %n: tensor<2xi32>) -> tensor<5x1x3x6xf32> {
  // CHECK: ge.lstm: sequence_lens and X differ in batch: 2 vs 3
  %y = ge.lstm %x, %w, %r, sequence_lens = %n : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<2xi32>) -> tensor<5x1x3x6xf32>
  func.return %y : tensor<5x1x3x6xf32>
}

// -----

func.func @state(%x: tensor<5x3x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>, %h: tensor<3x1x6xf32>) -> tensor<5x1x3x6xf32> {
  // CHECK: ge.lstm: initial_h must be [1, 3, 6], got [3, 1, 6]
  %y = ge.lstm %x, %w, %r, initial_h = %h : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<3x1x6xf32>) -> tensor<5x1x3x6xf32>
  func.return %y : tensor<5x1x3x6xf32>
}

// -----

func.func @layout(%x: tensor<5x3x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32> {
  // CHECK: ge.lstm: layout must be 0 or 1, got 2
  %y = ge.lstm %x, %w, %r {layout = 2 : i64} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>) -> tensor<5x1x3x6xf32>
  func.return %y : tensor<5x1x3x6xf32>
}

// -----

func.func @not_float(%x: tensor<5x3x4xi32>, %w: tensor<1x24x4xi32>, %r: tensor<1x24x6xi32>) -> tensor<5x1x3x6xi32> {
  // CHECK: ge.lstm: operand 'X' has element type i32; expected one of f32, f16, bf16, f64
  %y = ge.lstm %x, %w, %r : (tensor<5x3x4xi32>, tensor<1x24x4xi32>, tensor<1x24x6xi32>) -> tensor<5x1x3x6xi32>
  func.return %y : tensor<5x1x3x6xi32>
}

// -----

func.func @grad_cotangent(%x: tensor<5x3x4xf32>, %w: tensor<1x24x4xf32>, %r: tensor<1x24x6xf32>, %dy: tensor<5x3x6xf32>, %ds: tensor<1x3x6xf32>) -> tensor<1x48xf32> {
  // CHECK: ge.lstm_grad: dY must be [5, 1, 3, 6], got [5, 3, 6]
  %dx, %dw, %dr, %db, %dh, %dc = ge.lstm_grad %x, %w, %r, %dy, %ds, %ds : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<5x3x6xf32>, tensor<1x3x6xf32>, tensor<1x3x6xf32>) -> (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x48xf32>, tensor<1x3x6xf32>, tensor<1x3x6xf32>)
  func.return %db : tensor<1x48xf32>
}
