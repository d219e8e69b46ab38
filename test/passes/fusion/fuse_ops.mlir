// RUN: ge-opt %s -p fuse-ops --split-input-file --strip-debuginfo | filecheck %s
// RUN: ge-opt %s -p fuse-ops --split-input-file --remarks -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK

// cube_epilogue: conv + bias add + relu become one Cube kernel.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK:      fused.group "cube+elementwise" "cube_epilogue" (%x, %w, %b)
// CHECK-NEXT: ^{{.*}}(%{{.*}}: tensor<1x4x8x8xf32>, %{{.*}}: tensor<8x4x3x3xf32>, %{{.*}}: tensor<1x8x1x1xf32>):
// CHECK-NEXT:   ge.conv
// CHECK-NEXT:   ge.add
// CHECK-NEXT:   ge.relu
// CHECK-NEXT:   fused.yield
// REMARK: remark: fuse-ops: applied cube_epilogue on [/conv, /bias, /relu]: fused 3 ops into one kernel
func.func @conv_bias_relu(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32> {
  %0 = ge.conv %x, %w : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32> loc("/conv")
  %1 = ge.add %0, %b : (tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32> loc("/bias")
  %2 = ge.relu %1 : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> loc("/relu")
  func.return %2 : tensor<1x8x6x6xf32>
}

// -----

// float-dtype: an integer matmul's epilogue is not fused.
// CHECK-LABEL: func.func @int_matmul
// CHECK-NOT:  fused.group
// REMARK: remark: fuse-ops: rejected cube_epilogue on [/mm, /add]: constraint float-dtype: ge.matmul yields i32
func.func @int_matmul(%a: tensor<4x8xi32>, %b: tensor<8x4xi32>, %c: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %0 = ge.matmul %a, %b : (tensor<4x8xi32>, tensor<8x4xi32>) -> tensor<4x4xi32> loc("/mm")
  %1 = ge.add %0, %c : (tensor<4x4xi32>, tensor<4x4xi32>) -> tensor<4x4xi32> loc("/add")
  func.return %1 : tensor<4x4xi32>
}

// -----

// keeps-shape: an add that broadcasts the matmul result to a bigger tensor is not an epilogue.
// CHECK-LABEL: func.func @broadcasting_add
// CHECK-NOT:  fused.group
func.func @broadcasting_add(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<3x4x4xf32>) -> tensor<3x4x4xf32> {
  %0 = ge.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("/mm")
  %1 = ge.add %0, %c : (tensor<4x4xf32>, tensor<3x4x4xf32>) -> tensor<3x4x4xf32> loc("/add")
  func.return %1 : tensor<3x4x4xf32>
}

// -----

// one-storage-format: a chain whose members use different storage formats stays apart.
// CHECK-LABEL: func.func @mixed_formats
// CHECK-NOT:  fused.group
// REMARK: rejected elementwise_chain on [/relu, /sig]: constraint one-storage-format: members use storage formats NC1HWC0, NCHW
func.func @mixed_formats(%x: tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>> {
  %0 = ge.relu %x : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>> loc("/relu")
  %1 = ge.sigmoid %0 : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>> loc("/sig")
  func.return %1 : tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
}

// -----

// Cycle: relu's result feeds a transpose whose result the add needs, so {relu, add} would depend
// on itself; the chain falls back to its prefix, and relu alone is not a group.
// CHECK-LABEL: func.func @cycle
// CHECK-NOT:  fused.group
// REMARK: rejected elementwise_chain on [/relu, /add]: would create a cycle
func.func @cycle(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = ge.relu %x : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("/relu")
  %1 = ge.transpose %0 : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("/t")
  %2 = ge.add %0, %1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("/add")
  func.return %2 : tensor<8x8xf32>
}

// -----

// Critical path: the add also waits for a two-matmul branch that runs in parallel with /m1.
// Fusing /m1 with the add would start /m1 only after that branch: rejected. /m3 (the end of
// the long branch) takes the add instead.
// CHECK-LABEL: func.func @parallel_branch
// CHECK:      %[[M1:.*]] = ge.matmul %a, %b
// CHECK:      fused.group "cube+elementwise" "cube_epilogue" (%{{.*}}, %c, %[[M1]])
// REMARK: rejected cube_epilogue on [/m1, /add]: would serialize a parallel branch on the critical path
// REMARK: applied cube_epilogue on [/m3, /add]
func.func @parallel_branch(%a: tensor<512x4096xf32>, %b: tensor<4096x512xf32>, %c: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = ge.matmul %a, %b : (tensor<512x4096xf32>, tensor<4096x512xf32>) -> tensor<512x512xf32> loc("/m1")
  %1 = ge.matmul %a, %b : (tensor<512x4096xf32>, tensor<4096x512xf32>) -> tensor<512x512xf32> loc("/m2")
  %2 = ge.matmul %1, %c : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32> loc("/m3")
  %3 = ge.add %0, %2 : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32> loc("/add")
  func.return %3 : tensor<512x512xf32>
}

// -----

// Working set: a softmax row of 65536 floats does not fit the UB with its neighbour.
// CHECK-LABEL: func.func @long_row
// CHECK-NOT:  fused.group
// REMARK: rejected reduce_elementwise on [/softmax, /mul]: working set {{[0-9]+}} B exceeds the UB (196608 B)
func.func @long_row(%x: tensor<2x65536xf32>, %s: tensor<2x65536xf32>) -> tensor<2x65536xf32> {
  %0 = ge.softmax %x : (tensor<2x65536xf32>) -> tensor<2x65536xf32> loc("/softmax")
  %1 = ge.mul %0, %s : (tensor<2x65536xf32>, tensor<2x65536xf32>) -> tensor<2x65536xf32> loc("/mul")
  func.return %1 : tensor<2x65536xf32>
}

// -----

// ... while a short row fuses.
// CHECK-LABEL: func.func @short_row
// CHECK: fused.group "reduce+elementwise" "reduce_elementwise"
func.func @short_row(%x: tensor<2x128xf32>, %s: tensor<2x128xf32>) -> tensor<2x128xf32> {
  %0 = ge.softmax %x : (tensor<2x128xf32>) -> tensor<2x128xf32> loc("/softmax")
  %1 = ge.mul %0, %s : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32> loc("/mul")
  func.return %1 : tensor<2x128xf32>
}

// -----

// Several users: the intermediate relu result also leaves the group as a second output.
// CHECK-LABEL: func.func @extra_output
// CHECK: %{{.*}}, %{{.*}} = fused.group "cube+elementwise" "cube_epilogue"
// CHECK: fused.yield %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>
func.func @extra_output(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = ge.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("/mm")
  %1 = ge.add %0, %c : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("/add")
  %2 = ge.relu %1 : (tensor<4x4xf32>) -> tensor<4x4xf32> loc("/relu")
  func.return %1, %2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// An outside user of an intermediate result that sat between the members moves after the group
// (the block stays in dominance order).
// CHECK-LABEL: func.func @reorder
// CHECK:      %[[G:.*]], %[[R:.*]] = fused.group "cube+elementwise" "cube_epilogue"
// CHECK:      ge.transpose %[[G]]
// CHECK:      func.return
func.func @reorder(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = ge.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32> loc("/mm")
  %1 = ge.add %0, %c : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32> loc("/add")
  %2 = ge.transpose %1 : (tensor<4x4xf32>) -> tensor<4x4xf32> loc("/between")
  %3 = ge.relu %1 : (tensor<4x4xf32>) -> tensor<4x4xf32> loc("/relu")
  func.return %2, %3 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// attention_layout: the head split (reshape, transpose) of q, k and v and the head merge after
// the attention run inside the attention kernel (its addressing reads the layouts).
// CHECK-LABEL: func.func @attention_heads
// CHECK:      fused.group "attention" "attention_layout" (%q, %split, %k, %v, %merged)
// CHECK-COUNT-3: ge.reshape
// CHECK:      ge.attention
// CHECK:      ge.transpose
// CHECK:      ge.reshape
// CHECK:      fused.yield
// REMARK: applied attention_layout on [/q_split, /q_heads, /k_split, /k_heads, /v_split, /v_heads, /attn, /merge, /merge_shape]: fused 9 ops into one kernel
func.func @attention_heads(%q: tensor<1x8x32xf32>, %k: tensor<1x8x32xf32>, %v: tensor<1x8x32xf32>) -> tensor<1x8x32xf32> {
  %split = ge.constant dense<[1, 8, 4, 8]> : tensor<4xi64>
  %merged = ge.constant dense<[1, 8, 32]> : tensor<3xi64>
  %0 = ge.reshape %q, %split : (tensor<1x8x32xf32>, tensor<4xi64>) -> tensor<1x8x4x8xf32> loc("/q_split")
  %1 = ge.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x4x8xf32>) -> tensor<1x4x8x8xf32> loc("/q_heads")
  %2 = ge.reshape %k, %split : (tensor<1x8x32xf32>, tensor<4xi64>) -> tensor<1x8x4x8xf32> loc("/k_split")
  %3 = ge.transpose %2 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x4x8xf32>) -> tensor<1x4x8x8xf32> loc("/k_heads")
  %4 = ge.reshape %v, %split : (tensor<1x8x32xf32>, tensor<4xi64>) -> tensor<1x8x4x8xf32> loc("/v_split")
  %5 = ge.transpose %4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x4x8xf32>) -> tensor<1x4x8x8xf32> loc("/v_heads")
  %6 = ge.attention %1, %3, %5 {k_transposed = 1 : i64, scale = 0.35 : f32} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("/attn")
  %7 = ge.transpose %6 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x4x8xf32> loc("/merge")
  %8 = ge.reshape %7, %merged : (tensor<1x8x4x8xf32>, tensor<3xi64>) -> tensor<1x8x32xf32> loc("/merge_shape")
  func.return %8 : tensor<1x8x32xf32>
}

// -----

// A head-split transpose that another op also reads stays outside (its result must exist in
// memory anyway); the rest of the layout work still fuses.
// CHECK-LABEL: func.func @shared_split
// CHECK:      %[[T:.*]] = ge.transpose %q
// CHECK:      fused.group "attention" "attention_layout" (%k, %[[T]], %v)
// CHECK:      ge.relu %[[T]]
func.func @shared_split(%q: tensor<1x4x8x8xf32>, %k: tensor<1x4x8x8xf32>, %v: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %0 = ge.transpose %q {perm = array<i64: 0, 1, 2, 3>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("/q_heads")
  %1 = ge.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("/k_heads")
  %2 = ge.attention %0, %1, %v {k_transposed = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("/attn")
  %3 = ge.relu %0 : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("/other")
  func.return %2, %3 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// quantized_cube_epilogue: a QuantizeLinear with what it requantizes: the residual add of two
// dequantized tensors, the relu, and the integer conv whose only reader is one of the
// DequantizeLinear ops (GE's conv with a dequant / add / quant UB epilogue).
// CHECK-LABEL: func.func @quantized_residual
// CHECK:      fused.group "cube+elementwise" "quantized_cube_epilogue" (%x, %w, %skip)
// CHECK:        ge.qlinear_conv
// CHECK-NEXT:   ge.dequantize_linear
// CHECK-NEXT:   ge.dequantize_linear
// CHECK-NEXT:   ge.add
// CHECK-NEXT:   ge.relu
// CHECK-NEXT:   ge.quantize_linear
// CHECK-NEXT:   fused.yield
// REMARK: remark: fuse-ops: applied quantized_cube_epilogue on [/conv, /dq, /dq_skip, /add, /relu, /q]: fused 6 ops into one kernel
func.func @quantized_residual(%x: tensor<1x32x4x4xui8>, %skip: tensor<1x32x4x4xui8>) -> tensor<1x32x4x4xui8> {
  %s = ge.constant dense<0.5> : tensor<f32>
  %z = ge.constant dense<128> : tensor<ui8>
  %w = ge.constant dense<1> : tensor<32x32x1x1xi8>
  %ws = ge.constant dense<0.25> : tensor<f32>
  %wz = ge.constant dense<0> : tensor<i8>
  %c = ge.qlinear_conv %x, %s, %z, %w, %ws, %wz, %s, %z : (tensor<1x32x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<32x32x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xui8> loc("/conv")
  %d = ge.dequantize_linear %c, %s, x_zero_point = %z {output_dtype = 10 : i64} : (tensor<1x32x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xf16> loc("/dq")
  %e = ge.dequantize_linear %skip, %s, x_zero_point = %z {output_dtype = 10 : i64} : (tensor<1x32x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xf16> loc("/dq_skip")
  %a = ge.add %d, %e : (tensor<1x32x4x4xf16>, tensor<1x32x4x4xf16>) -> tensor<1x32x4x4xf16> loc("/add")
  %r = ge.relu %a : (tensor<1x32x4x4xf16>) -> tensor<1x32x4x4xf16> loc("/relu")
  %q = ge.quantize_linear %r, %s, y_zero_point = %z : (tensor<1x32x4x4xf16>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xui8> loc("/q")
  func.return %q : tensor<1x32x4x4xui8>
}


// -----

// quantized_elementwise: the conv's result is also returned, so it stays apart, and the
// dequantize / add / requantize is one Vector kernel (onnxruntime's QLinearAdd).
// CHECK-LABEL: func.func @quantized_add
// CHECK:      ge.qlinear_conv
// CHECK:      fused.group "elementwise" "quantized_elementwise" (%c, %skip)
// CHECK-NEXT: ^{{.*}}
// CHECK:        ge.dequantize_linear
// CHECK-NEXT:   ge.dequantize_linear
// CHECK-NEXT:   ge.add
// CHECK-NEXT:   ge.quantize_linear
// CHECK-NEXT:   fused.yield
// REMARK: remark: fuse-ops: rejected quantized_cube_epilogue on [/dq, /dq_skip, /add, /q]: constraint has-cube: no Cube op among the members
// REMARK: remark: fuse-ops: applied quantized_elementwise on [/dq, /dq_skip, /add, /q]: fused 4 ops into one kernel

func.func @quantized_add(%x: tensor<1x32x4x4xui8>, %skip: tensor<1x32x4x4xui8>) -> (tensor<1x32x4x4xui8>, tensor<1x32x4x4xui8>) {
  %s = ge.constant dense<0.5> : tensor<f32>
  %z = ge.constant dense<128> : tensor<ui8>
  %w = ge.constant dense<1> : tensor<32x32x1x1xi8>
  %ws = ge.constant dense<0.25> : tensor<f32>
  %wz = ge.constant dense<0> : tensor<i8>
  %c = ge.qlinear_conv %x, %s, %z, %w, %ws, %wz, %s, %z : (tensor<1x32x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<32x32x1x1xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xui8> loc("/conv")
  %d = ge.dequantize_linear %c, %s, x_zero_point = %z {output_dtype = 10 : i64} : (tensor<1x32x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xf16> loc("/dq")
  %e = ge.dequantize_linear %skip, %s, x_zero_point = %z {output_dtype = 10 : i64} : (tensor<1x32x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xf16> loc("/dq_skip")
  %a = ge.add %d, %e : (tensor<1x32x4x4xf16>, tensor<1x32x4x4xf16>) -> tensor<1x32x4x4xf16> loc("/add")
  %q = ge.quantize_linear %a, %s, y_zero_point = %z : (tensor<1x32x4x4xf16>, tensor<f32>, tensor<ui8>) -> tensor<1x32x4x4xui8> loc("/q")
  func.return %q, %c : tensor<1x32x4x4xui8>, tensor<1x32x4x4xui8>
}

// -----

// A chain of requantizations (quantize_static quantizes every step of a GELU): the last
// QuantizeLinear is visited first (from_last) and takes the earlier ones as producers, so the
// kernel requantizes on chip: one group, not one per QuantizeLinear.
// CHECK-LABEL: func.func @requantized_chain
// CHECK:      fused.group "elementwise" "quantized_elementwise" (%x)
// CHECK:        ge.dequantize_linear
// CHECK-NEXT:   ge.erf
// CHECK-NEXT:   ge.quantize_linear
// CHECK-NEXT:   ge.dequantize_linear
// CHECK-NEXT:   ge.add
// CHECK-NEXT:   ge.quantize_linear
// CHECK-NEXT:   fused.yield
// CHECK-NOT:  fused.group
// REMARK: remark: fuse-ops: applied quantized_elementwise on [/dq, /erf, /q_erf, /dq_erf, /add, /q_add]: fused 6 ops into one kernel
func.func @requantized_chain(%x: tensor<64xui8>) -> tensor<64xui8> {
  %s = ge.constant dense<0.5> : tensor<f32>
  %t = ge.constant dense<0.25> : tensor<f32>
  %z = ge.constant dense<128> : tensor<ui8>
  %one = ge.constant dense<1.0> : tensor<f16>
  %0 = ge.dequantize_linear %x, %s, x_zero_point = %z {output_dtype = 10 : i64} : (tensor<64xui8>, tensor<f32>, tensor<ui8>) -> tensor<64xf16> loc("/dq")
  %1 = ge.erf %0 : (tensor<64xf16>) -> tensor<64xf16> loc("/erf")
  %2 = ge.quantize_linear %1, %t, y_zero_point = %z : (tensor<64xf16>, tensor<f32>, tensor<ui8>) -> tensor<64xui8> loc("/q_erf")
  %3 = ge.dequantize_linear %2, %t, x_zero_point = %z {output_dtype = 10 : i64} : (tensor<64xui8>, tensor<f32>, tensor<ui8>) -> tensor<64xf16> loc("/dq_erf")
  %4 = ge.add %3, %one : (tensor<64xf16>, tensor<f16>) -> tensor<64xf16> loc("/add")
  %5 = ge.quantize_linear %4, %s, y_zero_point = %z : (tensor<64xf16>, tensor<f32>, tensor<ui8>) -> tensor<64xui8> loc("/q_add")
  func.return %5 : tensor<64xui8>
}

// -----

// A DequantizeLinear read by two members (x * erf(x)) is computed once in the kernel: the
// quantized rules let a DequantizeLinear be shared.
// CHECK-LABEL: func.func @shared_dequantize
// CHECK:      fused.group "elementwise" "quantized_elementwise" (%x)
// CHECK-NOT:  fused.group
// REMARK: remark: fuse-ops: applied quantized_elementwise on [/dq, /erf, /mul, /q]: fused 4 ops into one kernel
func.func @shared_dequantize(%x: tensor<64xui8>) -> tensor<64xui8> {
  %s = ge.constant dense<0.5> : tensor<f32>
  %z = ge.constant dense<128> : tensor<ui8>
  %0 = ge.dequantize_linear %x, %s, x_zero_point = %z {output_dtype = 10 : i64} : (tensor<64xui8>, tensor<f32>, tensor<ui8>) -> tensor<64xf16> loc("/dq")
  %1 = ge.erf %0 : (tensor<64xf16>) -> tensor<64xf16> loc("/erf")
  %2 = ge.mul %0, %1 : (tensor<64xf16>, tensor<64xf16>) -> tensor<64xf16> loc("/mul")
  %3 = ge.quantize_linear %2, %s, y_zero_point = %z : (tensor<64xf16>, tensor<f32>, tensor<ui8>) -> tensor<64xui8> loc("/q")
  func.return %3 : tensor<64xui8>
}

// -----

// cube_epilogue: a cast to a float type after the epilogue is the store's type (the Cube writes
// its f32 accumulator as f16 or f32); mixed precision's cast back to f32 at the graph's end.
// CHECK-LABEL: func.func @gemm_cast
// CHECK:      fused.group "cube+elementwise" "cube_epilogue"
// CHECK:        ge.gemm
// CHECK-NEXT:   ge.relu
// CHECK-NEXT:   ge.cast
// CHECK-NEXT:   fused.yield
// REMARK: remark: fuse-ops: applied cube_epilogue on [/fc, /relu, /cast]
func.func @gemm_cast(%a: tensor<2x8xf16>, %b: tensor<8x4xf16>) -> tensor<2x4xf32> {
  %0 = ge.gemm %a, %b : (tensor<2x8xf16>, tensor<8x4xf16>) -> tensor<2x4xf16> loc("/fc")
  %1 = ge.relu %0 : (tensor<2x4xf16>) -> tensor<2x4xf16> loc("/relu")
  %2 = ge.cast %1 {to = 1 : i64} : (tensor<2x4xf16>) -> tensor<2x4xf32> loc("/cast")
  func.return %2 : tensor<2x4xf32>
}

// -----

// cube_epilogue: a cast to an integer type is not the store's type; the epilogue stops before it.
// CHECK-LABEL: func.func @gemm_cast_to_int
// CHECK:      fused.group "cube+elementwise" "cube_epilogue"
// CHECK:        ge.gemm
// CHECK-NEXT:   ge.relu
// CHECK-NEXT:   fused.yield
// CHECK:      ge.cast
func.func @gemm_cast_to_int(%a: tensor<2x8xf16>, %b: tensor<8x4xf16>) -> tensor<2x4xi32> {
  %0 = ge.gemm %a, %b : (tensor<2x8xf16>, tensor<8x4xf16>) -> tensor<2x4xf16> loc("/fc")
  %1 = ge.relu %0 : (tensor<2x4xf16>) -> tensor<2x4xf16> loc("/relu")
  %2 = ge.cast %1 {to = 6 : i64} : (tensor<2x4xf16>) -> tensor<2x4xi32> loc("/cast")
  func.return %2 : tensor<2x4xi32>
}

// -----

// elementwise_chain: a reshape between row-major arrays that feeds the chain is read through (it
// moves no element), so it is no kernel of its own.
// CHECK-LABEL: func.func @reshape_then_add
// CHECK:      fused.group "elementwise" "elementwise_chain"
// CHECK:        ge.reshape
// CHECK-NEXT:   ge.add
// CHECK-NEXT:   fused.yield
// REMARK: remark: fuse-ops: applied elementwise_chain on [/reshape, /add]
func.func @reshape_then_add(%x: tensor<2x3x4xf32>, %y: tensor<6x4xf32>) -> tensor<6x4xf32> {
  %s = ge.constant dense<[6, 4]> : tensor<2xi64>
  %0 = ge.reshape %x, %s : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32> loc("/reshape")
  %1 = ge.add %0, %y : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32> loc("/add")
  func.return %1 : tensor<6x4xf32>
}

// -----

// elementwise_chain: a reshape of a blocked array (FRACTAL_NZ) moves elements; it stays a kernel.
// CHECK-LABEL: func.func @blocked_reshape_then_add
// CHECK-NOT:  fused.group
func.func @blocked_reshape_then_add(%x: tensor<2x32x32xf32, #ge.fmt<ND, FRACTAL_NZ>>, %y: tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>> {
  %s = ge.constant dense<[64, 32]> : tensor<2xi64>
  %0 = ge.reshape %x, %s : (tensor<2x32x32xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<2xi64>) -> tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/reshape")
  %1 = ge.add %0, %y : (tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>> loc("/add")
  func.return %1 : tensor<64x32xf32, #ge.fmt<ND, FRACTAL_NZ>>
}

// -----

// elementwise_chain: a reshape that reads a TransData stays a copy of its own, for the conversion
// to join (fuse-trans-data: the copy converts as it moves).
// CHECK-LABEL: func.func @converted_reshape_then_add
// CHECK-NOT:  fused.group
func.func @converted_reshape_then_add(%x: tensor<1x32x1x1xf32, #ge.fmt<NCHW, NC1HWC0>>, %y: tensor<1x32xf32>) -> tensor<1x32xf32> {
  %t = ge.trans_data %x {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x32x1x1xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x32x1x1xf32, #ge.fmt<NCHW>>
  %0 = ge.flatten %t {axis = 1 : i64} : (tensor<1x32x1x1xf32, #ge.fmt<NCHW>>) -> tensor<1x32xf32> loc("/flatten")
  %1 = ge.add %0, %y : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32> loc("/add")
  func.return %1 : tensor<1x32xf32>
}
