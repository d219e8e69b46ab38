// RUN: ge-opt %s -p lower-to-tasks --split-input-file --strip-debuginfo | filecheck %s

// One task per fused group or op; the engine follows the op (or the group's pattern), weights and
// constants stay outside, a scalar constant is cloned into the task.
// CHECK-LABEL: func.func @engines
// CHECK:      %[[W:.*]] = ge.constant
// CHECK:      task.kernel "/mm" (%a, %[[W]]) {{.*}} attributes {engine = "cube", block_dim = 4 : i64, workspace = 0 : i64, tiling = "m=32 n=32 k=16 fractals=4", pattern = "matmul"}
// CHECK:      task.kernel "/grp" {{.*}} attributes {engine = "cube+vector", {{.*}}pattern = "cube_epilogue"}
// CHECK:      task.kernel "/scale" {{.*}} attributes {engine = "vector"
// CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<32x32xf32>):
// CHECK-NEXT:   ge.constant dense<2.000000e+00> : tensor<f32>
// CHECK:      task.kernel "/shape_math" {{.*}} attributes {engine = "aicpu", block_dim = 1 : i64
// CHECK:      task.kernel "/scale#2"
func.func @engines(%a: tensor<32x16xf32>, %i: tensor<4xi64>) -> (tensor<32x32xf32>, tensor<4xi64>, tensor<32x32xf32>) {
  %w = ge.constant dense<1.0> : tensor<16x32xf32>
  %two = ge.constant dense<2.0> : tensor<f32>
  %0 = ge.matmul %a, %w : (tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<32x32xf32> loc("/mm")
  %1 = fused.group "cube+elementwise" "cube_epilogue" (%a, %w) : (tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<32x32xf32> {
  ^bb0(%x: tensor<32x16xf32>, %y: tensor<16x32xf32>):
    %m = ge.matmul %x, %y : (tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<32x32xf32>
    %r = ge.relu %m : (tensor<32x32xf32>) -> tensor<32x32xf32>
    fused.yield %r : tensor<32x32xf32>
  } loc("/grp")
  %2 = ge.mul %1, %two : (tensor<32x32xf32>, tensor<f32>) -> tensor<32x32xf32> loc("/scale")
  %3 = ge.add %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64> loc("/shape_math")
  %4 = ge.add %0, %2 : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> loc("/scale")
  func.return %2, %3, %4 : tensor<32x32xf32>, tensor<4xi64>, tensor<32x32xf32>
}

// -----

// An unknown target is one clear error.
// RUN: not ge-opt %s -p 'lower-to-tasks{target=ascend1}' 2>&1 | filecheck %s --check-prefix=TARGET
// TARGET: ge-opt: error: lower-to-tasks: unknown target 'ascend1'
func.func @t(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = ge.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
