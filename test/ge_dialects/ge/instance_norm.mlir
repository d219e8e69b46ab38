// RUN: ge-opt %s | ge-opt | filecheck %s

// CHECK-LABEL: func.func @instance_norm
func.func @instance_norm(%x: tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, %c: tensor<3xf32>, %h: tensor<?x4x7xf16>, %g: tensor<4xf16>) -> (tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<?x4x7xf16>) {
  // CHECK: ge.instance_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32, #ge.fmt<NCHW>>
  %0 = ge.instance_norm %x, %c, %c {epsilon = 1.000000e-03 : f32} : (tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32, #ge.fmt<NCHW>>
  // CHECK: ge.instance_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x4x7xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<?x4x7xf16>
  %1 = ge.instance_norm %h, %g, %g : (tensor<?x4x7xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<?x4x7xf16>
  func.return %0, %1 : tensor<2x3x4x5xf32, #ge.fmt<NCHW>>, tensor<?x4x7xf16>
}
