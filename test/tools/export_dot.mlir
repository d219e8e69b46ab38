// RUN: ge-translate %s --export-dot | filecheck %s
// RUN: ge-translate %s --export-dot -o %t.dot && filecheck %s < %t.dot

// A fused group is a cluster titled with its pattern class and rule; its ops are nodes inside it;
// edges carry shape, element type and storage format; constants are listed in their consumer.
// CHECK:      digraph "main" {
// CHECK:      in0 [label="x\n1x16x64 f32", shape=invhouse
// CHECK:      n0 [label="ge.trans_data\nND -> FRACTAL_NZ"];
// CHECK:      subgraph cluster_0 {
// CHECK-NEXT:   label="cube+elementwise: cube_epilogue\n/fc/MatMul";
// CHECK-NEXT:   n1 [label="ge.matmul\n/fc/MatMul\nB: 64x32 f32 FRACTAL_NZ"];
// CHECK-NEXT:   n2 [label="ge.relu\n/fc/Relu \"q\""];
// CHECK-NEXT: }
// CHECK:      out0 [label="y", shape=house
// CHECK:      in0 -> n0 [label="1x16x64 f32"];
// CHECK-NEXT: n0 -> n1 [label="1x16x64 f32 FRACTAL_NZ"];
// CHECK-NEXT: n1 -> n2 [label="1x16x32 f32 FRACTAL_NZ"];
// CHECK-NEXT: n2 -> n3 [label="1x16x32 f32 FRACTAL_NZ"];
// CHECK-NEXT: n3 -> out0 [label="1x16x32 f32"];
// CHECK-NEXT: }
func.func @main(%x: tensor<1x16x64xf32> {ge.name = "x"}) -> (tensor<1x16x32xf32> {ge.name = "y"}) {
  %t = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<1x16x64xf32>) -> tensor<1x16x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %w = ge.constant #ge.weight<"fc.weight"> : tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("fc.weight")
  %g = fused.group "cube+elementwise" "cube_epilogue" (%t, %w) : (tensor<1x16x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<1x16x32xf32, #ge.fmt<ND, FRACTAL_NZ>> {
  ^bb0(%a: tensor<1x16x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, %b: tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>>):
    %m = ge.matmul %a, %b : (tensor<1x16x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<1x16x32xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/fc/MatMul")
    %r = ge.relu %m : (tensor<1x16x32xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<1x16x32xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/fc/Relu \"q\"")
    fused.yield %r : tensor<1x16x32xf32, #ge.fmt<ND, FRACTAL_NZ>>
  } loc("/fc/MatMul")
  %y = ge.trans_data %g {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<1x16x32xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<1x16x32xf32>
  func.return %y : tensor<1x16x32xf32>
}
