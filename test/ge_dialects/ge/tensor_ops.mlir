// RUN: ge-opt %s | ge-opt | filecheck %s

// Every data-movement and shape op round-trips, properties and optional operands included.
// Shape-like operands that are visible constants give exact result dims; runtime ones give the
// right rank with unknown dims.

// CHECK-LABEL: func.func @transpose_reshape_flatten
func.func @transpose_reshape_flatten(%x: tensor<2x3x4xf32>, %s: tensor<2xi64>) -> tensor<4x6xf32> {
  // CHECK: ge.transpose %{{.*}} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %0 = ge.transpose %x : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  // CHECK-NEXT: ge.transpose %{{.*}} {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %1 = ge.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  // CHECK: ge.reshape %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  %shape = ge.constant dense<[4, -1]> : tensor<2xi64>
  %2 = ge.reshape %x, %shape : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  // CHECK: ge.reshape %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  %copy = ge.constant dense<[0, 0, -1]> : tensor<3xi64>
  %3 = ge.reshape %x, %copy : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: ge.reshape %{{.*}}, %{{.*}} {allowzero = 1 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %4 = ge.reshape %x, %s {allowzero = 1 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  // CHECK-NEXT: ge.flatten %{{.*}} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %5 = ge.flatten %x : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  // CHECK-NEXT: ge.flatten %{{.*}} {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %6 = ge.flatten %x {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK-NEXT: ge.flatten %{{.*}} {axis = 0 : i64} : (tensor<?x?xf32>) -> tensor<1x?xf32>
  %7 = ge.flatten %4 {axis = 0 : i64} : (tensor<?x?xf32>) -> tensor<1x?xf32>
  func.return %2 : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @concat_split
func.func @concat_split(%a: tensor<2x3xf16>, %b: tensor<2x?xf16>, %s: tensor<2xi64>) -> tensor<2x?xf16> {
  // CHECK: ge.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3xf16>, tensor<2x?xf16>, tensor<2x3xf16>) -> tensor<2x?xf16>
  %0 = ge.concat %a, %b, %a {axis = 1 : i64} : (tensor<2x3xf16>, tensor<2x?xf16>, tensor<2x3xf16>) -> tensor<2x?xf16>
  // CHECK-NEXT: ge.concat %{{.*}}, %{{.*}} {axis = -2 : i64} : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<4x3xf16>
  %1 = ge.concat %a, %a {axis = -2 : i64} : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<4x3xf16>
  // CHECK-NEXT: %{{.*}}, %{{.*}} = ge.split %{{.*}} : (tensor<4x3xf16>) -> (tensor<2x3xf16>, tensor<2x3xf16>)
  %2:2 = ge.split %1 : (tensor<4x3xf16>) -> (tensor<2x3xf16>, tensor<2x3xf16>)
  // CHECK-NEXT: ge.split %{{.*}} {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<2x3xf16>) -> (tensor<2x2xf16>, tensor<2x1xf16>)
  %3:2 = ge.split %a {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<2x3xf16>) -> (tensor<2x2xf16>, tensor<2x1xf16>)
  // CHECK: ge.split %{{.*}}, split = %{{.*}} {axis = 1 : i64} : (tensor<2x3xf16>, tensor<3xi64>) -> (tensor<2x0xf16>, tensor<2x1xf16>, tensor<2x2xf16>)
  %sizes = ge.constant dense<[0, 1, 2]> : tensor<3xi64>
  %4:3 = ge.split %a, split = %sizes {axis = 1 : i64} : (tensor<2x3xf16>, tensor<3xi64>) -> (tensor<2x0xf16>, tensor<2x1xf16>, tensor<2x2xf16>)
  // CHECK-NEXT: ge.split %{{.*}}, split = %{{.*}} : (tensor<4x3xf16>, tensor<2xi64>) -> (tensor<?x3xf16>, tensor<?x3xf16>)
  %5:2 = ge.split %1, split = %s : (tensor<4x3xf16>, tensor<2xi64>) -> (tensor<?x3xf16>, tensor<?x3xf16>)
  func.return %0 : tensor<2x?xf16>
}

// CHECK-LABEL: func.func @slice_gather
func.func @slice_gather(%x: tensor<2x3x4xf32>, %i: tensor<5xi32>, %rt: tensor<2xi64>) -> tensor<1x3x2xf32> {
  %starts = ge.constant dense<[0, 3]> : tensor<2xi64>
  %ends = ge.constant dense<[-1, -100]> : tensor<2xi64>
  %axes = ge.constant dense<[0, -1]> : tensor<2xi64>
  %steps = ge.constant dense<[1, -2]> : tensor<2xi64>
  // CHECK: ge.slice %{{.*}}, %{{.*}}, %{{.*}}, axes = %{{.*}}, steps = %{{.*}} : (tensor<2x3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x3x2xf32>
  %0 = ge.slice %x, %starts, %ends, axes = %axes, steps = %steps : (tensor<2x3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x3x2xf32>
  // CHECK-NEXT: ge.slice %{{.*}}, %{{.*}}, %{{.*}}, steps = %{{.*}} : (tensor<2x3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x2x4xf32>
  %1 = ge.slice %x, %starts, %ends, steps = %steps : (tensor<2x3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x2x4xf32>
  // CHECK-NEXT: ge.slice %{{.*}}, %{{.*}}, %{{.*}}, axes = %{{.*}} : (tensor<2x3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3x?xf32>
  %2 = ge.slice %x, %rt, %ends, axes = %axes : (tensor<2x3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3x?xf32>
  // CHECK-NEXT: ge.gather %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<5xi32>) -> tensor<2x3x5xf32>
  %3 = ge.gather %x, %i {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<5xi32>) -> tensor<2x3x5xf32>
  // CHECK: ge.gather %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  %scalar = ge.constant dense<-1> : tensor<i64>
  %4 = ge.gather %x, %scalar : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  func.return %0 : tensor<1x3x2xf32>
}

// CHECK-LABEL: func.func @squeeze_unsqueeze_reduce
func.func @squeeze_unsqueeze_reduce(%x: tensor<1x3x1xbf16>, %rt: tensor<2xi64>) -> tensor<3xbf16> {
  %axes = ge.constant dense<[-1, 0]> : tensor<2xi64>
  // CHECK: ge.unsqueeze %{{.*}}, %{{.*}} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<1x1x3x1x1xbf16>
  %0 = ge.unsqueeze %x, %axes : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<1x1x3x1x1xbf16>
  // CHECK-NEXT: ge.unsqueeze %{{.*}}, %{{.*}} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<?x?x?x?x?xbf16>
  %1 = ge.unsqueeze %x, %rt : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<?x?x?x?x?xbf16>
  // CHECK-NEXT: ge.squeeze %{{.*}} : (tensor<1x3x1xbf16>) -> tensor<3xbf16>
  %2 = ge.squeeze %x : (tensor<1x3x1xbf16>) -> tensor<3xbf16>
  // CHECK-NEXT: ge.squeeze %{{.*}}, axes = %{{.*}} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<3xbf16>
  %3 = ge.squeeze %x, axes = %axes : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<3xbf16>
  // CHECK-NEXT: ge.squeeze %{{.*}}, axes = %{{.*}} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<?xbf16>
  %4 = ge.squeeze %x, axes = %rt : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<?xbf16>
  // CHECK-NEXT: ge.reduce_mean %{{.*}} : (tensor<1x3x1xbf16>) -> tensor<1x1x1xbf16>
  %5 = ge.reduce_mean %x : (tensor<1x3x1xbf16>) -> tensor<1x1x1xbf16>
  // CHECK-NEXT: ge.reduce_mean %{{.*}}, axes = %{{.*}} {keepdims = 0 : i64} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<3xbf16>
  %6 = ge.reduce_mean %x, axes = %axes {keepdims = 0 : i64} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<3xbf16>
  // CHECK-NEXT: ge.reduce_mean %{{.*}} {noop_with_empty_axes = 1 : i64} : (tensor<1x3x1xbf16>) -> tensor<1x3x1xbf16>
  %7 = ge.reduce_mean %x {noop_with_empty_axes = 1 : i64} : (tensor<1x3x1xbf16>) -> tensor<1x3x1xbf16>
  // CHECK-NEXT: ge.reduce_mean %{{.*}}, axes = %{{.*}} {keepdims = 0 : i64} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<?xbf16>
  %8 = ge.reduce_mean %x, axes = %rt {keepdims = 0 : i64} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<?xbf16>
  // CHECK-NEXT: ge.reduce_sum %{{.*}}, axes = %{{.*}} {keepdims = 0 : i64} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<3xbf16>
  %sum = ge.reduce_sum %x, axes = %axes {keepdims = 0 : i64} : (tensor<1x3x1xbf16>, tensor<2xi64>) -> tensor<3xbf16>
  func.return %2 : tensor<3xbf16>
}

// CHECK-LABEL: func.func @cast_where_expand
func.func @cast_where_expand(%x: tensor<3x1xf32>, %c: tensor<2x1x4xi1>, %rt: tensor<3xi64>) -> tensor<2x3x4xi8> {
  // CHECK: ge.cast %{{.*}} {to = 16 : i64} : (tensor<3x1xf32>) -> tensor<3x1xbf16>
  %0 = ge.cast %x {to = 16 : i64} : (tensor<3x1xf32>) -> tensor<3x1xbf16>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 3 : i64, saturate = 0 : i64} : (tensor<3x1xbf16>) -> tensor<3x1xi8>
  %1 = ge.cast %0 {to = 3 : i64, saturate = 0 : i64} : (tensor<3x1xbf16>) -> tensor<3x1xi8>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 9 : i64} : (tensor<3x1xi8>) -> tensor<3x1xi1>
  %2 = ge.cast %1 {to = 9 : i64} : (tensor<3x1xi8>) -> tensor<3x1xi1>
  // CHECK-NEXT: ge.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1x4xi1>, tensor<3x1xi8>, tensor<3x1xi8>) -> tensor<2x3x4xi8>
  %3 = ge.where %c, %1, %1 : (tensor<2x1x4xi1>, tensor<3x1xi8>, tensor<3x1xi8>) -> tensor<2x3x4xi8>
  // CHECK: ge.expand %{{.*}}, %{{.*}} : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x5xf32>
  %shape = ge.constant dense<[2, 1, 5]> : tensor<3xi64>
  %4 = ge.expand %x, %shape : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x5xf32>
  // CHECK-NEXT: ge.expand %{{.*}}, %{{.*}} : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<?x3x?xf32>
  %5 = ge.expand %x, %rt : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<?x3x?xf32>
  func.return %3 : tensor<2x3x4xi8>
}

// CHECK-LABEL: func.func @shape_constant_of_shape_pad
func.func @shape_constant_of_shape_pad(%x: tensor<2x?x4xf32>, %rt: tensor<4xi64>, %v: tensor<f32>) -> tensor<3xi64> {
  // CHECK: ge.shape %{{.*}} : (tensor<2x?x4xf32>) -> tensor<3xi64>
  %0 = ge.shape %x : (tensor<2x?x4xf32>) -> tensor<3xi64>
  // CHECK-NEXT: ge.shape %{{.*}} {start = -10 : i64, end = -1 : i64} : (tensor<2x?x4xf32>) -> tensor<2xi64>
  %1 = ge.shape %x {start = -10 : i64, end = -1 : i64} : (tensor<2x?x4xf32>) -> tensor<2xi64>
  // CHECK-NEXT: ge.shape %{{.*}} {start = 2 : i64, end = 1 : i64} : (tensor<2x?x4xf32>) -> tensor<0xi64>
  %2 = ge.shape %x {start = 2 : i64, end = 1 : i64} : (tensor<2x?x4xf32>) -> tensor<0xi64>
  // CHECK-NEXT: ge.constant_of_shape %{{.*}} : (tensor<3xi64>) -> tensor<?x?x?xf32>
  %3 = ge.constant_of_shape %0 : (tensor<3xi64>) -> tensor<?x?x?xf32>
  // CHECK: ge.constant_of_shape %{{.*}} {value = dense<7> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<2x3xi32>
  %dims = ge.constant dense<[2, 3]> : tensor<2xi64>
  %4 = ge.constant_of_shape %dims {value = dense<7> : tensor<1xi32>} : (tensor<2xi64>) -> tensor<2x3xi32>
  // CHECK: ge.pad %{{.*}}, %{{.*}} : (tensor<2x?x4xf32>, tensor<6xi64>) -> tensor<3x?x3xf32>
  %pads = ge.constant dense<[1, 0, 0, 0, 2, -1]> : tensor<6xi64>
  %5 = ge.pad %x, %pads : (tensor<2x?x4xf32>, tensor<6xi64>) -> tensor<3x?x3xf32>
  // CHECK: ge.pad %{{.*}}, %{{.*}}, constant_value = %{{.*}}, axes = %{{.*}} : (tensor<2x?x4xf32>, tensor<4xi64>, tensor<f32>, tensor<2xi32>) -> tensor<5x?x6xf32>
  %pads2 = ge.constant dense<[0, 1, 3, 1]> : tensor<4xi64>
  %axes = ge.constant dense<[0, -1]> : tensor<2xi32>
  %6 = ge.pad %x, %pads2, constant_value = %v, axes = %axes : (tensor<2x?x4xf32>, tensor<4xi64>, tensor<f32>, tensor<2xi32>) -> tensor<5x?x6xf32>
  // CHECK-NEXT: ge.pad %{{.*}}, %{{.*}}, axes = %{{.*}} {mode = "reflect"} : (tensor<2x?x4xf32>, tensor<4xi64>, tensor<2xi32>) -> tensor<?x?x?xf32>
  %7 = ge.pad %x, %rt, axes = %axes {mode = "reflect"} : (tensor<2x?x4xf32>, tensor<4xi64>, tensor<2xi32>) -> tensor<?x?x?xf32>
  // CHECK-NEXT: ge.pad %{{.*}}, %{{.*}} {mode = "wrap"} : (tensor<2x?x4xf32>, tensor<6xi64>) -> tensor<3x?x3xf32>
  %8 = ge.pad %x, %pads {mode = "wrap"} : (tensor<2x?x4xf32>, tensor<6xi64>) -> tensor<3x?x3xf32>
  // CHECK-NEXT: ge.pad %{{.*}}, %{{.*}} {mode = "edge"} : (tensor<2x?x4xf32>, tensor<6xi64>) -> tensor<3x?x3xf32>
  %9 = ge.pad %x, %pads {mode = "edge"} : (tensor<2x?x4xf32>, tensor<6xi64>) -> tensor<3x?x3xf32>
  func.return %0 : tensor<3xi64>
}

// CHECK-LABEL: func.func @range
func.func @range(%n: tensor<i64>) -> (tensor<5xi64>, tensor<?xi64>) {
  %s = ge.constant dense<0> : tensor<i64>
  %l = ge.constant dense<10> : tensor<i64>
  %d = ge.constant dense<2> : tensor<i64>
  // CHECK: ge.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
  %0 = ge.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
  // CHECK: ge.range {{.*}} -> tensor<?xi64>
  %1 = ge.range %s, %n, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %0, %1 : tensor<5xi64>, tensor<?xi64>
}

// The narrow storage types (float8, float4, int4, int2) round-trip as cast operands and results;
// round_mode and saturate are kept.
// CHECK-LABEL: func.func @cast_narrow_types
func.func @cast_narrow_types(%x: tensor<4xf32>, %h: tensor<2x2xf16>) -> tensor<4xf32> {
  // CHECK: ge.cast %{{.*}} {to = 17 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %0 = ge.cast %x {to = 17 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 18 : i64, saturate = 0 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FNUZ>
  %1 = ge.cast %x {to = 18 : i64, saturate = 0 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FNUZ>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 19 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf8E5M2>
  %2 = ge.cast %h {to = 19 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf8E5M2>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 20 : i64} : (tensor<2x2xf8E5M2>) -> tensor<2x2xf8E5M2FNUZ>
  %3 = ge.cast %2 {to = 20 : i64} : (tensor<2x2xf8E5M2>) -> tensor<2x2xf8E5M2FNUZ>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 24 : i64, round_mode = "nearest"} : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>
  %4 = ge.cast %x {to = 24 : i64, round_mode = "nearest"} : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 23 : i64} : (tensor<4xf8E8M0FNU>) -> tensor<4xf4E2M1FN>
  %5 = ge.cast %4 {to = 23 : i64} : (tensor<4xf8E8M0FNU>) -> tensor<4xf4E2M1FN>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 22 : i64} : (tensor<4xf4E2M1FN>) -> tensor<4xi4>
  %6 = ge.cast %5 {to = 22 : i64} : (tensor<4xf4E2M1FN>) -> tensor<4xi4>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 21 : i64} : (tensor<4xi4>) -> tensor<4xui4>
  %7 = ge.cast %6 {to = 21 : i64} : (tensor<4xi4>) -> tensor<4xui4>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 26 : i64} : (tensor<4xui4>) -> tensor<4xi2>
  %8 = ge.cast %7 {to = 26 : i64} : (tensor<4xui4>) -> tensor<4xi2>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 25 : i64} : (tensor<4xi2>) -> tensor<4xui2>
  %9 = ge.cast %8 {to = 25 : i64} : (tensor<4xi2>) -> tensor<4xui2>
  // CHECK-NEXT: ge.cast %{{.*}} {to = 1 : i64} : (tensor<4xui2>) -> tensor<4xf32>
  %10 = ge.cast %9 {to = 1 : i64} : (tensor<4xui2>) -> tensor<4xf32>
  // CHECK: ge.constant dense<[1.000000e+00, -4.480000e+02]> : tensor<2xf8E4M3FN>
  %c = ge.constant dense<[1.0, -448.0]> : tensor<2xf8E4M3FN>
  // CHECK: ge.constant dense<[-8, 7]> : tensor<2xi4>
  %d = ge.constant dense<[-8, 7]> : tensor<2xi4>
  func.return %10 : tensor<4xf32>
}
