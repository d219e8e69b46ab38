// RUN: ge-opt %s -p mixed-precision --split-input-file | filecheck %s
// RUN: ge-opt %s -p "mixed-precision{precision_mode=allow_mix_precision}" --split-input-file | filecheck %s
// RUN: ge-opt %s -p mixed-precision --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// allow_mix_precision (the default mode): white ops compute in f16, black ops keep f32, gray ops
// follow their inputs. Graph inputs and outputs keep f32 (casts at the boundary); constants are
// converted at compile time.

// White: an f32 matmul computes in f16; the input is cast once, the weight constant converted
// in place, the result cast back for the f32 output.
// CHECK-LABEL: func.func @white
// CHECK-SAME: (%x: tensor<2x4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:  %[[X:.*]] = ge.cast %x {to = 10 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf16>
// CHECK-NEXT:  %[[W:.*]] = ge.constant dense<{{.*}}> : tensor<4x3xf16> loc("w")
// CHECK-NEXT:  %[[M:.*]] = ge.matmul %[[X]], %[[W]] : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16> loc("/mm")
// CHECK-NEXT:  %[[R:.*]] = ge.cast %[[M]] {to = 1 : i64} : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK-NEXT:  func.return %[[R]] : tensor<2x3xf32>
// REMARK: remark: mixed-precision: applied white-list on [/mm]: computes in f16
func.func @white(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = ge.constant dense<0.5> : tensor<4x3xf32> loc("w")
  %0 = ge.matmul %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32> loc("/mm")
  func.return %0 : tensor<2x3xf32>
}

// -----

// White, negative: integer data is never changed; an op already in f16 has nothing to lower.
// CHECK-LABEL: func.func @white_int_and_f16
// CHECK-NOT:   ge.cast
// CHECK:       ge.matmul %a, %b : (tensor<2x4xi32>, tensor<4x3xi32>) -> tensor<2x3xi32>
// CHECK:       ge.matmul %c, %d : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
// REMARK-NOT: [/imm]
// REMARK-NOT: [/hmm]
func.func @white_int_and_f16(%a: tensor<2x4xi32>, %b: tensor<4x3xi32>, %c: tensor<2x4xf16>, %d: tensor<4x3xf16>) -> (tensor<2x3xi32>, tensor<2x3xf16>) {
  %0 = ge.matmul %a, %b : (tensor<2x4xi32>, tensor<4x3xi32>) -> tensor<2x3xi32> loc("/imm")
  %1 = ge.matmul %c, %d : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16> loc("/hmm")
  func.return %0, %1 : tensor<2x3xi32>, tensor<2x3xf16>
}

// -----

// Black: pow keeps f32 even when its input comes from an f16 op (cast back up once); the f16
// value also feeds the next white op directly, so there is no f16 -> f32 -> f16 chain.
// CHECK-LABEL: func.func @black
// CHECK:       %[[M:.*]] = ge.matmul {{.*}} -> tensor<2x2xf16> loc("/mm1")
// CHECK-NEXT:  %[[UP:.*]] = ge.cast %[[M]] {to = 1 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf32>
// CHECK:       %[[P:.*]] = ge.pow %[[UP]], %{{.*}} : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32> loc("/pow")
// CHECK:       ge.matmul %[[M]], %[[M]] : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16> loc("/mm2")
// CHECK-NOT:   {to = 10 : i64} : (tensor<2x2xf32>)
// CHECK:       func.return %[[P]], %{{.*}} : tensor<2x2xf32>, tensor<2x2xf32>
// REMARK: remark: mixed-precision: applied white-list on [/mm1]: computes in f16
// REMARK: remark: mixed-precision: rejected black-list on [/pow]: precision-sensitive: keeps f32
// REMARK: remark: mixed-precision: applied white-list on [/mm2]: computes in f16
func.func @black(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %e = ge.constant dense<3.0> : tensor<f32> loc("e")
  %0 = ge.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm1")
  %1 = ge.pow %0, %e : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32> loc("/pow")
  %2 = ge.matmul %0, %0 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm2")
  func.return %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Gray, positive: relu and add follow the f16 matmul (the add's bias is a constant, which does
// not count, and is converted). Gray, negative: a relu of a graph input stays f32; an add of an
// f16 and an f32 value is computed in f32 (promotion); an op of constants only stays f32.
// CHECK-LABEL: func.func @gray
// CHECK:       %[[M:.*]] = ge.matmul {{.*}} -> tensor<2x2xf16> loc("/mm")
// CHECK:       %[[A:.*]] = ge.add %[[M]], %{{.*}} : (tensor<2x2xf16>, tensor<2xf16>) -> tensor<2x2xf16> loc("/bias")
// CHECK:       %[[R:.*]] = ge.relu %[[A]] : (tensor<2x2xf16>) -> tensor<2x2xf16> loc("/relu")
// CHECK-NEXT:  %[[UP:.*]] = ge.cast %[[R]] {to = 1 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf32>
// CHECK-NEXT:  ge.relu %x : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("/relu_in")
// CHECK:       ge.add %[[UP]], %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mixed")
// CHECK:       ge.add %{{.*}}, %{{.*}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("/consts")
// REMARK: remark: mixed-precision: applied gray-list on [/bias]: follows its inputs, which are f16
// REMARK: remark: mixed-precision: applied gray-list on [/relu]: follows its inputs, which are f16
// REMARK: remark: mixed-precision: rejected gray-list on [/relu_in]: follows its inputs; 'x' is f32: keeps f32
// REMARK: remark: mixed-precision: rejected gray-list on [/mixed]: follows its inputs; 'b' is f32: keeps f32
// REMARK: remark: mixed-precision: rejected gray-list on [/consts]: follows its inputs; all are constants: keeps f32
func.func @gray(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>) {
  %b = ge.constant dense<[1.0, 2.0]> : tensor<2xf32> loc("b")
  %0 = ge.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm")
  %1 = ge.add %0, %b : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32> loc("/bias")
  %2 = ge.relu %1 : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("/relu")
  %3 = ge.relu %x : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("/relu_in")
  %4 = ge.add %2, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mixed")
  %5 = ge.add %b, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("/consts")
  func.return %3, %4, %5 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>
}

// -----

// Operands that are not data keep their types: a reshape's shape (i64), batch norm's scale,
// bias, mean and variance (f32, as GE's BNInference takes them), layer norm's statistics
// results (stash_type f32), max pool's indices (i64).
// CHECK-LABEL: func.func @non_data
// CHECK:       %[[C:.*]] = ge.conv {{.*}} -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>>
// CHECK:       %[[BN:.*]] = ge.batch_norm %[[C]], %s, %s, %s, %s : (tensor<1x2x4x4xf16, #ge.fmt<NCHW>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf16, #ge.fmt<NCHW>>
// CHECK:       %{{.*}}, %{{.*}} = ge.max_pool %[[BN]] {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x4x4xf16, #ge.fmt<NCHW>>) -> (tensor<1x2x3x3xf16, #ge.fmt<NCHW>>, tensor<1x2x3x3xi64, #ge.fmt<NCHW>>)
// CHECK:       ge.reshape %{{.*}}, %{{.*}} : (tensor<1x2x3x3xf16, #ge.fmt<NCHW>>, tensor<2xi64>) -> tensor<2x9xf16>
// CHECK:       ge.matmul {{.*}} -> tensor<2x2xf16>
// CHECK:       %{{.*}}, %{{.*}}, %{{.*}} = ge.layer_norm %{{.*}}, %{{.*}}, B = %{{.*}} : (tensor<2x2xf16>, tensor<2xf16>, tensor<2xf16>) -> (tensor<2x2xf16>, tensor<2x1xf32>, tensor<2x1xf32>)
func.func @non_data(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %s: tensor<2xf32>, %m: tensor<9x2xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>, tensor<1x2x3x3xi64, #ge.fmt<NCHW>>) {
  %0 = ge.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/conv")
  %1 = ge.batch_norm %0, %s, %s, %s, %s : (tensor<1x2x4x4xf32, #ge.fmt<NCHW>>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32, #ge.fmt<NCHW>> loc("/bn")
  %2, %3 = ge.max_pool %1 {kernel_shape = array<i64: 2, 2>} : (tensor<1x2x4x4xf32, #ge.fmt<NCHW>>) -> (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<1x2x3x3xi64, #ge.fmt<NCHW>>) loc("/pool")
  %shape = ge.constant dense<[2, 9]> : tensor<2xi64> loc("shape")
  %4 = ge.reshape %2, %shape : (tensor<1x2x3x3xf32, #ge.fmt<NCHW>>, tensor<2xi64>) -> tensor<2x9xf32> loc("/reshape")
  %5 = ge.matmul %4, %m : (tensor<2x9xf32>, tensor<9x2xf32>) -> tensor<2x2xf32> loc("/mm")
  %g = ge.constant dense<1.0> : tensor<2xf32> loc("gamma")
  %6, %7, %8 = ge.layer_norm %5, %g, B = %g : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>) loc("/ln")
  func.return %6, %7, %3 : tensor<2x2xf32>, tensor<2x1xf32>, tensor<1x2x3x3xi64, #ge.fmt<NCHW>>
}

// -----

// Constants: one used by a converted op and by a kept op has both versions; one used only by
// converted ops is replaced (the f32 original is erased). Values beyond f16's range saturate to
// its largest finite value (a -3.4e38 mask stays finite).
// CHECK-LABEL: func.func @constants
// CHECK-DAG:   ge.constant dense<[-6.550400e+04, 1.000000e+00, 6.550400e+04]> : tensor<3xf16> loc("only_converted")
// CHECK-DAG:   ge.constant dense<2.000000e+00> : tensor<3xf32> loc("shared")
// CHECK-DAG:   ge.constant dense<2.000000e+00> : tensor<3xf16> loc("shared")
// CHECK-NOT:   tensor<3xf32> loc("only_converted")
// CHECK:       func.return
func.func @constants(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>) {
  %a = ge.constant dense<[-3.4e38, 1.0, 1.0e5]> : tensor<3xf32> loc("only_converted")
  %s = ge.constant dense<2.0> : tensor<3xf32> loc("shared")
  %0 = ge.matmul %x, %x : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32> loc("/mm")
  %1 = ge.add %0, %a : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3x3xf32> loc("/add_a")
  %2 = ge.mul %1, %s : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3x3xf32> loc("/mul_s")
  %3 = ge.pow %s, %s : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> loc("/pow_s")
  func.return %2, %3 : tensor<3x3xf32>, tensor<3xf32>
}

// -----

// Boundaries: an input feeding several converted ops is cast once; an output that is also used
// inside is cast back once; the signature keeps its types.
// CHECK-LABEL: func.func @boundaries
// CHECK-SAME:  (%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
// CHECK-NEXT:  %[[X:.*]] = ge.cast %x {to = 10 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf16>
// CHECK-NEXT:  %[[M1:.*]] = ge.matmul %[[X]], %[[X]] : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16> loc("/mm1")
// CHECK-NEXT:  %[[O1:.*]] = ge.cast %[[M1]] {to = 1 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf32>
// CHECK-NEXT:  %[[M2:.*]] = ge.matmul %[[M1]], %[[X]] : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16> loc("/mm2")
// CHECK-NEXT:  %[[O2:.*]] = ge.cast %[[M2]] {to = 1 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf32>
// CHECK-NEXT:  ge.relu %[[M1]] : (tensor<2x2xf16>) -> tensor<2x2xf16> loc("/relu")
// CHECK-NEXT:  func.return %[[O1]], %[[O2]] : tensor<2x2xf32>, tensor<2x2xf32>
func.func @boundaries(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0 = ge.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm1")
  %1 = ge.matmul %0, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm2")
  %2 = ge.relu %0 : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("/relu")
  func.return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Ops whose result type is their meaning (casts, shapes) are never changed. A user's cast to f16
// of a value that became f16 cancels against the pass's cast back to f32 (no chain); the shape
// reads the f32 value, which the graph output needs anyway.
// CHECK-LABEL: func.func @keep_ops
// CHECK:       %[[M:.*]] = ge.matmul {{.*}} -> tensor<2x2xf16> loc("/mm")
// CHECK-NEXT:  %[[UP:.*]] = ge.cast %[[M]] {to = 1 : i64} : (tensor<2x2xf16>) -> tensor<2x2xf32> loc("/mm/cast_f32")
// CHECK-NEXT:  %[[S:.*]] = ge.shape %[[UP]] : (tensor<2x2xf32>) -> tensor<2xi64> loc("/shape")
// CHECK-NEXT:  func.return %[[UP]], %[[M]], %[[S]]
// REMARK:      remark: cancel-casts: applied symmetric-pair on [/mm/cast_f32, /user_cast]: f16 -> f32 -> f16 is the original value
func.func @keep_ops(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf16>, tensor<2xi64>) {
  %0 = ge.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm")
  %1 = ge.cast %0 {to = 10 : i64} : (tensor<2x2xf32>) -> tensor<2x2xf16> loc("/user_cast")
  %2 = ge.shape %0 : (tensor<2x2xf32>) -> tensor<2xi64> loc("/shape")
  func.return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf16>, tensor<2xi64>
}
