// merge-constants: one constant per (type, bitwise value) in a block, inline or sidecar weight.
// The sidecar case needs a weights file beside a copy of this file.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; from ge.frontend.sidecar import save; a = np.arange(40, dtype=np.float32); save('%t/w.safetensors', {'a': a, 'b': a.copy(), 'c': a + 1, 'four': np.ones(4, np.float32), 'nchw': np.ones((1, 1, 2, 2), np.float32), 'nan1': np.full(4, np.nan, np.float32), 'nan2': np.full(4, np.nan, np.float32), 'nan3': np.full(4, -np.nan, np.float32)})"
// RUN: ge-opt %t/m.mlir -p merge-constants --split-input-file | filecheck %s
// RUN: ge-opt %t/m.mlir -p merge-constants,cse --split-input-file | filecheck %s --check-prefix=CSE
// RUN: ge-opt %t/m.mlir -p merge-constants --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// Equal values of one type merge (a splat equals its spelled-out form); the first one stays.
// Other types, other values, and 0.0 against -0.0 (different bits) do not.
// CHECK-LABEL: func.func @inline
// CHECK-NEXT:    %[[A:.*]] = ge.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = ge.constant dense<1.000000e+00> : tensor<2x2xf32>
// CHECK-NEXT:    %[[C:.*]] = ge.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:    %[[Z:.*]] = ge.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[NZ:.*]] = ge.constant dense<-0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[I:.*]] = ge.constant dense<1065353216> : tensor<4xi32>
// CHECK-NEXT:    func.return %[[A]], %[[A]], %[[B]], %[[C]], %[[Z]], %[[NZ]], %[[Z]], %[[I]]
// REMARK: remark: merge-constants: applied merge on [ge.constant, ge.constant]: 2 equal constants of type tensor<4xf32> merged into one
// REMARK: remark: merge-constants: applied merge on [ge.constant, ge.constant]: 2 equal constants of type tensor<f32> merged into one
// REMARK: remark: merge-constants: note merge-constants on [-]: 2 duplicate constants removed (4 constants merged into 2)
func.func @inline() -> (tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4xi32>) {
  %a = ge.constant dense<1.0> : tensor<4xf32>
  %a2 = ge.constant dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xf32>
  %b = ge.constant dense<1.0> : tensor<2x2xf32>
  %c = ge.constant dense<2.0> : tensor<4xf32>
  %z = ge.constant dense<0.0> : tensor<f32>
  %nz = ge.constant dense<-0.0> : tensor<f32>
  %z2 = ge.constant dense<0.0> : tensor<f32>
  %i = ge.constant dense<1065353216> : tensor<4xi32>
  func.return %a, %a2, %b, %c, %z, %nz, %z2, %i : tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<4xi32>
}

// -----

// After the merge, ops on equal constants are equal too: cse finishes the job.
// CHECK-LABEL: func.func @then_cse
// CHECK-COUNT-2: ge.add
// CSE-LABEL: func.func @then_cse
// CSE-NEXT:    %[[C:.*]] = ge.constant
// CSE-NEXT:    %[[S:.*]] = ge.add %{{.*}}, %[[C]]
// CSE-NEXT:    func.return %[[S]], %[[S]]
func.func @then_cse(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %c = ge.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %s = ge.add %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c2 = ge.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32> loc("/other")
  %s2 = ge.add %x, %c2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %s, %s2 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Constants merge within a block, not across functions.
// CHECK-LABEL: func.func @f
// CHECK-NEXT:    ge.constant dense<5>
// CHECK-LABEL: func.func @g
// CHECK-NEXT:    ge.constant dense<5>
func.func @f() -> tensor<2xi64> {
  %c = ge.constant dense<5> : tensor<2xi64>
  func.return %c : tensor<2xi64>
}
func.func @g() -> tensor<2xi64> {
  %c = ge.constant dense<5> : tensor<2xi64>
  func.return %c : tensor<2xi64>
}

// -----

// Sidecar weights compare by value, not by key; an inline constant equal to a weight wins (it needs
// no sidecar) and moves up to dominate every use. A different format is a different type. NaNs
// with equal bits are equal (nan1, nan2); a NaN with other bits (nan3, sign set) is not.
// (Inline NaNs are not written here: xDSL reads `dense<0x7fc00000>` as the integer 2143289344.)
// CHECK-LABEL: func.func @weights
// CHECK-NEXT:    %[[A:.*]] = ge.constant #ge.weight<"a"> : tensor<40xf32> loc("/a")
// CHECK-NEXT:    %[[C:.*]] = ge.constant #ge.weight<"c"> : tensor<40xf32>
// CHECK-NEXT:    %[[ONES:.*]] = ge.constant dense<1.000000e+00> : tensor<4xf32> loc("/ones")
// CHECK-NEXT:    %[[N:.*]] = ge.constant #ge.weight<"nchw"> : tensor<1x1x2x2xf32, #ge.fmt<NCHW>>
// CHECK-NEXT:    %[[P:.*]] = ge.constant dense<1.000000e+00> : tensor<1x1x2x2xf32>
// CHECK-NEXT:    %[[NAN:.*]] = ge.constant #ge.weight<"nan1"> : tensor<4xf32>
// CHECK-NEXT:    %[[NAN3:.*]] = ge.constant #ge.weight<"nan3"> : tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[A]], %[[C]], %[[ONES]], %[[ONES]], %[[N]], %[[P]], %[[NAN]], %[[NAN]], %[[NAN3]]
// REMARK: remark: merge-constants: applied merge on [/a, /b]: 2 equal constants of type tensor<40xf32> merged into one
// REMARK: remark: merge-constants: applied merge on [/four, /ones]: 2 equal constants of type tensor<4xf32> merged into one
// REMARK: remark: merge-constants: applied merge on [ge.constant, ge.constant]: 2 equal constants of type tensor<4xf32> merged into one
// REMARK: remark: merge-constants: note merge-constants on [-]: 3 duplicate constants removed (6 constants merged into 3)
builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @weights() -> (tensor<40xf32>, tensor<40xf32>, tensor<40xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1x1x2x2xf32, #ge.fmt<NCHW>>, tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %a = ge.constant #ge.weight<"a"> : tensor<40xf32> loc("/a")
    %b = ge.constant #ge.weight<"b"> : tensor<40xf32> loc("/b")
    %c = ge.constant #ge.weight<"c"> : tensor<40xf32>
    %four = ge.constant #ge.weight<"four"> : tensor<4xf32> loc("/four")
    %ones = ge.constant dense<1.0> : tensor<4xf32> loc("/ones")
    %n = ge.constant #ge.weight<"nchw"> : tensor<1x1x2x2xf32, #ge.fmt<NCHW>>
    %p = ge.constant dense<1.0> : tensor<1x1x2x2xf32>
    %nan1 = ge.constant #ge.weight<"nan1"> : tensor<4xf32>
    %nan2 = ge.constant #ge.weight<"nan2"> : tensor<4xf32>
    %nan3 = ge.constant #ge.weight<"nan3"> : tensor<4xf32>
    func.return %a, %b, %c, %four, %ones, %n, %p, %nan1, %nan2, %nan3 : tensor<40xf32>, tensor<40xf32>, tensor<40xf32>, tensor<4xf32>, tensor<4xf32>, tensor<1x1x2x2xf32, #ge.fmt<NCHW>>, tensor<1x1x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
