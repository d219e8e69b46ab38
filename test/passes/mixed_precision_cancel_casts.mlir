// RUN: ge-opt %s -p cancel-casts --split-input-file | filecheck %s
// RUN: ge-opt %s -p cancel-casts --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// cancel-casts (passes/cancel_casts.py), which mixed-precision runs after converting: no-op
// casts go, symmetric pairs cancel unless the first cast is a truth test or a float -> int
// truncation (GE's TransOpSymmetryElimination), chains whose middle step is exact compose.

// CHECK-LABEL: func.func @symmetric
// CHECK-NEXT:  func.return %x, %h, %i : tensor<4xf32>, tensor<4xf16>, tensor<4xi16>
// REMARK: remark: cancel-casts: applied symmetric-pair on [/down, /up]: f32 -> f16 -> f32 is the original value
// REMARK: remark: cancel-casts: applied symmetric-pair on [/h_up, /h_down]: f16 -> f32 -> f16 is the original value
// REMARK: remark: cancel-casts: applied symmetric-pair on [/i_f, /i_back]: i16 -> f32 -> i16 is the original value
func.func @symmetric(%x: tensor<4xf32>, %h: tensor<4xf16>, %i: tensor<4xi16>) -> (tensor<4xf32>, tensor<4xf16>, tensor<4xi16>) {
  %0 = ge.cast %x {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/down")
  %1 = ge.cast %0 {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32> loc("/up")
  %2 = ge.cast %h {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32> loc("/h_up")
  %3 = ge.cast %2 {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/h_down")
  %4 = ge.cast %i {to = 1 : i64} : (tensor<4xi16>) -> tensor<4xf32> loc("/i_f")
  %5 = ge.cast %4 {to = 5 : i64} : (tensor<4xf32>) -> tensor<4xi16> loc("/i_back")
  func.return %1, %3, %5 : tensor<4xf32>, tensor<4xf16>, tensor<4xi16>
}

// -----

// Negative: the first cast changes the value's meaning (a truth test, a truncation); a pair
// whose first cast has other users keeps that cast.
// CHECK-LABEL: func.func @meaning
// CHECK-NEXT:  %[[B:.*]] = ge.cast %x {to = 9 : i64} : (tensor<4xf32>) -> tensor<4xi1> loc("/test")
// CHECK-NEXT:  %[[F:.*]] = ge.cast %[[B]] {to = 1 : i64} : (tensor<4xi1>) -> tensor<4xf32> loc("/back")
// CHECK-NEXT:  %[[T:.*]] = ge.cast %x {to = 7 : i64} : (tensor<4xf32>) -> tensor<4xi64> loc("/trunc")
// CHECK-NEXT:  %[[G:.*]] = ge.cast %[[T]] {to = 1 : i64} : (tensor<4xi64>) -> tensor<4xf32> loc("/untrunc")
// CHECK-NEXT:  %[[D:.*]] = ge.cast %x {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/shared")
// CHECK-NEXT:  func.return %[[F]], %[[G]], %x, %[[D]]
// REMARK: remark: cancel-casts: rejected symmetric-pair on [/test, /back]: f32 -> i1 changes the value's meaning
// REMARK: remark: cancel-casts: rejected symmetric-pair on [/trunc, /untrunc]: f32 -> i64 changes the value's meaning
func.func @meaning(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>) {
  %0 = ge.cast %x {to = 9 : i64} : (tensor<4xf32>) -> tensor<4xi1> loc("/test")
  %1 = ge.cast %0 {to = 1 : i64} : (tensor<4xi1>) -> tensor<4xf32> loc("/back")
  %2 = ge.cast %x {to = 7 : i64} : (tensor<4xf32>) -> tensor<4xi64> loc("/trunc")
  %3 = ge.cast %2 {to = 1 : i64} : (tensor<4xi64>) -> tensor<4xf32> loc("/untrunc")
  %4 = ge.cast %x {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/shared")
  %5 = ge.cast %4 {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32> loc("/shared_up")
  func.return %1, %3, %5, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf16>
}

// -----

// Compose: the middle step is exact (f16 -> f32), or an integer through f32 to f16 (all of f16's
// finite integers are exact in f32). Negative: f32 -> f16 -> bf16 rounds twice; i64 -> f32 ->
// bf16 may too (bf16 holds integers beyond f32's exact range).
// CHECK-LABEL: func.func @compose
// CHECK-NEXT:  %[[A:.*]] = ge.cast %h {to = 16 : i64} : (tensor<4xf16>) -> tensor<4xbf16> loc("/h_bf")
// CHECK-NEXT:  %[[B:.*]] = ge.cast %i {to = 10 : i64} : (tensor<4xi64>) -> tensor<4xf16> loc("/i_h")
// CHECK-NEXT:  %[[C1:.*]] = ge.cast %x {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/x_h")
// CHECK-NEXT:  %[[C2:.*]] = ge.cast %[[C1]] {to = 16 : i64} : (tensor<4xf16>) -> tensor<4xbf16> loc("/x_bf")
// CHECK-NEXT:  %[[D1:.*]] = ge.cast %i {to = 1 : i64} : (tensor<4xi64>) -> tensor<4xf32> loc("/i_f2")
// CHECK-NEXT:  %[[D2:.*]] = ge.cast %[[D1]] {to = 16 : i64} : (tensor<4xf32>) -> tensor<4xbf16> loc("/i_bf")
// CHECK-NEXT:  func.return %[[A]], %[[B]], %[[C2]], %[[D2]]
// REMARK: remark: cancel-casts: applied compose on [/h_f, /h_bf]: f16 -> f32 -> bf16 is one cast
// REMARK: remark: cancel-casts: applied compose on [/i_f, /i_h]: i64 -> f32 -> f16 is one cast
func.func @compose(%x: tensor<4xf32>, %h: tensor<4xf16>, %i: tensor<4xi64>) -> (tensor<4xbf16>, tensor<4xf16>, tensor<4xbf16>, tensor<4xbf16>) {
  %0 = ge.cast %h {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32> loc("/h_f")
  %1 = ge.cast %0 {to = 16 : i64} : (tensor<4xf32>) -> tensor<4xbf16> loc("/h_bf")
  %2 = ge.cast %i {to = 1 : i64} : (tensor<4xi64>) -> tensor<4xf32> loc("/i_f")
  %3 = ge.cast %2 {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/i_h")
  %4 = ge.cast %x {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/x_h")
  %5 = ge.cast %4 {to = 16 : i64} : (tensor<4xf16>) -> tensor<4xbf16> loc("/x_bf")
  %6 = ge.cast %i {to = 1 : i64} : (tensor<4xi64>) -> tensor<4xf32> loc("/i_f2")
  %7 = ge.cast %6 {to = 16 : i64} : (tensor<4xf32>) -> tensor<4xbf16> loc("/i_bf")
  func.return %1, %3, %5, %7 : tensor<4xbf16>, tensor<4xf16>, tensor<4xbf16>, tensor<4xbf16>
}

// -----

// A cast to the type its input has is its input.
// CHECK-LABEL: func.func @noop
// CHECK-NEXT:  func.return %x : tensor<4xf32>
// REMARK: remark: cancel-casts: applied noop on [/same]: the value already is f32
func.func @noop(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ge.cast %x {to = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> loc("/same")
  func.return %0 : tensor<4xf32>
}

// -----

// Integer narrowing wraps, i64 -> f32 rounds integers above 2^24 and quantization to f8
// rounds hard: none of these pairs may be undone.
// CHECK-LABEL: func.func @lossy_pairs
// CHECK:      ge.cast %i {to = 3 : i64}
// CHECK:      ge.cast %x {to = 17 : i64}
// REMARK: rejected symmetric-pair on [/to_i8, /back_i32]: i32 -> i8 changes the value's meaning
// REMARK: rejected symmetric-pair on [/to_f8, /back_f32]: f32 -> f8E4M3FN changes the value's meaning
// REMARK: rejected symmetric-pair on [/l_f, /l_back]: i64 -> f32 changes the value's meaning
func.func @lossy_pairs(%i: tensor<4xi32>, %x: tensor<4xf32>, %l: tensor<4xi64>) -> (tensor<4xi32>, tensor<4xf32>, tensor<4xi64>) {
  %0 = ge.cast %i {to = 3 : i64} : (tensor<4xi32>) -> tensor<4xi8> loc("/to_i8")
  %1 = ge.cast %0 {to = 6 : i64} : (tensor<4xi8>) -> tensor<4xi32> loc("/back_i32")
  %2 = ge.cast %x {to = 17 : i64} : (tensor<4xf32>) -> tensor<4xf8E4M3FN> loc("/to_f8")
  %3 = ge.cast %2 {to = 1 : i64} : (tensor<4xf8E4M3FN>) -> tensor<4xf32> loc("/back_f32")
  %4 = ge.cast %l {to = 1 : i64} : (tensor<4xi64>) -> tensor<4xf32> loc("/l_f")
  %5 = ge.cast %4 {to = 7 : i64} : (tensor<4xf32>) -> tensor<4xi64> loc("/l_back")
  func.return %1, %3, %5 : tensor<4xi32>, tensor<4xf32>, tensor<4xi64>
}

// -----

// dequantize-to: an f16 cast of a DequantizeLinear's f32 result is the DequantizeLinear with
// output_dtype f16 (it rounds once from f32 either way). quantize-from: a QuantizeLinear of an
// exact f16 -> f32 widening reads the f16 value (it divides in f32 either way). A DQ the cast
// does not read alone keeps its cast.

// CHECK-LABEL: func.func @quantized
// CHECK-NEXT:    %s = ge.constant
// CHECK-NEXT:    %[[D:.*]] = ge.dequantize_linear %q, %s {output_dtype = 10 : i64} : (tensor<4xui8>, tensor<f32>) -> tensor<4xf16> loc("/dq")
// CHECK-NEXT:    %[[A:.*]] = ge.add %[[D]], %[[D]]
// CHECK-NEXT:    %[[Q:.*]] = ge.quantize_linear %[[A]], %s : (tensor<4xf16>, tensor<f32>) -> tensor<4xui8> loc("/q")
// CHECK-NEXT:    %[[D2:.*]] = ge.dequantize_linear %q, %s : (tensor<4xui8>, tensor<f32>) -> tensor<4xf32> loc("/dq_shared")
// CHECK-NEXT:    %[[C2:.*]] = ge.cast %[[D2]]
// CHECK-NEXT:    func.return %[[Q]], %[[C2]], %[[D2]]
// REMARK-DAG: remark: cancel-casts: applied dequantize-to on [/to_half, /dq]: the DequantizeLinear rounds to f16 itself
// REMARK-DAG: remark: cancel-casts: applied quantize-from on [/q, /to_float]: the QuantizeLinear divides f16 in f32 itself
// REMARK-DAG: remark: cancel-casts: rejected dequantize-to on [/shared_half, /dq_shared]: ge.dequantize_linear '/dq_shared' has a user outside the pattern (func.return)
func.func @quantized(%q: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xf16>, tensor<4xf32>) {
  %s = ge.constant dense<0.5> : tensor<f32>
  %0 = ge.dequantize_linear %q, %s : (tensor<4xui8>, tensor<f32>) -> tensor<4xf32> loc("/dq")
  %1 = ge.cast %0 {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/to_half")
  %2 = ge.add %1, %1 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16> loc("/add")
  %3 = ge.cast %2 {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32> loc("/to_float")
  %4 = ge.quantize_linear %3, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xui8> loc("/q")
  %5 = ge.dequantize_linear %q, %s : (tensor<4xui8>, tensor<f32>) -> tensor<4xf32> loc("/dq_shared")
  %6 = ge.cast %5 {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/shared_half")
  func.return %4, %6, %5 : tensor<4xui8>, tensor<4xf16>, tensor<4xf32>
}
