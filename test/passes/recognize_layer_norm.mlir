// RUN: ge-opt %s -p recognize-layer-norm --split-input-file | filecheck %s
// RUN: ge-opt %s -p recognize-layer-norm --split-input-file --remarks 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// The exporter's decomposition (opset < 17): ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div,
// Mul gamma, Add beta. `%c` (x - mean) is used by Pow and Div; both uses are inside the pattern.

// CHECK-LABEL: func.func @exported
// CHECK-NEXT:    %[[G:.*]] = ge.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK-NEXT:    %[[Y:.*]] = ge.layer_norm %x, %[[G]], B = %beta {axis = -1 : i64, epsilon = 1.000000e-12 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32> loc("/ln/Add_1")
// CHECK-NEXT:    func.return %[[Y]]
func.func @exported(%x: tensor<2x4x8xf32>, %beta: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %gamma = ge.constant dense<2.0> : tensor<8xf32>
  %axes = ge.constant dense<-1> : tensor<1xi64>
  %mean = ge.reduce_mean %x, axes = %axes {keepdims = 1 : i64} : (tensor<2x4x8xf32>, tensor<1xi64>) -> tensor<2x4x1xf32> loc("/ln/ReduceMean")
  %c = ge.sub %x, %mean : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32> loc("/ln/Sub")
  %two = ge.constant dense<2.0> : tensor<f32>
  %sq = ge.pow %c, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32> loc("/ln/Pow")
  %var = ge.reduce_mean %sq, axes = %axes {keepdims = 1 : i64} : (tensor<2x4x8xf32>, tensor<1xi64>) -> tensor<2x4x1xf32> loc("/ln/ReduceMean_1")
  %eps = ge.constant dense<1.0e-12> : tensor<f32>
  %ve = ge.add %var, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32> loc("/ln/Add")
  %std = ge.sqrt %ve : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32> loc("/ln/Sqrt")
  %n = ge.div %c, %std : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32> loc("/ln/Div")
  %g = ge.mul %n, %gamma : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32> loc("/ln/Mul")
  %y = ge.add %g, %beta : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32> loc("/ln/Add_1")
  func.return %y : tensor<2x4x8xf32>
}
// REMARK: remark: recognize-layer-norm: applied layer-norm on [/ln/Add_1, /ln/Mul, /ln/Div, /ln/Sub, /ln/ReduceMean, /ln/Sqrt, /ln/Add, /ln/ReduceMean_1, /ln/Pow]: replaced by ge.layer_norm

// -----

// Variants: c * c for the square, multiplication by 1 / std, no gamma and no beta (Scale becomes a
// broadcast [1] of ones), normalization over the two trailing axes (axis -2).

// CHECK-LABEL: func.func @bare_variant
// CHECK-NEXT:    %[[ONE:.*]] = ge.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    %[[Y:.*]] = ge.layer_norm %x, %[[ONE]] {axis = -2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x4x8xf32>, tensor<1xf32>) -> tensor<2x4x8xf32> loc("/ln/Mul_1")
// CHECK-NEXT:    func.return %[[Y]]
func.func @bare_variant(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %axes = ge.constant dense<[1, 2]> : tensor<2xi64>
  %mean = ge.reduce_mean %x, axes = %axes : (tensor<2x4x8xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
  %c = ge.sub %x, %mean : (tensor<2x4x8xf32>, tensor<2x1x1xf32>) -> tensor<2x4x8xf32>
  %sq = ge.mul %c, %c : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %axes2 = ge.constant dense<[-1, -2]> : tensor<2xi64>
  %var = ge.reduce_mean %sq, axes = %axes2 : (tensor<2x4x8xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
  %eps = ge.constant dense<1.0e-5> : tensor<f32>
  %ve = ge.add %eps, %var : (tensor<f32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %std = ge.sqrt %ve : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %r = ge.div %one, %std : (tensor<f32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %n = ge.mul %r, %c : (tensor<2x1x1xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("/ln/Mul_1")
  func.return %n : tensor<2x4x8xf32>
}
// REMARK: remark: recognize-layer-norm: applied layer-norm-bare on [/ln/Mul_1, {{.*}}]: replaced by ge.layer_norm

// -----

// Only gamma; only beta.

// CHECK-LABEL: func.func @gamma_or_beta
// CHECK-NEXT:    %[[A:.*]] = ge.layer_norm %x, %gamma {axis = -1 : i64, {{.*}}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    %[[ONE:.*]] = ge.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    %[[B:.*]] = ge.layer_norm %x, %[[ONE]], B = %beta {axis = -1 : i64, {{.*}}} : (tensor<4x8xf32>, tensor<1xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT:    func.return %[[A]], %[[B]]
func.func @gamma_or_beta(%x: tensor<4x8xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %axes = ge.constant dense<-1> : tensor<1xi64>
  %two = ge.constant dense<2.0> : tensor<f32>
  %eps = ge.constant dense<1.0e-5> : tensor<f32>
  %mean = ge.reduce_mean %x, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %c = ge.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = ge.pow %c, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = ge.reduce_mean %sq, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %ve = ge.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = ge.sqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = ge.div %c, %std : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %y = ge.mul %gamma, %n : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %mean2 = ge.reduce_mean %x, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %c2 = ge.sub %x, %mean2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq2 = ge.pow %c2, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var2 = ge.reduce_mean %sq2, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %ve2 = ge.add %var2, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std2 = ge.sqrt %ve2 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n2 = ge.div %c2, %std2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %z = ge.add %n2, %beta : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %y, %z : tensor<4x8xf32>, tensor<4x8xf32>
}
// REMARK-DAG: remark: recognize-layer-norm: applied layer-norm-no-gamma on
// REMARK-DAG: remark: recognize-layer-norm: applied layer-norm-no-beta on

// -----

// epsilon is not a constant: kept, with the reason.

// CHECK-LABEL: func.func @eps_not_constant
// CHECK-NOT:     ge.layer_norm
func.func @eps_not_constant(%x: tensor<4x8xf32>, %eps: tensor<f32>) -> tensor<4x8xf32> {
  %axes = ge.constant dense<-1> : tensor<1xi64>
  %two = ge.constant dense<2.0> : tensor<f32>
  %mean = ge.reduce_mean %x, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %c = ge.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = ge.pow %c, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = ge.reduce_mean %sq, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %ve = ge.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = ge.sqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = ge.div %c, %std : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32> loc("/Div")
  func.return %n : tensor<4x8xf32>
}
// REMARK: remark: recognize-layer-norm: rejected layer-norm-bare on [/Div, {{.*}}]: epsilon is not a constant scalar

// -----

// The means are over a leading axis (not a LayerNorm); the two means reduce different axes.

// CHECK-LABEL: func.func @wrong_axes
// CHECK-NOT:     ge.layer_norm
func.func @wrong_axes(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %lead = ge.constant dense<0> : tensor<1xi64>
  %last = ge.constant dense<-1> : tensor<1xi64>
  %both = ge.constant dense<[0, 1]> : tensor<2xi64>
  %two = ge.constant dense<2.0> : tensor<f32>
  %eps = ge.constant dense<1.0e-5> : tensor<f32>
  %mean = ge.reduce_mean %x, axes = %lead : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<1x8xf32>
  %c = ge.sub %x, %mean : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %sq = ge.pow %c, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = ge.reduce_mean %sq, axes = %lead : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<1x8xf32>
  %ve = ge.add %var, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %std = ge.sqrt %ve : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %n = ge.div %c, %std : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32> loc("/Leading")
  %mean2 = ge.reduce_mean %x, axes = %last : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %c2 = ge.sub %x, %mean2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq2 = ge.pow %c2, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var2 = ge.reduce_mean %sq2, axes = %both : (tensor<4x8xf32>, tensor<2xi64>) -> tensor<1x1xf32>
  %ve2 = ge.add %var2, %eps : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %std2 = ge.sqrt %ve2 : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %n2 = ge.div %c2, %std2 : (tensor<4x8xf32>, tensor<1x1xf32>) -> tensor<4x8xf32> loc("/Different")
  func.return %n, %n2 : tensor<4x8xf32>, tensor<4x8xf32>
}
// REMARK-DAG: remark: recognize-layer-norm: rejected layer-norm-bare on [/Different, {{.*}}]: the two means reduce different axes
// REMARK-DAG: remark: recognize-layer-norm: rejected layer-norm-bare on [/Leading, {{.*}}]: the mean is not over constant trailing axes with keepdims = 1

// -----

// The variance is also a result of the graph: the decomposition must stay.

// CHECK-LABEL: func.func @escaping
// CHECK-NOT:     ge.layer_norm
func.func @escaping(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x1xf32>) {
  %axes = ge.constant dense<-1> : tensor<1xi64>
  %two = ge.constant dense<2.0> : tensor<f32>
  %eps = ge.constant dense<1.0e-5> : tensor<f32>
  %mean = ge.reduce_mean %x, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %c = ge.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = ge.pow %c, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = ge.reduce_mean %sq, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32> loc("/Var")
  %ve = ge.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = ge.sqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = ge.div %c, %std : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32> loc("/Div")
  func.return %n, %var : tensor<4x8xf32>, tensor<4x1xf32>
}
// REMARK: remark: recognize-layer-norm: rejected layer-norm-bare on [/Div, {{.*}}]: ge.reduce_mean '/Var' has a user outside the pattern (func.return)

// -----

// Not the pattern at all (no remark): the mean is of another tensor; the power is 3.

// CHECK-LABEL: func.func @not_layer_norm
// CHECK-NOT:     ge.layer_norm
func.func @not_layer_norm(%x: tensor<4x8xf32>, %other: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %axes = ge.constant dense<-1> : tensor<1xi64>
  %two = ge.constant dense<2.0> : tensor<f32>
  %three = ge.constant dense<3.0> : tensor<f32>
  %eps = ge.constant dense<1.0e-5> : tensor<f32>
  %mean = ge.reduce_mean %other, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %c = ge.sub %x, %mean : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sq = ge.pow %c, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var = ge.reduce_mean %sq, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %ve = ge.add %var, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std = ge.sqrt %ve : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n = ge.div %c, %std : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %mean2 = ge.reduce_mean %x, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %c2 = ge.sub %x, %mean2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %cube = ge.pow %c2, %three : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %var2 = ge.reduce_mean %cube, axes = %axes : (tensor<4x8xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  %ve2 = ge.add %var2, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %std2 = ge.sqrt %ve2 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n2 = ge.div %c2, %std2 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  func.return %n, %n2 : tensor<4x8xf32>, tensor<4x8xf32>
}
// REMARK-NOT: remark
