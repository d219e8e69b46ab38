// RUN: ge-opt %s --load-op-library %S/../../api/custom_ops/fusion_ops.py -p assign-formats --split-input-file | filecheck %s
// RUN: ge-opt %s --load-op-library %S/../../api/custom_ops/fusion_ops.py -p assign-formats --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// custom-formats: a plugin's op computes in the format its operand arrives in when its
// registration declares it (test/api/custom_ops/fusion_ops.py: Softsign declares NC1HWC0 and
// FRACTAL_NZ): the conv's NC1HWC0 flows through it to the relu, no TransData between them.

// CHECK-LABEL: func.func @declared
// CHECK:         %c = ge.conv {{.*}} -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %s = ge.custom %c {{.*}} : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %r = ge.relu %s : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// REMARK: applied custom-formats on [/ss]: ge.custom '/ss' carries NC1HWC0 from 'inputs'
func.func @declared(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = ge.constant dense<0.5> : tensor<4x3x3x3xf32>
  %c = ge.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> loc("/conv")
  %s = ge.custom %c {library = "fusion_ops", domain = "com.test", op_type = "Softsign", attrs = {}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("/ss")
  %r = ge.relu %s : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("/relu")
  func.return %r : tensor<1x4x6x6xf32>
}

// -----

// custom-formats, negative: SoftsignND declares no format; it reads the conv's result in ND.

// CHECK-LABEL: func.func @undeclared
// CHECK:         %[[ND:.*]] = ge.trans_data %c {src_format = "NC1HWC0", dst_format = "ND"}
// CHECK-NEXT:    %s = ge.custom %[[ND]] {{.*}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// REMARK: rejected custom-formats on [/ss]: {{.*}} custom-formats does not carry NC1HWC0 (operand 'inputs'); it declares no formats
func.func @undeclared(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32> {
  %w = ge.constant dense<0.5> : tensor<4x3x3x3xf32>
  %c = ge.conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> loc("/conv")
  %s = ge.custom %c {library = "fusion_ops", domain = "com.test", op_type = "SoftsignND", attrs = {}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("/ss")
  %r = ge.relu %s : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> loc("/relu")
  func.return %r : tensor<1x4x6x6xf32>
}

// -----

// custom-formats into FRACTAL_NZ: the matmul's result.

// CHECK-LABEL: func.func @nz
// CHECK:         %s = ge.custom %m {{.*}} : (tensor<32x32xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x32xf32, #ge.fmt<ND, FRACTAL_NZ>>
// REMARK: applied custom-formats on [/ss]: ge.custom '/ss' carries FRACTAL_NZ from 'inputs'
func.func @nz(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %m = ge.matmul %a, %b : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32> loc("/mm")
  %s = ge.custom %m {library = "fusion_ops", domain = "com.test", op_type = "Softsign", attrs = {}} : (tensor<32x32xf32>) -> tensor<32x32xf32> loc("/ss")
  func.return %s : tensor<32x32xf32>
}
