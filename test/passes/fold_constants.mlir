// fold-constants: ops on constants are evaluated with the interpreter's kernels; the guards keep
// folding from blowing the model up. The sidecar case needs a weights file beside a copy of this file.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; save('%t/w.safetensors', {'w': np.arange(64, dtype=np.float32).reshape(8, 8)})"
// RUN: ge-opt %t/m.mlir -p fold-constants --split-input-file -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// RUN: python -c "import numpy as np; from safetensors.numpy import load_file; w = load_file('%t/out.safetensors'); assert list(w) == ['/wt'] and (w['/wt'] == np.arange(64, dtype=np.float32).reshape(8, 8).T).all()"
// RUN: ge-opt %t/m.mlir -p 'fold-constants{max-elements=8}' --split-input-file -o %t/small.mlir
// RUN: filecheck %s --check-prefix=SMALL < %t/small.mlir
// RUN: ge-opt %t/m.mlir -p fold-constants --split-input-file --remarks -o %t/r.mlir 2>&1 | filecheck %s --check-prefix=REMARK

// Two constants fold into one that keeps the node name; the operands only it used are gone.
// CHECK-LABEL: func.func @fold_add
// CHECK-NEXT:    %[[S:.*]] = ge.constant dense<[2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]> : tensor<4xf32> loc("/add")
// CHECK-NEXT:    ge.mul %{{.*}}, %[[S]] : {{.*}} loc("/mul")
// CHECK-NEXT:    func.return
// REMARK: remark: fold-constants: applied fold on [/add]: ge.add '/add' folded into a constant of 4 elements
func.func @fold_add(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = ge.constant dense<1.0> : tensor<4xf32>
  %b = ge.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = ge.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("/add")
  %y = ge.mul %x, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("/mul")
  func.return %y : tensor<4xf32>
}

// -----

// A constant-only chain folds in one sweep; a constant something else still uses stays.
// CHECK-LABEL: func.func @fold_chain
// CHECK-NEXT:    %[[W:.*]] = ge.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    %[[M:.*]] = ge.constant dense<{{\[\[}}5.000000e-01, 1.500000e+00, 2.500000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<2x3xf32> loc("/scale")
// CHECK-NEXT:    ge.add %{{.*}}, %[[M]]
// CHECK-NEXT:    func.return %{{.*}}, %[[W]]
func.func @fold_chain(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %w = ge.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %t = ge.transpose %w {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32> loc("/t")
  %h = ge.constant dense<0.5> : tensor<f32>
  %m = ge.mul %t, %h : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("/scale")
  %y = ge.add %x, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("/add")
  func.return %y, %w : tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// ge.shape of a static tensor is a constant whatever the tensor holds: the shape subgraph folds.
// (The reshape's `?` result is refined by infer-shapes, not here.)
// CHECK-LABEL: func.func @shape_subgraph
// CHECK-NEXT:    %[[C:.*]] = ge.constant dense<[2, -1]> : tensor<2xi64> loc("/concat")
// CHECK-NEXT:    ge.reshape %{{.*}}, %[[C]] : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NEXT:    func.return
// REMARK: remark: fold-constants: applied fold on [/shape]: ge.shape '/shape' folded into a constant of 3 elements
func.func @shape_subgraph(%x: tensor<2x3x4xf32>) -> tensor<?x?xf32> {
  %s = ge.shape %x : (tensor<2x3x4xf32>) -> tensor<3xi64> loc("/shape")
  %i = ge.constant dense<0> : tensor<i64>
  %n = ge.gather %s, %i : (tensor<3xi64>, tensor<i64>) -> tensor<i64> loc("/gather")
  %ax = ge.constant dense<0> : tensor<1xi64>
  %u = ge.unsqueeze %n, %ax : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64> loc("/unsqueeze")
  %m1 = ge.constant dense<-1> : tensor<1xi64>
  %c = ge.concat %u, %m1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64> loc("/concat")
  %r = ge.reshape %x, %c : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("/reshape")
  func.return %r : tensor<?x?xf32>
}

// -----

// The shape of a tensor with an unknown dim is not a constant; the static dims it selects are.
// CHECK-LABEL: func.func @shape_dynamic
// CHECK-NEXT:    ge.shape %{{.*}} : (tensor<?x3x4xf32>) -> tensor<3xi64> loc("/shape_all")
// CHECK-NEXT:    ge.constant dense<[3, 4]> : tensor<2xi64> loc("/shape_tail")
func.func @shape_dynamic(%x: tensor<?x3x4xf32>) -> (tensor<3xi64>, tensor<2xi64>) {
  %s = ge.shape %x : (tensor<?x3x4xf32>) -> tensor<3xi64> loc("/shape_all")
  %t = ge.shape %x {start = 1 : i64} : (tensor<?x3x4xf32>) -> tensor<2xi64> loc("/shape_tail")
  func.return %s, %t : tensor<3xi64>, tensor<2xi64>
}

// -----

// ge.size likewise: a constant for a static tensor, an op while a dim is unknown.
// CHECK-LABEL: func.func @size
// CHECK-NEXT:    ge.constant dense<24> : tensor<i64> loc("/size")
// CHECK-NEXT:    ge.size %{{.*}} : (tensor<?x3xf32>) -> tensor<i64> loc("/size_dynamic")
func.func @size(%x: tensor<2x3x4xf32>, %y: tensor<?x3xf32>) -> (tensor<i64>, tensor<i64>) {
  %s = ge.size %x : (tensor<2x3x4xf32>) -> tensor<i64> loc("/size")
  %t = ge.size %y : (tensor<?x3xf32>) -> tensor<i64> loc("/size_dynamic")
  func.return %s, %t : tensor<i64>, tensor<i64>
}

// -----

// An integer product with a zero constant is zeros whatever the other factor holds (a dynamic
// export's zeros_like, input_ids * 0, once its shape is static); a float one is kept (NaN * 0), and
// so is one of an unknown shape, and one with a nonzero constant.
// CHECK-LABEL: func.func @int_times_zero
// CHECK:         ge.constant dense<0> : tensor<2x3xi64> loc("/tokens")
// CHECK:         ge.mul %f, %zf {{.*}} loc("/floats")
// CHECK:         ge.mul %d, %z {{.*}} loc("/dynamic")
// CHECK:         ge.mul %x, %two {{.*}} loc("/twice")
func.func @int_times_zero(%x: tensor<2x3xi64>, %f: tensor<2x3xf32>, %d: tensor<?x3xi64>) -> (tensor<2x3xi64>, tensor<2x3xf32>, tensor<?x3xi64>, tensor<2x3xi64>) {
  %z = ge.constant dense<0> : tensor<i64>
  %two = ge.constant dense<2> : tensor<i64>
  %zf = ge.constant dense<0.0> : tensor<f32>
  %y = ge.mul %x, %z : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64> loc("/tokens")
  %g = ge.mul %f, %zf : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32> loc("/floats")
  %e = ge.mul %d, %z : (tensor<?x3xi64>, tensor<i64>) -> tensor<?x3xi64> loc("/dynamic")
  %t = ge.mul %x, %two : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64> loc("/twice")
  func.return %y, %g, %e, %t : tensor<2x3xi64>, tensor<2x3xf32>, tensor<?x3xi64>, tensor<2x3xi64>
}

// -----

// Growth guard: a small constant broadcast into a big tensor (expand, constant_of_shape, an outer
// product) stays an op; a result small enough to stay inline (<= 32 elements) folds anyway.
// CHECK-LABEL: func.func @growth
// CHECK:         ge.expand {{.*}} loc("/expand")
// CHECK:         ge.constant_of_shape {{.*}} loc("/zeros")
// CHECK:         ge.mul {{.*}} loc("/outer")
// CHECK:         ge.constant dense<1.000000e+00> : tensor<2x4xf32> loc("/small_expand")
// REMARK: remark: fold-constants: rejected growth-guard on [/expand]: ge.expand '/expand': results of 64 elements from constant operands of 3 elements (more than growth-factor=2 times)
// REMARK: remark: fold-constants: rejected growth-guard on [/zeros]: ge.constant_of_shape '/zeros': results of 64 elements from constant operands of 2 elements
// REMARK: remark: fold-constants: rejected growth-guard on [/outer]: ge.mul '/outer': results of 64 elements from constant operands of 16 elements
// REMARK: remark: fold-constants: applied fold on [/small_expand]
func.func @growth(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x4xf32>) {
  %one = ge.constant dense<1.0> : tensor<f32>
  %shape = ge.constant dense<8> : tensor<2xi64>
  %e = ge.expand %one, %shape : (tensor<f32>, tensor<2xi64>) -> tensor<8x8xf32> loc("/expand")
  %z = ge.constant_of_shape %shape : (tensor<2xi64>) -> tensor<8x8xf32> loc("/zeros")
  %col = ge.constant dense<[[1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0]]> : tensor<8x1xf32>
  %row = ge.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]> : tensor<1x8xf32>
  %outer = ge.mul %col, %row : (tensor<8x1xf32>, tensor<1x8xf32>) -> tensor<8x8xf32> loc("/outer")
  %small_shape = ge.constant dense<[2, 4]> : tensor<2xi64>
  %small = ge.expand %one, %small_shape : (tensor<f32>, tensor<2xi64>) -> tensor<2x4xf32> loc("/small_expand")
  %a = ge.add %x, %e : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = ge.add %x, %z : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = ge.add %x, %outer : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %a, %b, %c, %small : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x4xf32>
}

// -----

// Size guard: a 16-element result folds by default, not with max-elements=8.
// CHECK-LABEL: func.func @size
// CHECK-NEXT:    ge.constant dense<1.41421354> : tensor<4x4xf32> loc("/sqrt")
// SMALL-LABEL: func.func @size
// SMALL:         ge.sqrt {{.*}} loc("/sqrt")
func.func @size(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = ge.constant dense<2.0> : tensor<4x4xf32>
  %s = ge.sqrt %a : (tensor<4x4xf32>) -> tensor<4x4xf32> loc("/sqrt")
  %y = ge.mul %x, %s : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}

// -----

// Training-mode dropout is random: never folded. In inference, or with ratio 0, it folds.
// CHECK-LABEL: func.func @dropout
// CHECK:         ge.dropout {{.*}} loc("/train")
// CHECK-NEXT:    ge.constant dense<{{.*}}> : tensor<4xf32> loc("/infer")
// CHECK-NEXT:    ge.constant dense<{{.*}}> : tensor<4xf32> loc("/ratio0")
// REMARK: remark: fold-constants: rejected fold on [/train]: ge.dropout '/train' is random (training-mode dropout)
func.func @dropout() -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %x = ge.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r = ge.constant dense<0.5> : tensor<f32>
  %zero = ge.constant dense<0.0> : tensor<f32>
  %yes = ge.constant dense<true> : tensor<i1>
  %no = ge.constant dense<false> : tensor<i1>
  %0 = ge.dropout %x, ratio = %r, training_mode = %yes : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32> loc("/train")
  %1 = ge.dropout %x, ratio = %r, training_mode = %no : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32> loc("/infer")
  %2 = ge.dropout %x, ratio = %zero, training_mode = %yes : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<4xf32> loc("/ratio0")
  func.return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A folded type more precise than the declared one is fine for ge users, not for func.return.
// CHECK-LABEL: func.func @exact_type
// CHECK:         ge.reshape {{.*}} -> tensor<?x?xf32> loc("/returned")
// CHECK-NEXT:    ge.constant dense<{{.*}}> : tensor<2x3xf32> loc("/relu")
// REMARK: remark: fold-constants: rejected fold on [/returned]: ge.reshape '/returned': result #0 of type tensor<?x?xf32> feeds a non-ge op that would not accept the folded type tensor<2x3xf32>
func.func @exact_type() -> (tensor<?x?xf32>, tensor<2x3xf32>) {
  %v = ge.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %s = ge.constant dense<[2, 3]> : tensor<2xi64>
  %0 = ge.reshape %v, %s : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("/returned")
  %1 = ge.reshape %v, %s : (tensor<6xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("/used")
  %2 = ge.relu %1 : (tensor<?x?xf32>) -> tensor<2x3xf32> loc("/relu")
  func.return %0, %2 : tensor<?x?xf32>, tensor<2x3xf32>
}

// -----

// A kernel that refuses the values at compile time leaves the op (and the error) to run time.
// CHECK-LABEL: func.func @kernel_error
// CHECK:         ge.gather {{.*}} loc("/oob")
// REMARK: remark: fold-constants: rejected fold on [/oob]: ge.gather '/oob': evaluation failed: index 5 is out of range
func.func @kernel_error() -> tensor<1xf32> {
  %d = ge.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = ge.constant dense<[5]> : tensor<1xi64>
  %g = ge.gather %d, %i : (tensor<2xf32>, tensor<1xi64>) -> tensor<1xf32> loc("/oob")
  func.return %g : tensor<1xf32>
}

// -----

// Sidecar weights are constants too: W^T folds into a new weight named after the node.
// CHECK-LABEL: builtin.module attributes {ge.weights = "out.safetensors"}
// CHECK-NEXT:    func.func @weights
// CHECK-NEXT:    %[[T:.*]] = ge.constant #ge.weight<"/wt"> : tensor<8x8xf32> loc("/wt")
// CHECK-NEXT:    ge.matmul %{{.*}}, %[[T]] {{.*}} loc("/mm")
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @weights(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w = ge.constant #ge.weight<"w"> : tensor<8x8xf32>
    %t = ge.transpose %w {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("/wt")
    %y = ge.matmul %x, %t : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("/mm")
    func.return %y : tensor<2x8xf32>
  }
}

// -----

// Integer division by zero is undefined in ONNX: the op stays (no made-up INT64_MIN), with a
// remark; float 0/0 folds to NaN as it computes at run time.
// CHECK-LABEL: func.func @int_div_by_zero
// CHECK:         ge.div %{{.*}}, %{{.*}} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64> loc("/idiv")
// CHECK:         ge.constant dense<{{.*}}0x{{[0-9a-fA-F]+}}{{.*}}> : tensor<2xf32> loc("/fdiv")
// CHECK:         func.return
// REMARK: remark: fold-constants: rejected fold on [/idiv]: ge.div '/idiv' divides integers by zero (undefined)
func.func @int_div_by_zero() -> (tensor<2xi64>, tensor<2xf32>) {
  %a = ge.constant dense<[3, 1]> : tensor<2xi64>
  %z = ge.constant dense<[0, 2]> : tensor<2xi64>
  %q = ge.div %a, %z : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64> loc("/idiv")
  %f = ge.constant dense<0.0> : tensor<2xf32>
  %n = ge.div %f, %f : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("/fdiv")
  func.return %q, %n : tensor<2xi64>, tensor<2xf32>
}
