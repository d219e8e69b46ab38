// RUN: ge-opt %s | ge-opt | filecheck %s

// Every reduction and selection op round-trips with its properties, and its result type is the one
// inferred: constant axes and K give exact dims, runtime ones the right rank with unknown dims.

// CHECK-LABEL: func.func @reduces
func.func @reduces(%x: tensor<3x4x5xf32>, %b: tensor<4x2xi1>, %a: tensor<1xi64>, %e: tensor<2x0x4xf32>)
    -> (tensor<3x1x5xf32>, tensor<1x2xi1>, tensor<5xf32>) {
  %c = ge.constant dense<[-2]> : tensor<1xi64>
  // CHECK: ge.reduce_max %{{.*}}, axes = %{{.*}} : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<3x1x5xf32>
  %0 = ge.reduce_max %x, axes = %c : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<3x1x5xf32>
  // Bools reduce too (ReduceMax / ReduceMin since opset 20); -2 is axis 0 of a rank-2 input.
  // CHECK-NEXT: ge.reduce_min %{{.*}}, axes = %{{.*}} : (tensor<4x2xi1>, tensor<1xi64>) -> tensor<1x2xi1>
  %1 = ge.reduce_min %b, axes = %c : (tensor<4x2xi1>, tensor<1xi64>) -> tensor<1x2xi1>
  // CHECK-NEXT: ge.reduce_prod %{{.*}}, axes = %{{.*}} {keepdims = 0 : i64} : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  %2 = ge.reduce_prod %x, axes = %a {keepdims = 0 : i64} : (tensor<3x4x5xf32>, tensor<1xi64>) -> tensor<?x?xf32>
  // An empty reduced axis is allowed (the kernel gives the empty set's value).
  // CHECK-NEXT: ge.reduce_max %{{.*}}, axes = %{{.*}} : (tensor<2x0x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
  %3 = ge.reduce_max %e, axes = %c : (tensor<2x0x4xf32>, tensor<1xi64>) -> tensor<2x1x4xf32>
  %s = ge.constant dense<[0, 1]> : tensor<2xi64>
  // CHECK: ge.reduce_prod %{{.*}}, axes = %{{.*}} {keepdims = 0 : i64} : (tensor<3x4x5xf32>, tensor<2xi64>) -> tensor<5xf32>
  %4 = ge.reduce_prod %x, axes = %s {keepdims = 0 : i64} : (tensor<3x4x5xf32>, tensor<2xi64>) -> tensor<5xf32>
  func.return %0, %1, %4 : tensor<3x1x5xf32>, tensor<1x2xi1>, tensor<5xf32>
}

// CHECK-LABEL: func.func @selections
func.func @selections(%x: tensor<3x4x5xf32>, %d: tensor<?x6xi32>, %k: tensor<1xi64>)
    -> (tensor<3x5xi64>, tensor<?x1xi64>, tensor<3x4x2xf32>, tensor<3x4x2xi64>) {
  // CHECK: ge.arg_max %{{.*}} {axis = 1 : i64, keepdims = 0 : i64} : (tensor<3x4x5xf32>) -> tensor<3x5xi64>
  %0 = ge.arg_max %x {axis = 1 : i64, keepdims = 0 : i64} : (tensor<3x4x5xf32>) -> tensor<3x5xi64>
  // CHECK-NEXT: ge.arg_min %{{.*}} {axis = -1 : i64, select_last_index = 1 : i64} : (tensor<?x6xi32>) -> tensor<?x1xi64>
  %1 = ge.arg_min %d {axis = -1 : i64, select_last_index = 1 : i64} : (tensor<?x6xi32>) -> tensor<?x1xi64>
  %two = ge.constant dense<[2]> : tensor<1xi64>
  // CHECK: ge.top_k %{{.*}}, %{{.*}} : (tensor<3x4x5xf32>, tensor<1xi64>) -> (tensor<3x4x2xf32>, tensor<3x4x2xi64>)
  %v, %i = ge.top_k %x, %two : (tensor<3x4x5xf32>, tensor<1xi64>) -> (tensor<3x4x2xf32>, tensor<3x4x2xi64>)
  // A runtime K leaves the axis unknown.
  // CHECK-NEXT: ge.top_k %{{.*}}, %{{.*}} {axis = 0 : i64, largest = 0 : i64} : (tensor<3x4x5xf32>, tensor<1xi64>) -> (tensor<?x4x5xf32>, tensor<?x4x5xi64>)
  %w, %j = ge.top_k %x, %k {axis = 0 : i64, largest = 0 : i64} : (tensor<3x4x5xf32>, tensor<1xi64>) -> (tensor<?x4x5xf32>, tensor<?x4x5xi64>)
  // CHECK-NEXT: ge.hardmax %{{.*}} {axis = 1 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %h = ge.hardmax %x {axis = 1 : i64} : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  func.return %0, %1, %v, %i : tensor<3x5xi64>, tensor<?x1xi64>, tensor<3x4x2xf32>, tensor<3x4x2xi64>
}

// CHECK-LABEL: func.func @running
func.func @running(%x: tensor<3x4xf32>, %n: tensor<5xi32>, %a: tensor<i32>, %d: tensor<?x2xf16>) -> (tensor<3x4xf32>, tensor<5xi32>, tensor<i64>) {
  %c = ge.constant dense<-1> : tensor<i64>
  // CHECK: ge.cum_sum %{{.*}}, %{{.*}} {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  %0 = ge.cum_sum %x, %c {exclusive = 1 : i64, reverse = 1 : i64} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  // CHECK-NEXT: ge.cum_prod %{{.*}}, %{{.*}} : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
  %1 = ge.cum_prod %n, %a : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
  // CHECK-NEXT: ge.size %{{.*}} : (tensor<?x2xf16>) -> tensor<i64>
  %2 = ge.size %d : (tensor<?x2xf16>) -> tensor<i64>
  func.return %0, %1, %2 : tensor<3x4xf32>, tensor<5xi32>, tensor<i64>
}
