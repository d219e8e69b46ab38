// RUN: ge-opt %s -p 'assign-formats{choice=greedy}' --split-input-file | filecheck %s
// RUN: ge-opt %s -p 'assign-formats{choice=greedy}' --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: ge-opt %s -p 'assign-formats{choice=greedy nz=false}' --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=NONZ
// RUN: ge-opt %s -p 'assign-formats{choice=greedy nz-min-dim=64}' --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=MINDIM
// RUN: ge-opt %s -p 'assign-formats{choice=greedy insert=false}' --split-input-file | filecheck %s --check-prefix=PLAN
// RUN: ge-opt %s -p 'assign-formats{choice=greedy variable-formats=false}' --split-input-file | filecheck %s --check-prefix=NOVAR
// RUN: ge-opt %s -p assign-formats --split-input-file | filecheck %s --check-prefix=WHOLE

// The rules one op at a time: the format-agnostic ops take the format arriving first
// (choice=greedy). The WHOLE lines show where the default whole-graph choice decides otherwise
// (format_choice.mlir has its own cases).

// Rules: conv-nc1hwc0 and conv-weight-fractal-z (positive); NC1HWC0 flows through relu and add
// (elementwise); the graph input and output keep their storage format (TransData at the edges).

// CHECK-LABEL: func.func @conv_block
// CHECK-NEXT:    %w = ge.constant
// CHECK-NEXT:    %b = ge.constant
// CHECK-NEXT:    %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %1 = ge.trans_data %w {src_format = "ND", dst_format = "FRACTAL_Z"} : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>
// CHECK-NEXT:    %c = ge.conv %0, %1, B = %b : (tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4x3x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>, tensor<4xf32>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %r = ge.relu %c : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %s = ge.add %r, %c : {{.*}} -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %2 = ge.trans_data %s {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>>
// CHECK-NEXT:    func.return %2 : tensor<1x4x6x6xf32, #ge.fmt<NCHW>>
// REMARK: applied conv-nc1hwc0 on [/conv]: ge.conv '/conv': X, Y in NC1HWC0
// REMARK: applied conv-weight-fractal-z on [/conv]: ge.conv '/conv': W in FRACTAL_Z
// REMARK: applied elementwise on [/relu]: ge.relu '/relu' carries NC1HWC0 from 'x'
// REMARK: applied elementwise on [/add]: ge.add '/add' carries NC1HWC0 from 'a'
// PLAN-LABEL: func.func @conv_block
// PLAN: ge.conv %x, %w, B = %b {ge.storage = {X = "NC1HWC0", Y = "NC1HWC0", W = "FRACTAL_Z"}}
// PLAN: ge.relu %c {ge.storage = {x = "NC1HWC0", y = "NC1HWC0"}}
func.func @conv_block(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> {
  %w = ge.constant dense<0.5> : tensor<4x3x3x3xf32>
  %b = ge.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %c = ge.conv %x, %w, B = %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> loc("/conv")
  %r = ge.relu %c : (tensor<1x4x6x6xf32, #ge.fmt<NCHW>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> loc("/relu")
  %s = ge.add %r, %c : (tensor<1x4x6x6xf32, #ge.fmt<NCHW>>, tensor<1x4x6x6xf32, #ge.fmt<NCHW>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> loc("/add")
  func.return %s : tensor<1x4x6x6xf32, #ge.fmt<NCHW>>
}

// -----

// The backward's activation gradients follow the conv's NC1HWC0 like their forwards (elementwise).

// CHECK-LABEL: func.func @activation_grads
// CHECK:         %g = ge.relu_grad %{{.*}}, %r : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %h = ge.gelu_grad %g, %c : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// REMARK: applied elementwise on [/relu/grad]: ge.relu_grad '/relu/grad' carries NC1HWC0 from 'y'
// The whole-graph choice: the chain ends at the graph's output and dy arrives logical. On the 910B
// (the default target) the Vector kernels of the chain convert dy and the result in their UBs
// (TransDataTo5HD), so the chain stays in NC1HWC0 behind the conv (one Cube kernel with its relu);
// one TransData after the conv would split that epilogue and stay a kernel.
// WHOLE-LABEL: func.func @activation_grads
// WHOLE:         %r = ge.relu %c : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>)
// WHOLE-NEXT:    %2 = ge.trans_data %dy {src_format = "NCHW", dst_format = "NC1HWC0"}
// WHOLE-NEXT:    %g = ge.relu_grad %2, %r : {{.*}} -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// WHOLE-NEXT:    %h = ge.gelu_grad %g, %c : {{.*}} -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// WHOLE-NEXT:    %3 = ge.trans_data %h {src_format = "NC1HWC0", dst_format = "NCHW"}
// WHOLE-NEXT:    func.return %3
// REMARK: applied elementwise on [/gelu/grad]: ge.gelu_grad '/gelu/grad' carries NC1HWC0 from 'dy'
func.func @activation_grads(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW>>, %dy: tensor<1x4x6x6xf32, #ge.fmt<NCHW>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> {
  %w = ge.constant dense<0.5> : tensor<4x3x3x3xf32>
  %c = ge.conv %x, %w : (tensor<1x3x8x8xf32, #ge.fmt<NCHW>>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> loc("/conv")
  %r = ge.relu %c : (tensor<1x4x6x6xf32, #ge.fmt<NCHW>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> loc("/relu")
  %g = ge.relu_grad %dy, %r : (tensor<1x4x6x6xf32, #ge.fmt<NCHW>>, tensor<1x4x6x6xf32, #ge.fmt<NCHW>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> loc("/relu/grad")
  %h = ge.gelu_grad %g, %c : (tensor<1x4x6x6xf32, #ge.fmt<NCHW>>, tensor<1x4x6x6xf32, #ge.fmt<NCHW>>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> loc("/gelu/grad")
  func.return %h : tensor<1x4x6x6xf32, #ge.fmt<NCHW>>
}

// -----

// conv-weight-fractal-z, negative: a weight that is not a constant, and a grouped conv.

// CHECK-LABEL: func.func @conv_weights_kept
// CHECK:         ge.conv %{{.*}}, %w : (tensor<1x4x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK:         ge.conv %{{.*}}, %g {group = 2 : i64} : (tensor<1x4x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// REMARK: rejected conv-weight-fractal-z on [/conv_arg]: ge.conv '/conv_arg': W not in FRACTAL_Z: operand 'W' is not a constant or a variable (a TransData would run on every call)
// REMARK: rejected conv-weight-fractal-z on [/conv_grouped]: ge.conv '/conv_grouped': W not in FRACTAL_Z: group = 2: grouped conv weights need FRACTAL_Z with group packing (not modeled)
func.func @conv_weights_kept(%x: tensor<1x4x8x8xf32, #ge.fmt<NCHW>>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>> {
  %g = ge.constant dense<0.25> : tensor<4x2x3x3xf32>
  %0 = ge.conv %x, %w : (tensor<1x4x8x8xf32, #ge.fmt<NCHW>>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> loc("/conv_arg")
  %1 = ge.conv %0, %g {group = 2 : i64} : (tensor<1x4x6x6xf32, #ge.fmt<NCHW>>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>> loc("/conv_grouped")
  func.return %1 : tensor<1x4x4x4xf32, #ge.fmt<NCHW>>
}

// -----

// conv-transpose-nc1hwc0 and conv-transpose-weight-fractal-z (positive): a conv / conv_transpose
// upsampling chain stays in NC1HWC0, the constant filter in FRACTAL_Z; negative: a grouped
// transposed conv's weight stays ND, and a 1-D one stays in its layout.

// CHECK-LABEL: func.func @conv_transpose_chain
// CHECK:         %c = ge.conv %0, %1 {{.*}} -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %2 = ge.trans_data %t {src_format = "ND", dst_format = "FRACTAL_Z"} : (tensor<8x6x4x4xf32>) -> tensor<8x6x4x4xf32, #ge.fmt<NCHW, FRACTAL_Z>>
// CHECK-NEXT:    %u = ge.conv_transpose %c, %2 {{.*}} : (tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<8x6x4x4xf32, #ge.fmt<NCHW, FRACTAL_Z>>) -> tensor<1x6x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %r = ge.relu %u : {{.*}} -> tensor<1x6x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %v = ge.conv_transpose %r, %g {{.*}} : (tensor<1x6x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<6x2x3x3xf32>) -> tensor<1x4x15x15xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %k = ge.conv_transpose %y, %l : (tensor<1x2x5xf32>, tensor<2x3x3xf32>) -> tensor<1x3x7xf32>
// CHECK-NEXT:    %3 = ge.trans_data %v {src_format = "NC1HWC0", dst_format = "NCHW"}
// REMARK: applied conv-transpose-nc1hwc0 on [/up]: ge.conv_transpose '/up': X, Y in NC1HWC0
// REMARK: applied conv-transpose-weight-fractal-z on [/up]: ge.conv_transpose '/up': W in FRACTAL_Z
// REMARK: applied conv-transpose-nc1hwc0 on [/up_grouped]: ge.conv_transpose '/up_grouped': X, Y in NC1HWC0
// REMARK: rejected conv-transpose-weight-fractal-z on [/up_grouped]: ge.conv_transpose '/up_grouped': W not in FRACTAL_Z: group = 2: grouped conv weights need FRACTAL_Z with group packing (not modeled)
// REMARK: rejected conv-transpose-nc1hwc0 on [/up1d]: ge.conv_transpose '/up1d': X, Y not in NC1HWC0: 'X': NC1HWC0 needs a 4-D NCHW or NHWC tensor, got origin ND of rank 3
func.func @conv_transpose_chain(%x: tensor<1x3x8x8xf32>, %y: tensor<1x2x5xf32>) -> (tensor<1x4x15x15xf32, #ge.fmt<NCHW>>, tensor<1x3x7xf32>) {
  %w = ge.constant dense<0.5> : tensor<8x3x3x3xf32>
  %t = ge.constant dense<0.25> : tensor<8x6x4x4xf32>
  %g = ge.constant dense<0.125> : tensor<6x2x3x3xf32>
  %l = ge.constant dense<0.5> : tensor<2x3x3xf32>
  %c = ge.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> loc("/conv")
  %u = ge.conv_transpose %c, %t {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<8x6x4x4xf32>) -> tensor<1x6x8x8xf32, #ge.fmt<NCHW>> loc("/up")
  %r = ge.relu %u : (tensor<1x6x8x8xf32, #ge.fmt<NCHW>>) -> tensor<1x6x8x8xf32, #ge.fmt<NCHW>> loc("/relu")
  %v = ge.conv_transpose %r, %g {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x6x8x8xf32, #ge.fmt<NCHW>>, tensor<6x2x3x3xf32>) -> tensor<1x4x15x15xf32, #ge.fmt<NCHW>> loc("/up_grouped")
  %k = ge.conv_transpose %y, %l : (tensor<1x2x5xf32>, tensor<2x3x3xf32>) -> tensor<1x3x7xf32> loc("/up1d")
  func.return %v, %k : tensor<1x4x15x15xf32, #ge.fmt<NCHW>>, tensor<1x3x7xf32>
}

// -----

// conv-nc1hwc0, negative: a 1-D conv (rank 3), an f64 conv (no C0), dynamic channels.

// CHECK-LABEL: func.func @conv_activations_kept
// CHECK-NOT:     ge.trans_data
// CHECK:         func.return
// REMARK: rejected conv-nc1hwc0 on [/conv1d]: ge.conv '/conv1d': X, Y not in NC1HWC0: 'X': NC1HWC0 needs a 4-D NCHW or NHWC tensor, got origin ND of rank 3
// REMARK: rejected conv-weight-fractal-z on [/conv1d]: ge.conv '/conv1d': W not in FRACTAL_Z: operand 'W' is not a constant
// REMARK: rejected conv-nc1hwc0 on [/conv_f64]: ge.conv '/conv_f64': X, Y not in NC1HWC0: 'X': NC1HWC0 has no C0 for element type f64
// REMARK: rejected conv-nc1hwc0 on [/conv_dyn]: ge.conv '/conv_dyn': X, Y not in NC1HWC0: 'X': NC1HWC0 needs static dims [1] (they are split into blocks)
func.func @conv_activations_kept(%x: tensor<1x2x9xf32>, %w: tensor<3x2x3xf32>, %y: tensor<1x2x5x5xf64>, %v: tensor<3x2x3x3xf64>, %z: tensor<1x?x5x5xf32>, %u: tensor<3x2x3x3xf32>) -> (tensor<1x3x7xf32>, tensor<1x3x3x3xf64, #ge.fmt<NCHW>>, tensor<1x3x3x3xf32, #ge.fmt<NCHW>>) {
  %0 = ge.conv %x, %w : (tensor<1x2x9xf32>, tensor<3x2x3xf32>) -> tensor<1x3x7xf32> loc("/conv1d")
  %1 = ge.conv %y, %v : (tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64, #ge.fmt<NCHW>> loc("/conv_f64")
  %2 = ge.conv %z, %u : (tensor<1x?x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32, #ge.fmt<NCHW>> loc("/conv_dyn")
  func.return %0, %1, %2 : tensor<1x3x7xf32>, tensor<1x3x3x3xf64, #ge.fmt<NCHW>>, tensor<1x3x3x3xf32, #ge.fmt<NCHW>>
}

// -----

// pool-nc1hwc0 and batch-norm-nc1hwc0: the BN parameters keep their formats.

// CHECK-LABEL: func.func @pools_and_bn
// CHECK:         %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"}
// CHECK-NEXT:    %n = ge.batch_norm %0, %p, %p, %p, %p : (tensor<1x20x8x8xf16, #ge.fmt<NCHW, NC1HWC0>>, tensor<20xf16>, tensor<20xf16>, tensor<20xf16>, tensor<20xf16>) -> tensor<1x20x8x8xf16, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %m = ge.max_pool %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x20x8x8xf16, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x20x4x4xf16, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %a = ge.avg_pool %m {kernel_shape = array<i64: 2, 2>} : (tensor<1x20x4x4xf16, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x20x3x3xf16, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %g = ge.global_avg_pool %a : (tensor<1x20x3x3xf16, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x20x1x1xf16, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %1 = ge.trans_data %g {src_format = "NC1HWC0", dst_format = "NCHW"}
// CHECK-NEXT:    %f = ge.flatten %1
// REMARK: applied batch-norm-nc1hwc0 on [/bn]
// REMARK: applied pool-nc1hwc0 on [/max]: ge.max_pool '/max': X, Y in NC1HWC0
// REMARK: applied pool-nc1hwc0 on [/avg]
// REMARK: applied pool-nc1hwc0 on [/gap]
// REMARK: applied insert on [ge.flatten]: ge.flatten needs NCHW, its operand is stored in NC1HWC0 (no layout rule carries a storage format through ge.flatten)
func.func @pools_and_bn(%x: tensor<1x20x8x8xf16, #ge.fmt<NCHW>>, %p: tensor<20xf16>) -> tensor<1x20xf16> {
  %n = ge.batch_norm %x, %p, %p, %p, %p : (tensor<1x20x8x8xf16, #ge.fmt<NCHW>>, tensor<20xf16>, tensor<20xf16>, tensor<20xf16>, tensor<20xf16>) -> tensor<1x20x8x8xf16, #ge.fmt<NCHW>> loc("/bn")
  %m = ge.max_pool %n {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x20x8x8xf16, #ge.fmt<NCHW>>) -> tensor<1x20x4x4xf16, #ge.fmt<NCHW>> loc("/max")
  %a = ge.avg_pool %m {kernel_shape = array<i64: 2, 2>} : (tensor<1x20x4x4xf16, #ge.fmt<NCHW>>) -> tensor<1x20x3x3xf16, #ge.fmt<NCHW>> loc("/avg")
  %g = ge.global_avg_pool %a : (tensor<1x20x3x3xf16, #ge.fmt<NCHW>>) -> tensor<1x20x1x1xf16, #ge.fmt<NCHW>> loc("/gap")
  %f = ge.flatten %g {axis = 1 : i64} : (tensor<1x20x1x1xf16, #ge.fmt<NCHW>>) -> tensor<1x20xf16>
  func.return %f : tensor<1x20xf16>
}

// -----

// pool-nc1hwc0 and batch-norm-nc1hwc0, negative: a 1-D pool and a 2-D batch norm.

// CHECK-LABEL: func.func @pools_and_bn_kept
// CHECK-NOT:     ge.trans_data
// REMARK: rejected batch-norm-nc1hwc0 on [/bn2d]: ge.batch_norm '/bn2d': X, Y not in NC1HWC0: 'X': NC1HWC0 needs a 4-D NCHW or NHWC tensor, got origin ND of rank 2
// REMARK: rejected pool-nc1hwc0 on [/pool1d]: ge.max_pool '/pool1d': X, Y not in NC1HWC0: 'X': NC1HWC0 needs a 4-D NCHW or NHWC tensor, got origin ND of rank 3
func.func @pools_and_bn_kept(%x: tensor<4x20xf32>, %p: tensor<20xf32>, %y: tensor<1x2x8xf32>) -> (tensor<4x20xf32>, tensor<1x2x4xf32>) {
  %0 = ge.batch_norm %x, %p, %p, %p, %p : (tensor<4x20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<4x20xf32> loc("/bn2d")
  %1 = ge.max_pool %y {kernel_shape = array<i64: 2>, strides = array<i64: 2>} : (tensor<1x2x8xf32>) -> tensor<1x2x4xf32> loc("/pool1d")
  func.return %0, %1 : tensor<4x20xf32>, tensor<1x2x4xf32>
}

// -----

// elementwise, broadcasting in NC1HWC0: a per-channel vector and a scalar are read as they are;
// a spatial map is not a layout NC1HWC0 keeps whole (rejected: TransData back before the op).

// CHECK-LABEL: func.func @nc1hwc0_broadcast
// CHECK:         %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"}
// CHECK-NEXT:    %n = ge.batch_norm
// CHECK-NEXT:    %b = ge.add %n, %c : (tensor<1x20x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<20x1x1xf32>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %s = ge.mul %b, %k : (tensor<1x20x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<f32>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %1 = ge.trans_data %s {src_format = "NC1HWC0", dst_format = "NCHW"}
// CHECK-NEXT:    %m = ge.add %1, %hw : (tensor<1x20x4x4xf32, #ge.fmt<NCHW>>, tensor<1x1x4x4xf32>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>>
// REMARK: applied elementwise on [/bias]: ge.add '/bias' carries NC1HWC0 from 'a'
// REMARK: applied elementwise on [/scale]: ge.mul '/scale' carries NC1HWC0 from 'a'
// REMARK: rejected elementwise on [/map]: ge.add '/map' does not carry NC1HWC0 from 'a': operand 'b' of shape [1, 1, 4, 4] broadcasts to [1, 20, 4, 4] in a way NC1HWC0 cannot (only scalars and channel vectors)
func.func @nc1hwc0_broadcast(%x: tensor<1x20x4x4xf32, #ge.fmt<NCHW>>, %p: tensor<20xf32>, %c: tensor<20x1x1xf32>, %k: tensor<f32>, %hw: tensor<1x1x4x4xf32>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>> {
  %n = ge.batch_norm %x, %p, %p, %p, %p : (tensor<1x20x4x4xf32, #ge.fmt<NCHW>>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>>
  %b = ge.add %n, %c : (tensor<1x20x4x4xf32, #ge.fmt<NCHW>>, tensor<20x1x1xf32>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>> loc("/bias")
  %s = ge.mul %b, %k : (tensor<1x20x4x4xf32, #ge.fmt<NCHW>>, tensor<f32>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>> loc("/scale")
  %m = ge.add %s, %hw : (tensor<1x20x4x4xf32, #ge.fmt<NCHW>>, tensor<1x1x4x4xf32>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>> loc("/map")
  func.return %m : tensor<1x20x4x4xf32, #ge.fmt<NCHW>>
}

// -----

// elementwise, negative: a result with another C0 (bool: 32 per block, f32: 8) is not a pure map
// in storage; clip (scalar bounds) and dropout carry the format.

// CHECK-LABEL: func.func @follow_kinds
// CHECK:         %c = ge.clip %n, min = %lo, max = %hi : (tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<f32>, tensor<f32>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %d = ge.dropout %c : (tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %1 = ge.trans_data %d {src_format = "NC1HWC0", dst_format = "NCHW"}
// CHECK-NEXT:    %e = ge.equal %1, %1 : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xi1, #ge.fmt<NCHW>>
// REMARK: applied clip on [/clip]
// REMARK: applied dropout on [/dropout]
// REMARK: rejected elementwise on [/equal]: ge.equal '/equal' does not carry NC1HWC0 from 'a': its values have different C0 ('a' C0=8, 'b' C0=8, 'z' C0=32): not a pure elementwise map in storage
func.func @follow_kinds(%x: tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, %p: tensor<8xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<1x8x4x4xi1, #ge.fmt<NCHW>> {
  %n = ge.batch_norm %x, %p, %p, %p, %p : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
  %c = ge.clip %n, min = %lo, max = %hi : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<f32>, tensor<f32>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> loc("/clip")
  %d = ge.dropout %c : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> loc("/dropout")
  %e = ge.equal %d, %d : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xi1, #ge.fmt<NCHW>> loc("/equal")
  func.return %e : tensor<1x8x4x4xi1, #ge.fmt<NCHW>>
}

// -----

// matmul-fractal-nz (positive; benefit = MACs) and NZ flowing through a bias add (row vector),
// gelu and layer_norm over the last axis into the next matmul: no TransData inside the chain.
// The constant weights are converted (fold-trans-data folds them).

// CHECK-LABEL: func.func @nz_chain
// CHECK:         %0 = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<2x32x64xf32>) -> tensor<2x32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK-NEXT:    %1 = ge.trans_data %w1 {src_format = "ND", dst_format = "FRACTAL_NZ"}
// CHECK-NEXT:    %m1 = ge.matmul %0, %1 : (tensor<2x32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<2x32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK-NEXT:    %b1 = ge.add %bias, %m1 : (tensor<48xf32>, tensor<2x32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<2x32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK-NEXT:    %g = ge.gelu %b1 : {{.*}} -> tensor<2x32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK-NEXT:    %l = ge.layer_norm %g, %bias, B = %bias : (tensor<2x32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK-NEXT:    %2 = ge.trans_data %w2
// CHECK-NEXT:    %m2 = ge.matmul %l, %2 : (tensor<2x32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<48x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<2x32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK-NEXT:    %3 = ge.trans_data %m2 {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<2x32x16xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<2x32x16xf32>
// CHECK-NEXT:    func.return %3
// REMARK: applied matmul-fractal-nz on [/mm1]: ge.matmul '/mm1': A, B, Y in FRACTAL_NZ (benefit 1.97e+05)
// REMARK: applied elementwise on [/bias_add]: ge.add '/bias_add' carries FRACTAL_NZ from 'b'
// REMARK: applied elementwise on [/gelu]
// REMARK: applied layer-norm-last-axis on [/ln]: ge.layer_norm '/ln' carries FRACTAL_NZ from 'X'
// REMARK: applied matmul-fractal-nz on [/mm2]
// NONZ: rejected matmul-fractal-nz on [/mm1]: ge.matmul '/mm1': A, B, Y not in FRACTAL_NZ: FRACTAL_NZ is disabled (nz=false)
// MINDIM: rejected matmul-fractal-nz on [/mm1]: ge.matmul '/mm1': A, B, Y not in FRACTAL_NZ: M = 32 < nz-min-dim=64 (the tile would be mostly padding)
func.func @nz_chain(%x: tensor<2x32x64xf32>) -> tensor<2x32x16xf32> {
  %w1 = ge.constant dense<0.125> : tensor<64x48xf32>
  %w2 = ge.constant dense<0.25> : tensor<48x16xf32>
  %bias = ge.constant dense<1.0> : tensor<48xf32>
  %m1 = ge.matmul %x, %w1 : (tensor<2x32x64xf32>, tensor<64x48xf32>) -> tensor<2x32x48xf32> loc("/mm1")
  %b1 = ge.add %bias, %m1 : (tensor<48xf32>, tensor<2x32x48xf32>) -> tensor<2x32x48xf32> loc("/bias_add")
  %g = ge.gelu %b1 : (tensor<2x32x48xf32>) -> tensor<2x32x48xf32> loc("/gelu")
  %l = ge.layer_norm %g, %bias, B = %bias : (tensor<2x32x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<2x32x48xf32> loc("/ln")
  %m2 = ge.matmul %l, %w2 : (tensor<2x32x48xf32>, tensor<48x16xf32>) -> tensor<2x32x16xf32> loc("/mm2")
  func.return %m2 : tensor<2x32x16xf32>
}

// -----

// matmul-fractal-nz / gemm-fractal-nz, negative: a dim below 16 (the ResNet classifier, M = 1),
// a dynamic M, an integer matmul (not a Cube type).

// CHECK-LABEL: func.func @nz_rejected
// CHECK-NOT:     ge.trans_data
// REMARK: rejected gemm-fractal-nz on [/fc]: ge.gemm '/fc': A, B, Y not in FRACTAL_NZ: M = 1 < nz-min-dim=16 (the tile would be mostly padding)
// REMARK: rejected matmul-fractal-nz on [/dyn]: ge.matmul '/dyn': A, B, Y not in FRACTAL_NZ: M is dynamic
// REMARK: rejected matmul-fractal-nz on [/int]: ge.matmul '/int': A, B, Y not in FRACTAL_NZ: element type i32 does not run on the Cube
func.func @nz_rejected(%a: tensor<1x2048xf32>, %w: tensor<1000x2048xf32>, %c: tensor<1000xf32>, %d: tensor<?x32xf32>, %e: tensor<32x32xf32>, %i: tensor<32x32xi32>) -> (tensor<1x1000xf32>, tensor<?x32xf32>, tensor<32x32xi32>) {
  %0 = ge.gemm %a, %w, C = %c {transB = 1 : i64} : (tensor<1x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<1x1000xf32> loc("/fc")
  %1 = ge.matmul %d, %e : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32> loc("/dyn")
  %2 = ge.matmul %i, %i : (tensor<32x32xi32>, tensor<32x32xi32>) -> tensor<32x32xi32> loc("/int")
  func.return %0, %1, %2 : tensor<1x1000xf32>, tensor<?x32xf32>, tensor<32x32xi32>
}

// -----

// gemm-fractal-nz (positive, transposed B; the bias C is read as a row vector and stays ND);
// softmax-last-axis carries NZ, softmax over another axis does not; layer_norm over more than
// the last axis does not; a column vector does not broadcast in NZ.

// CHECK-LABEL: func.func @nz_followers
// CHECK:         %y = ge.gemm %0, %1, C = %c {transB = 1 : i64} : (tensor<32x64xf16, #ge.fmt<ND, FRACTAL_NZ>>, tensor<48x64xf16, #ge.fmt<ND, FRACTAL_NZ>>, tensor<48xf16>) -> tensor<32x48xf16, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK-NEXT:    %s = ge.softmax %y {axis = 1 : i64} : (tensor<32x48xf16, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf16, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK-NEXT:    %2 = ge.trans_data %s {src_format = "FRACTAL_NZ", dst_format = "ND"}
// CHECK-NEXT:    %t = ge.softmax %2 {axis = 0 : i64} : (tensor<32x48xf16>) -> tensor<32x48xf16>
// CHECK-NEXT:    %l = ge.layer_norm %2, %g {axis = 0 : i64}
// CHECK-NEXT:    %v = ge.add %2, %col : (tensor<32x48xf16>, tensor<32x1xf16>) -> tensor<32x48xf16>
// REMARK: applied gemm-fractal-nz on [/gemm]: ge.gemm '/gemm': A, B, Y in FRACTAL_NZ (benefit 9.83e+04)
// REMARK: applied softmax-last-axis on [/softmax_last]
// REMARK: rejected softmax-last-axis on [/softmax_rows]: ge.softmax '/softmax_rows' does not carry FRACTAL_NZ from 'input': axis = 0 is not the last axis (FRACTAL_NZ splits the last two dims)
// REMARK: rejected layer-norm-last-axis on [/ln_all]: ge.layer_norm '/ln_all' does not carry FRACTAL_NZ from 'X': axis = 0 is not the last axis (FRACTAL_NZ splits the last two dims)
// REMARK: rejected elementwise on [/col]: ge.add '/col' does not carry FRACTAL_NZ from 'a': operand 'b' of shape [32, 1] broadcasts to [32, 48] in a way FRACTAL_NZ cannot (only scalars and row vectors)
func.func @nz_followers(%a: tensor<32x64xf16>, %b: tensor<48x64xf16>, %c: tensor<48xf16>, %g: tensor<32x48xf16>, %col: tensor<32x1xf16>) -> (tensor<32x48xf16>, tensor<32x48xf16>, tensor<32x48xf16>) {
  %y = ge.gemm %a, %b, C = %c {transB = 1 : i64} : (tensor<32x64xf16>, tensor<48x64xf16>, tensor<48xf16>) -> tensor<32x48xf16> loc("/gemm")
  %s = ge.softmax %y {axis = 1 : i64} : (tensor<32x48xf16>) -> tensor<32x48xf16> loc("/softmax_last")
  %t = ge.softmax %s {axis = 0 : i64} : (tensor<32x48xf16>) -> tensor<32x48xf16> loc("/softmax_rows")
  %l = ge.layer_norm %s, %g {axis = 0 : i64} : (tensor<32x48xf16>, tensor<32x48xf16>) -> tensor<32x48xf16> loc("/ln_all")
  %v = ge.add %s, %col : (tensor<32x48xf16>, tensor<32x1xf16>) -> tensor<32x48xf16> loc("/col")
  func.return %t, %l, %v : tensor<32x48xf16>, tensor<32x48xf16>, tensor<32x48xf16>
}

// -----

// softmax-last-axis carries only FRACTAL_NZ: an NC1HWC0 softmax input goes back to NCHW.

// CHECK-LABEL: func.func @softmax_nc1hwc0
// CHECK:         %1 = ge.trans_data %n {src_format = "NC1HWC0", dst_format = "NCHW"}
// CHECK-NEXT:    ge.softmax %1
// REMARK: rejected softmax-last-axis on [/softmax_5hd]: ge.softmax '/softmax_5hd' does not carry NC1HWC0 from 'input': softmax-last-axis does not carry NC1HWC0 (operand 'input')
func.func @softmax_nc1hwc0(%x: tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, %p: tensor<8xf32>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> {
  %n = ge.batch_norm %x, %p, %p, %p, %p : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
  %s = ge.softmax %n : (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> loc("/softmax_5hd")
  func.return %s : tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
}

// -----

// Backward anchors on a training step's conv: Conv2DBackpropInput (dy, dx NC1HWC0, W FRACTAL_Z),
// Conv2DBackpropFilter (x, dy NC1HWC0, dW FRACTAL_Z); relu_grad follows. Variable formats: the
// weight variable and its momentum slot are stored in FRACTAL_Z, the update runs there and the
// state outputs return the stored values: no TransData touches the weight. With
// variable-formats=false the weight is converted for the convs once per step (one TransData, both
// convs read it) and dW stays ND (its reader, the ND update, would convert it back).

// CHECK-LABEL: func.func @backward_conv
// CHECK-SAME:    tensor<8x4x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>> {ge.name = "w", ge.state = "w"}, tensor<8x4x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>> {ge.name = "w.momentum", ge.state = "w.momentum"})
// CHECK-NEXT:    %w = ge.variable "w" : tensor<8x4x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>
// CHECK-NEXT:    %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"}
// CHECK-NEXT:    %c = ge.conv %0, %w {{.*}} : (tensor<2x4x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<8x4x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>) -> tensor<2x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %1 = ge.trans_data %dy {src_format = "NCHW", dst_format = "NC1HWC0"}
// CHECK-NEXT:    %g = ge.relu_grad %1, %c : {{.*}} -> tensor<2x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %dx = ge.conv_backprop_input %g, %w {{.*}} : (tensor<2x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<8x4x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>) -> tensor<2x4x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %dw = ge.conv_backprop_filter %0, %g {{.*}} : (tensor<2x4x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<2x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<8x4x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>
// CHECK-NEXT:    %acc = ge.variable "w.momentum" : tensor<8x4x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>
// CHECK-NEXT:    %nw, %nacc = ge.apply_momentum %w, %acc, %dw {{.*}} -> (tensor<8x4x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>, tensor<8x4x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>)
// CHECK-NEXT:    %2 = ge.trans_data %dx {src_format = "NC1HWC0", dst_format = "NCHW"}
// CHECK-NEXT:    func.return %2, %nw, %nacc
// REMARK: applied variable-format on [/update]: state 'w', 'w.momentum' stored in FRACTAL_Z across steps
// REMARK: applied conv-backprop-input-nc1hwc0 on [/conv/grad_x]: ge.conv_backprop_input '/conv/grad_x': dy, dx in NC1HWC0
// REMARK: applied conv-backprop-input-weight-fractal-z on [/conv/grad_x]: ge.conv_backprop_input '/conv/grad_x': W in FRACTAL_Z
// REMARK: applied conv-backprop-filter-nc1hwc0 on [/conv/grad_w]: ge.conv_backprop_filter '/conv/grad_w': x, dy in NC1HWC0
// REMARK: applied conv-backprop-filter-dw-fractal-z on [/conv/grad_w]: ge.conv_backprop_filter '/conv/grad_w': dW in FRACTAL_Z
// NOVAR-LABEL: func.func @backward_conv
// NOVAR-SAME:    tensor<8x4x3x3xf32> {ge.name = "w", ge.state = "w"}, tensor<8x4x3x3xf32> {ge.name = "w.momentum", ge.state = "w.momentum"})
// NOVAR-NEXT:    %w = ge.variable "w" : tensor<8x4x3x3xf32>
// NOVAR:         %[[WZ:.*]] = ge.trans_data %w {src_format = "ND", dst_format = "FRACTAL_Z"}
// NOVAR-NEXT:    %c = ge.conv %{{.*}}, %[[WZ]]
// NOVAR:         %dx = ge.conv_backprop_input %g, %[[WZ]]
// NOVAR-NEXT:    %dw = ge.conv_backprop_filter {{.*}} -> tensor<8x4x3x3xf32>
// NOVAR-NOT:     ge.trans_data
// NOVAR:         ge.apply_momentum %w, %acc, %dw {{.*}} -> (tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>)
func.func @backward_conv(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x8x4x4xf32, #ge.fmt<NCHW>>) -> (tensor<2x4x8x8xf32, #ge.fmt<NCHW>> {ge.name = "dx"}, tensor<8x4x3x3xf32> {ge.name = "w", ge.state = "w"}, tensor<8x4x3x3xf32> {ge.name = "w.momentum", ge.state = "w.momentum"}) {
  %w = ge.variable "w" : tensor<8x4x3x3xf32> loc("w")
  %c = ge.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x4x4xf32, #ge.fmt<NCHW>> loc("/conv")
  %g = ge.relu_grad %dy, %c : (tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, tensor<2x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<2x8x4x4xf32, #ge.fmt<NCHW>> loc("/relu/grad")
  %dx = ge.conv_backprop_input %g, %w {input_shape = array<i64: 2, 4, 8, 8>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, tensor<8x4x3x3xf32>) -> tensor<2x4x8x8xf32, #ge.fmt<NCHW>> loc("/conv/grad_x")
  %dw = ge.conv_backprop_filter %x, %g {filter_shape = array<i64: 8, 4, 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>, tensor<2x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<8x4x3x3xf32> loc("/conv/grad_w")
  %acc = ge.variable "w.momentum" : tensor<8x4x3x3xf32> loc("w.momentum")
  %nw, %nacc = ge.apply_momentum %w, %acc, %dw {lr = 0.1 : f32} : (tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>) -> (tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>) loc("/update")
  func.return %dx, %nw, %nacc : tensor<2x4x8x8xf32, #ge.fmt<NCHW>>, tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>
}

// -----

// The pool gradients and BatchNorm's gradient compute in NC1HWC0 (dscale and dbias stay ND
// channel vectors); the add between them follows.

// CHECK-LABEL: func.func @pool_and_norm_grads
// CHECK:         %m = ge.max_pool_grad %0, %1 {{.*}} : (tensor<2x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<2x8x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<2x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %a = ge.avg_pool_grad %1 {{.*}} : (tensor<2x8x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<2x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %s = ge.add %m, %a
// CHECK-NEXT:    %dx, %ds, %db = ge.batch_norm_grad %s, %0, %scale, %scale, %scale {{.*}} -> (tensor<2x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT:    %2 = ge.trans_data %dx {src_format = "NC1HWC0", dst_format = "NCHW"}
// REMARK: applied max-pool-grad-nc1hwc0 on [/pool/grad]: ge.max_pool_grad '/pool/grad': x, dy, dx in NC1HWC0
// REMARK: applied avg-pool-grad-nc1hwc0 on [/avg/grad]: ge.avg_pool_grad '/avg/grad': dy, dx in NC1HWC0
// REMARK: applied batch-norm-grad-nc1hwc0 on [/bn/grad]: ge.batch_norm_grad '/bn/grad': dy, x, dx in NC1HWC0
func.func @pool_and_norm_grads(%x: tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, %dy: tensor<2x8x2x2xf32, #ge.fmt<NCHW>>, %scale: tensor<8xf32>) -> (tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, tensor<8xf32>, tensor<8xf32>) {
  %m = ge.max_pool_grad %x, %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, tensor<2x8x2x2xf32, #ge.fmt<NCHW>>) -> tensor<2x8x4x4xf32, #ge.fmt<NCHW>> loc("/pool/grad")
  %a = ge.avg_pool_grad %dy {input_shape = array<i64: 2, 8, 4, 4>, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x8x2x2xf32, #ge.fmt<NCHW>>) -> tensor<2x8x4x4xf32, #ge.fmt<NCHW>> loc("/avg/grad")
  %s = ge.add %m, %a : (tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, tensor<2x8x4x4xf32, #ge.fmt<NCHW>>) -> tensor<2x8x4x4xf32, #ge.fmt<NCHW>> loc("/add")
  %dx, %ds, %db = ge.batch_norm_grad %s, %x, %scale, %scale, %scale {training_mode = 1 : i64} : (tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, tensor<8xf32>, tensor<8xf32>) loc("/bn/grad")
  func.return %dx, %ds, %db : tensor<2x8x4x4xf32, #ge.fmt<NCHW>>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Kept: a grouped conv's backward weights (FRACTAL_Z with group packing is not modeled) and its
// variable; a conv reading the variable through a cast (mixed precision: the f16 copy has another
// C0), whose dW nobody reads in FRACTAL_Z.

// CHECK-LABEL: func.func @backward_weights_kept
// CHECK:         ge.conv_backprop_input {{.*}} : (tensor<1x4x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4x2x3x3xf32>)
// CHECK:         ge.conv_backprop_filter {{.*}} -> tensor<4x2x3x3xf32>
// CHECK:         ge.conv_backprop_filter {{.*}} -> tensor<4x4x3x3xf16>
// REMARK: rejected variable-format on [/update_g]: state 'g' stays in its logical layout: its convs are grouped
// REMARK: rejected variable-format on [/update_h]: state 'h' stays in its logical layout: no conv reads it directly as W (a conv reading a cast of it
// REMARK: rejected conv-backprop-input-weight-fractal-z on [/g/grad_x]: ge.conv_backprop_input '/g/grad_x': W not in FRACTAL_Z: group = 2
// REMARK: rejected conv-backprop-filter-dw-fractal-z on [/g/grad_w]: ge.conv_backprop_filter '/g/grad_w': dW not in FRACTAL_Z: group = 2
// REMARK: rejected conv-backprop-filter-dw-fractal-z on [/h/grad_w]: ge.conv_backprop_filter '/h/grad_w': dW not in FRACTAL_Z: result 'dW' is read by ge.cast
func.func @backward_weights_kept(%x: tensor<1x4x6x6xf32>, %dy: tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, %xh: tensor<1x4x6x6xf16>, %dyh: tensor<1x4x4x4xf16, #ge.fmt<NCHW>>) -> (tensor<1x4x6x6xf32, #ge.fmt<NCHW>> {ge.name = "dx"}, tensor<4x2x3x3xf32> {ge.name = "g", ge.state = "g"}, tensor<4x4x3x3xf32> {ge.name = "h", ge.state = "h"}) {
  %g = ge.variable "g" : tensor<4x2x3x3xf32> loc("g")
  %dx = ge.conv_backprop_input %dy, %g {group = 2 : i64, input_shape = array<i64: 1, 4, 6, 6>} : (tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32, #ge.fmt<NCHW>> loc("/g/grad_x")
  %dg = ge.conv_backprop_filter %x, %dy {group = 2 : i64, filter_shape = array<i64: 4, 2, 3, 3>} : (tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32, #ge.fmt<NCHW>>) -> tensor<4x2x3x3xf32> loc("/g/grad_w")
  %ng = ge.apply_gradient_descent %g, %dg : (tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xf32> loc("/update_g")
  %h = ge.variable "h" : tensor<4x4x3x3xf32> loc("h")
  %hh = ge.cast %h {to = 10 : i64} : (tensor<4x4x3x3xf32>) -> tensor<4x4x3x3xf16> loc("/h/cast")
  %yh = ge.conv %xh, %hh : (tensor<1x4x6x6xf16>, tensor<4x4x3x3xf16>) -> tensor<1x4x4x4xf16, #ge.fmt<NCHW>> loc("/h")
  %dhh = ge.conv_backprop_filter %xh, %dyh {filter_shape = array<i64: 4, 4, 3, 3>} : (tensor<1x4x6x6xf16>, tensor<1x4x4x4xf16, #ge.fmt<NCHW>>) -> tensor<4x4x3x3xf16> loc("/h/grad_w")
  %dh = ge.cast %dhh {to = 1 : i64} : (tensor<4x4x3x3xf16>) -> tensor<4x4x3x3xf32> loc("/h/grad_cast")
  %nh = ge.apply_gradient_descent %h, %dh : (tensor<4x4x3x3xf32>, tensor<4x4x3x3xf32>) -> tensor<4x4x3x3xf32> loc("/update_h")
  func.return %dx, %ng, %nh : tensor<1x4x6x6xf32, #ge.fmt<NCHW>>, tensor<4x2x3x3xf32>, tensor<4x4x3x3xf32>
}

// -----

// The integer ops: qlinear-conv-nc1hwc0 and qlinear-conv-weight-fractal-z (int8 and uint8 in
// blocks of C0 = 32), and NC1HWC0 through a per-tensor DequantizeLinear (u8 C0 = 32 to f16 C0 =
// 16: the op re-blocks, as GE's AscendDequant does), the residual add and the QuantizeLinear. A
// per-axis DequantizeLinear stays ND.

// CHECK-LABEL: func.func @int8_conv_block
// CHECK:         %c = ge.qlinear_conv %0, %s, %z, %1, {{.*}} : (tensor<1x32x4x4xui8, #ge.fmt<NCHW, NC1HWC0>>, tensor<f32>, tensor<ui8>, tensor<32x32x1x1xi8, #ge.fmt<NCHW, FRACTAL_Z>>, {{.*}}) -> tensor<1x32x4x4xui8, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %d = ge.dequantize_linear %c, {{.*}} -> tensor<1x32x4x4xf16, #ge.fmt<NCHW, NC1HWC0>> loc("/dq")
// CHECK-NEXT:    %e = ge.dequantize_linear %skip, {{.*}} -> tensor<1x32x4x4xf16, #ge.fmt<NCHW>> loc("/dq_skip")
// CHECK:         %q = ge.quantize_linear %a, {{.*}} -> tensor<1x32x4x4xui8, #ge.fmt<NCHW, NC1HWC0>> loc("/q")
// CHECK:         %f = ge.dequantize_linear %{{.*}}, %qs {axis = 1 : i64} : {{.*}} -> tensor<1x32x4x4xf32, #ge.fmt<NCHW>> loc("/dq_axis")
// REMARK: applied qlinear-conv-nc1hwc0 on [/conv]: ge.qlinear_conv '/conv': x, y in NC1HWC0
// REMARK: applied qlinear-conv-weight-fractal-z on [/conv]: ge.qlinear_conv '/conv': w in FRACTAL_Z
// REMARK: applied dequantize on [/dq]: ge.dequantize_linear '/dq' carries NC1HWC0 from 'x'
// REMARK: applied quantize on [/q]: ge.quantize_linear '/q' carries NC1HWC0 from 'x'
// The whole-graph choice: both outputs are logical and the skip arrives logical, so the
// conv's result converts once, on the int8 side (a quarter of the f32 bytes).
// WHOLE-LABEL: func.func @int8_conv_block
// WHOLE:         %2 = ge.trans_data %c {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x32x4x4xui8, #ge.fmt<NCHW, NC1HWC0>>)
// WHOLE-NEXT:    %d = ge.dequantize_linear %2, {{.*}} -> tensor<1x32x4x4xf16, #ge.fmt<NCHW>> loc("/dq")
// WHOLE-NOT:     ge.trans_data
// WHOLE:         func.return
// REMARK: rejected dequantize on [/dq_axis]: ge.dequantize_linear '/dq_axis' does not carry NC1HWC0 from 'x': 'x_scale' has 1 dims (a scale per axis)
func.func @int8_conv_block(%x: tensor<1x32x4x4xui8>, %skip: tensor<1x32x4x4xui8, #ge.fmt<NCHW>>) -> (tensor<1x32x4x4xui8, #ge.fmt<NCHW>>, tensor<1x32x4x4xf32, #ge.fmt<NCHW>>) {
  %s = ge.constant dense<0.5> : tensor<f32>
  %z = ge.constant dense<128> : tensor<ui8>
  %w = ge.constant dense<1> : tensor<32x32x1x1xi8>
  %ws = ge.constant dense<0.25> : tensor<f32>
  %wz = ge.constant dense<0> : tensor<i8>
  %c = ge.qlinear_conv %x, %s, %z, %w, %ws, %wz, %s, %z : (tensor<1x32x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<32x32x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xui8, #ge.fmt<NCHW>> loc("/conv")
  %d = ge.dequantize_linear %c, %s, x_zero_point = %z {output_dtype = 10 : i64} : (tensor<1x32x4x4xui8, #ge.fmt<NCHW>>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xf16, #ge.fmt<NCHW>> loc("/dq")
  %e = ge.dequantize_linear %skip, %s, x_zero_point = %z {output_dtype = 10 : i64} : (tensor<1x32x4x4xui8, #ge.fmt<NCHW>>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xf16, #ge.fmt<NCHW>> loc("/dq_skip")
  %a = ge.add %d, %e : (tensor<1x32x4x4xf16, #ge.fmt<NCHW>>, tensor<1x32x4x4xf16, #ge.fmt<NCHW>>) -> tensor<1x32x4x4xf16, #ge.fmt<NCHW>> loc("/add")
  %q = ge.quantize_linear %a, %s, y_zero_point = %z : (tensor<1x32x4x4xf16, #ge.fmt<NCHW>>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xui8, #ge.fmt<NCHW>> loc("/q")
  %qs = ge.constant dense<0.5> : tensor<32xf32>
  %t = ge.relu %a : (tensor<1x32x4x4xf16, #ge.fmt<NCHW>>) -> tensor<1x32x4x4xf16, #ge.fmt<NCHW>> loc("/relu")
  %tq = ge.quantize_linear %t, %s, y_zero_point = %z : (tensor<1x32x4x4xf16, #ge.fmt<NCHW>>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xui8, #ge.fmt<NCHW>> loc("/q2")
  %f = ge.dequantize_linear %tq, %qs {axis = 1 : i64} : (tensor<1x32x4x4xui8, #ge.fmt<NCHW>>, tensor<32xf32>) -> tensor<1x32x4x4xf32, #ge.fmt<NCHW>> loc("/dq_axis")
  func.return %q, %f : tensor<1x32x4x4xui8, #ge.fmt<NCHW>>, tensor<1x32x4x4xf32, #ge.fmt<NCHW>>
}



// -----

// concat-channels: a concat along C of two NC1HWC0 conv results whose channel offsets are
// multiples of C0 (16 of f32's C0 = 8) copies whole C1 blocks and stays NC1HWC0 into the relu and
// the next conv (no TransData). A concat whose first operand has 4 channels would put the second
// operand's channels inside a C0 block: rejected, its operands converted back. A concat with an
// operand stored ND (a graph input) keeps ND: converting it to join would add a TransData.

// CHECK-LABEL: func.func @concat_channels
// CHECK:         %c = ge.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>> loc("/concat_unaligned")
// CHECK-NEXT:    %d = ge.concat %a, %b {axis = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x32x4x4xf32, #ge.fmt<NCHW, NC1HWC0>> loc("/concat")
// CHECK-NEXT:    %r = ge.relu %d : {{.*}} -> tensor<1x32x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NOT:     ge.trans_data %r
// REMARK: rejected concat-channels on [/concat_unaligned]: ge.concat '/concat_unaligned' does not carry NC1HWC0 from 'inputs': operand 0 has 4 channels, not a multiple of C0 = 8 (the next offset splits a block)
// REMARK: applied concat-channels on [/concat]: ge.concat '/concat' carries NC1HWC0 from 'inputs'
// REMARK: rejected concat-channels on [/concat_nd]: ge.concat '/concat_nd' does not carry NC1HWC0 from 'inputs': operand 'inputs' is stored in ND (converting it would add a TransData)
func.func @concat_channels(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>, %v: tensor<4x8x1x1xf32>, %u: tensor<4x32x1x1xf32>, %y: tensor<1x16x4x4xf32>) -> (tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x20x4x4xf32, #ge.fmt<NCHW>>, tensor<1x32x4x4xf32, #ge.fmt<NCHW>>) {
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>> loc("/conv_a")
  %b = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>> loc("/conv_b")
  %n = ge.conv %x, %v : (tensor<1x8x4x4xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>> loc("/conv_narrow")
  %c = ge.concat %n, %a {axis = 1 : i64} : (tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>> loc("/concat_unaligned")
  %d = ge.concat %a, %b {axis = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x32x4x4xf32, #ge.fmt<NCHW>> loc("/concat")
  %r = ge.relu %d : (tensor<1x32x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x32x4x4xf32, #ge.fmt<NCHW>> loc("/relu")
  %e = ge.conv %r, %u : (tensor<1x32x4x4xf32, #ge.fmt<NCHW>>, tensor<4x32x1x1xf32>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>> loc("/conv_next")
  %f = ge.concat %a, %y {axis = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf32>) -> tensor<1x32x4x4xf32, #ge.fmt<NCHW>> loc("/concat_nd")
  func.return %e, %c, %f : tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x20x4x4xf32, #ge.fmt<NCHW>>, tensor<1x32x4x4xf32, #ge.fmt<NCHW>>
}

// -----

// reduce-spatial: a mean over H and W with the dims kept (squeeze-excite) carries NC1HWC0
// from the conv into the next conv; a mean over W alone is no [N, C, 1, 1] and stays NCHW.

// CHECK-LABEL: func.func @spatial_mean
// CHECK:         %m = ge.reduce_mean %a, axes = %hw {keepdims = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<2xi64>) -> tensor<1x16x1x1xf32, #ge.fmt<NCHW, NC1HWC0>> loc("/squeeze")
// CHECK-NEXT:    %e = ge.conv %m, %u : (tensor<1x16x1x1xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK:         %r = ge.reduce_mean %{{.*}}, axes = %h {keepdims = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1xi64>) -> tensor<1x16x4x1xf32, #ge.fmt<NCHW>> loc("/row_mean")
// REMARK: applied reduce-spatial on [/squeeze]: ge.reduce_mean '/squeeze' carries NC1HWC0 from 'data'
func.func @spatial_mean(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>, %u: tensor<16x16x1x1xf32>) -> (tensor<1x16x1x1xf32, #ge.fmt<NCHW>>, tensor<1x16x4x1xf32, #ge.fmt<NCHW>>) {
  %hw = ge.constant dense<[2, 3]> : tensor<2xi64>
  %h = ge.constant dense<[3]> : tensor<1xi64>
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>> loc("/conv")
  %m = ge.reduce_mean %a, axes = %hw {keepdims = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<2xi64>) -> tensor<1x16x1x1xf32, #ge.fmt<NCHW>> loc("/squeeze")
  %e = ge.conv %m, %u : (tensor<1x16x1x1xf32, #ge.fmt<NCHW>>, tensor<16x16x1x1xf32>) -> tensor<1x16x1x1xf32, #ge.fmt<NCHW>> loc("/excite")
  %r = ge.reduce_mean %a, axes = %h {keepdims = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1xi64>) -> tensor<1x16x4x1xf32, #ge.fmt<NCHW>> loc("/row_mean")
  func.return %e, %r : tensor<1x16x1x1xf32, #ge.fmt<NCHW>>, tensor<1x16x4x1xf32, #ge.fmt<NCHW>>
}

// -----

// reduce-nz: a mean over the rows (axis -2, a token mixer's pooling) carries FRACTAL_NZ from
// the matmul into the next one, dims kept or not, as a sum over the batch does; a mean over the
// last axis cuts across the C0 lanes: its operand converted back.

// CHECK-LABEL: func.func @row_mean
// CHECK:         %m = ge.reduce_mean %a, axes = %rows {keepdims = 0 : i64} : (tensor<32x16x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<1xi64>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/pool")
// CHECK:         %h = ge.matmul %m, %{{.*}} : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
// CHECK:         %k = ge.reduce_sum %a, axes = %rows {keepdims = 1 : i64} : (tensor<32x16x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<1xi64>) -> tensor<32x1x64xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/pool_kept")
// CHECK:         %b = ge.reduce_sum %a, axes = %batch {keepdims = 0 : i64} : (tensor<32x16x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<1xi64>) -> tensor<16x64xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/batch_sum")
// CHECK:         %c = ge.reduce_mean %{{.*}}, axes = %cols {keepdims = 1 : i64} : (tensor<32x16x64xf32>, tensor<1xi64>) -> tensor<32x16x1xf32> loc("/col_mean")
// REMARK: applied reduce-nz on [/pool]: ge.reduce_mean '/pool' carries FRACTAL_NZ from 'data'
// REMARK: applied reduce-nz on [/batch_sum]: ge.reduce_sum '/batch_sum' carries FRACTAL_NZ from 'data'
// REMARK: rejected reduce-nz on [/col_mean]: ge.reduce_mean '/col_mean' does not carry FRACTAL_NZ from 'data': it reduces the last axis 2 (FRACTAL_NZ keeps it in C0 lanes)
// REMARK: rejected reduce-nz on [/all]: ge.reduce_sum '/all' does not carry FRACTAL_NZ from 'data': its axes are empty (every axis, or none)
func.func @row_mean(%x: tensor<32x16x32xf32>, %w: tensor<32x64xf32>, %u: tensor<64x48xf32>) -> (tensor<32x48xf32>, tensor<32x1x64xf32>, tensor<16x64xf32>, tensor<32x16x1xf32>, tensor<1x1x1xf32>) {
  %rows = ge.constant dense<[1]> : tensor<1xi64>
  %batch = ge.constant dense<[0]> : tensor<1xi64>
  %cols = ge.constant dense<[-1]> : tensor<1xi64>
  %a = ge.matmul %x, %w : (tensor<32x16x32xf32>, tensor<32x64xf32>) -> tensor<32x16x64xf32> loc("/mixer")
  %m = ge.reduce_mean %a, axes = %rows {keepdims = 0 : i64} : (tensor<32x16x64xf32>, tensor<1xi64>) -> tensor<32x64xf32> loc("/pool")
  %h = ge.matmul %m, %u : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32> loc("/head")
  %k = ge.reduce_sum %a, axes = %rows {keepdims = 1 : i64} : (tensor<32x16x64xf32>, tensor<1xi64>) -> tensor<32x1x64xf32> loc("/pool_kept")
  %b = ge.reduce_sum %a, axes = %batch {keepdims = 0 : i64} : (tensor<32x16x64xf32>, tensor<1xi64>) -> tensor<16x64xf32> loc("/batch_sum")
  %c = ge.reduce_mean %a, axes = %cols {keepdims = 1 : i64} : (tensor<32x16x64xf32>, tensor<1xi64>) -> tensor<32x16x1xf32> loc("/col_mean")
  %none = ge.constant dense<> : tensor<0xi64>
  %all = ge.reduce_sum %a, axes = %none {keepdims = 1 : i64} : (tensor<32x16x64xf32>, tensor<0xi64>) -> tensor<1x1x1xf32> loc("/all")
  func.return %h, %k, %b, %c, %all : tensor<32x48xf32>, tensor<32x1x64xf32>, tensor<16x64xf32>, tensor<32x16x1xf32>, tensor<1x1x1xf32>
}

// -----

// split-channels and slice-channels: a split or slice along C keeps NC1HWC0 in whole C0 blocks
// (f32: C0 = 8); a split at channel 4 and a slice of channels 4..12 would cut a block: rejected,
// their operand converted back. A slice of rows (H) keeps the format.

// CHECK-LABEL: func.func @channel_split_slice
// CHECK:         %s0, %s1 = ge.split %a {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> (tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) loc("/split")
// CHECK:         ge.split %{{.*}}, split = %sizes {axis = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
// CHECK:         %aligned = ge.slice %a, %c8, %c16, axes = %one : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, {{.*}}) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK:         %unaligned = ge.slice %{{.*}}, %c4, %c12, axes = %one : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, {{.*}}) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
// CHECK:         %rows = ge.slice %a, %zero, %two, axes = %two : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, {{.*}}) -> tensor<1x16x2x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// REMARK: applied split-channels on [/split]: ge.split '/split' carries NC1HWC0 from 'input'
// REMARK: rejected split-channels on [/split_unaligned]: ge.split '/split_unaligned' does not carry NC1HWC0 from 'input': result 0 has 4 channels, not a multiple of C0 = 8 (the next offset splits a block)
// REMARK: applied slice-channels on [/slice]: ge.slice '/slice' carries NC1HWC0 from 'data'
// REMARK: rejected slice-channels on [/slice_unaligned]: ge.slice '/slice_unaligned' does not carry NC1HWC0 from 'data': channels [4:12:1] are not whole C0 = 8 blocks
// REMARK: applied slice-channels on [/slice_rows]: ge.slice '/slice_rows' carries NC1HWC0 from 'data'
// Each inserted TransData says why the op did not take the format:
// REMARK: applied insert on [/split_unaligned]: ge.split '/split_unaligned' needs NCHW, its operand is stored in NC1HWC0 (ge.split '/split_unaligned' does not carry NC1HWC0 from 'input': result 0 has 4 channels, not a multiple of C0 = 8 (the next offset splits a block))
// REMARK: applied insert on [func.return]: func.return needs NCHW, its operand is stored in NC1HWC0 (the graph's outputs keep their declared types)
func.func @channel_split_slice(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>) -> (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x12x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x2x4xf32, #ge.fmt<NCHW>>) {
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>> loc("/conv")
  %s0, %s1 = ge.split %a {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>) loc("/split")
  %sizes = ge.constant dense<[4, 12]> : tensor<2xi64>
  %u0, %u1 = ge.split %a, split = %sizes {axis = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<2xi64>) -> (tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x12x4x4xf32, #ge.fmt<NCHW>>) loc("/split_unaligned")
  %c8 = ge.constant dense<8> : tensor<1xi64>
  %c16 = ge.constant dense<16> : tensor<1xi64>
  %c4 = ge.constant dense<4> : tensor<1xi64>
  %c12 = ge.constant dense<12> : tensor<1xi64>
  %one = ge.constant dense<1> : tensor<1xi64>
  %two = ge.constant dense<2> : tensor<1xi64>
  %zero = ge.constant dense<0> : tensor<1xi64>
  %aligned = ge.slice %a, %c8, %c16, axes = %one : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> loc("/slice")
  %unaligned = ge.slice %a, %c4, %c12, axes = %one : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>> loc("/slice_unaligned")
  %rows = ge.slice %a, %zero, %two, axes = %two : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x16x2x4xf32, #ge.fmt<NCHW>> loc("/slice_rows")
  func.return %s0, %s1, %u0, %u1, %aligned, %unaligned, %rows : tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x12x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x2x4xf32, #ge.fmt<NCHW>>
}

// -----

// instance-norm-nc1hwc0, resize-spatial and pad-spatial: per-channel ops carry NC1HWC0 from the
// conv to the next conv (the norm's scale and bias stay ND channel vectors). A pad along C and a
// tf_crop_and_resize (its roi may cut along C) do not: they convert. A pad of C by constant widths
// changes C (no full-shape operand); pads along C that keep it (a shift) are refused by pad-spatial.

// CHECK-LABEL: func.func @per_channel
// CHECK:         %n = ge.instance_norm %a, %g, %g : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK:         %r = ge.resize %n, scales = %s {mode = "linear"} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4xf32>) -> tensor<1x16x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK:         %p = ge.pad %r, %hw : (tensor<1x16x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<8xi64>) -> tensor<1x16x10x10xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK-NEXT:    %e = ge.conv %p, %u : (tensor<1x16x10x10xf32, #ge.fmt<NCHW, NC1HWC0>>
// CHECK:         %q = ge.pad %{{.*}}, %c : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<8xi64>) -> tensor<1x24x4x4xf32, #ge.fmt<NCHW>>
// CHECK:         %t = ge.resize %{{.*}}, roi = %roi, scales = %s {coordinate_transformation_mode = "tf_crop_and_resize", mode = "linear"} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
// REMARK: applied instance-norm-nc1hwc0 on [/norm]: ge.instance_norm '/norm' carries NC1HWC0 from 'input'
// REMARK: applied resize-spatial on [/up]: ge.resize '/up' carries NC1HWC0 from 'X'
// REMARK: applied pad-spatial on [/pad_hw]: ge.pad '/pad_hw' carries NC1HWC0 from 'data'
// REMARK: rejected resize-spatial on [/crop]: ge.resize '/crop' does not carry NC1HWC0 from 'X': coordinate_transformation_mode = tf_crop_and_resize (its roi may cut along N or C)
// REMARK: rejected pad-spatial on [/shift_c]: ge.pad '/shift_c' does not carry NC1HWC0 from 'data': it pads N or C ([0, 0], [8, -8]): not whole C0 blocks
// REMARK: applied insert on [/pad_c]: ge.pad '/pad_c' needs NCHW, its operand is stored in NC1HWC0 (its operands' shapes are not those pad-spatial carries a format through)
func.func @per_channel(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>, %u: tensor<16x16x1x1xf32>, %g: tensor<16xf32>) -> (tensor<1x16x10x10xf32, #ge.fmt<NCHW>>, tensor<1x24x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x8x8xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) {
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>> loc("/conv")
  %n = ge.instance_norm %a, %g, %g : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>> loc("/norm")
  %s = ge.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %r = ge.resize %n, scales = %s {mode = "linear"} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<4xf32>) -> tensor<1x16x8x8xf32, #ge.fmt<NCHW>> loc("/up")
  %hw = ge.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %p = ge.pad %r, %hw : (tensor<1x16x8x8xf32, #ge.fmt<NCHW>>, tensor<8xi64>) -> tensor<1x16x10x10xf32, #ge.fmt<NCHW>> loc("/pad_hw")
  %e = ge.conv %p, %u : (tensor<1x16x10x10xf32, #ge.fmt<NCHW>>, tensor<16x16x1x1xf32>) -> tensor<1x16x10x10xf32, #ge.fmt<NCHW>> loc("/conv_next")
  %c = ge.constant dense<[0, 0, 0, 0, 0, 8, 0, 0]> : tensor<8xi64>
  %q = ge.pad %a, %c : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<8xi64>) -> tensor<1x24x4x4xf32, #ge.fmt<NCHW>> loc("/pad_c")
  %roi = ge.constant dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>
  %t = ge.resize %a, roi = %roi, scales = %s {coordinate_transformation_mode = "tf_crop_and_resize", mode = "linear"} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x16x8x8xf32, #ge.fmt<NCHW>> loc("/crop")
  %k = ge.constant dense<[0, 8, 0, 0, 0, -8, 0, 0]> : tensor<8xi64>
  %z = ge.pad %a, %k : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<8xi64>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>> loc("/shift_c")
  func.return %e, %q, %t, %z : tensor<1x16x10x10xf32, #ge.fmt<NCHW>>, tensor<1x24x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x8x8xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
}
