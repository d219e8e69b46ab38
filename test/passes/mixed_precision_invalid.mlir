// Option and op-list errors: one line naming the problem, exit code 1, no traceback.

// RUN: not ge-opt %s -p "mixed-precision{mode=fp8}" 2>&1 | filecheck %s --check-prefix=MODE
// MODE: ge-opt: error: mixed-precision: unknown precision mode 'fp8'; expected one of force_fp16, force_fp32, cube_fp16in_fp32out, allow_fp32_to_fp16, allow_fp32_to_bf16, must_keep_origin_dtype, allow_mix_precision, allow_mix_precision_fp16, allow_mix_precision_bf16
// MODE-NOT: Traceback
// MODE-EMPTY:

// RUN: not ge-opt %s -p "mixed-precision{precision_mode=Force_FP16}" 2>&1 | filecheck %s --check-prefix=ALIAS
// ALIAS: ge-opt: error: mixed-precision: unknown precision mode 'Force_FP16'; expected one of

// RUN: not ge-opt %s -p "mixed-precision{mode=force_fp32 precision_mode=force_fp16}" 2>&1 | filecheck %s --check-prefix=BOTH
// BOTH: ge-opt: error: mixed-precision: mode=force_fp32 and precision_mode=force_fp16 disagree; give one of them

// RUN: not ge-opt %s -p "mixed-precision{lists=\"%t.missing.toml\"}" 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: ge-opt: error: mixed-precision: cannot read op lists {{.*}}missing.toml: No such file or directory

// RUN: echo 'white = ["ge.nope"]' > %t.op.toml
// RUN: not ge-opt %s -p "mixed-precision{lists=\"%t.op.toml\"}" 2>&1 | filecheck %s --check-prefix=OP
// OP: ge-opt: error: mixed-precision: op lists {{.*}}.op.toml: 'ge.nope' in 'white' is not a ge op

// RUN: echo 'grey = ["ge.add"]' > %t.key.toml
// RUN: not ge-opt %s -p "mixed-precision{lists=\"%t.key.toml\"}" 2>&1 | filecheck %s --check-prefix=KEY
// KEY: ge-opt: error: mixed-precision: op lists {{.*}}.key.toml: unknown key 'grey' (keys: white, black, gray, keep, cube, fp16_only)

// RUN: echo 'white = ["ge.add"]' > %t.twice.toml
// RUN: echo 'black = ["add"]' >> %t.twice.toml
// RUN: not ge-opt %s -p "mixed-precision{lists=\"%t.twice.toml\"}" 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE: ge-opt: error: mixed-precision: op lists {{.*}}.twice.toml: ge.add is in both 'white' and 'black'

// RUN: echo 'white = [' > %t.syntax.toml
// RUN: not ge-opt %s -p "mixed-precision{lists=\"%t.syntax.toml\"}" 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX: ge-opt: error: mixed-precision: op lists {{.*}}.syntax.toml: {{.+}}
// SYNTAX-EMPTY:

// A valid user list changes the decisions: pow moves to the white list, matmul to the black one.
// RUN: echo 'white = ["pow"]' > %t.ok.toml
// RUN: echo 'black = ["ge.matmul"]' >> %t.ok.toml
// RUN: ge-opt %s -p "mixed-precision{lists=\"%t.ok.toml\"}" | filecheck %s --check-prefix=USER
// USER: ge.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm")
// USER: ge.pow %{{.*}}, %{{.*}} : (tensor<2x2xf16>, tensor<f32>) -> tensor<2x2xf16> loc("/pow")
func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %e = ge.constant dense<2.0> : tensor<f32>
  %0 = ge.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> loc("/mm")
  %1 = ge.pow %0, %e : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32> loc("/pow")
  func.return %1 : tensor<2x2xf32>
}
