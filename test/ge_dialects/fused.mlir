// RUN: ge-opt %s | ge-opt | filecheck %s

// A fused group round-trips: pattern class, rule, inputs, body with node names, yield.
// CHECK-LABEL: func.func @main
// CHECK:      %0 = fused.group "elementwise" "elementwise_chain" (%x, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<2x3xf32>):
// CHECK-NEXT:   ge.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:   ge.add {{.*}} loc("/add")
// CHECK-NEXT:   ge.mul
// CHECK-NEXT:   fused.yield %{{.*}} : tensor<2x3xf32>
// CHECK-NEXT: } loc("/add")
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = fused.group "elementwise" "elementwise_chain" (%x, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>):
    %h = ge.constant dense<0.5> : tensor<f32>
    %s = ge.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("/add")
    %m = ge.mul %s, %h : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    fused.yield %m : tensor<2x3xf32>
  } loc("/add")
  func.return %0 : tensor<2x3xf32>
}
