// Constants print bit-exact: the printed text reads back to the same bits and prints again unchanged.
// RUN: ge-opt %s | filecheck %s
// RUN: ge-opt %s | ge-opt | filecheck %s

func.func @special_floats() -> (tensor<6xf32>, tensor<3xf16>, tensor<3xbf16>, tensor<2xf64>) {
  // Hex literals in float tensors are bit patterns (a NaN with a payload, +-inf), not integers.
  // CHECK: ge.constant dense<[0x7FC00001, 0x7F800000, 0xFF800000, -0.000000e+00, 1.401298e-45, 1.000000e+00]> : tensor<6xf32>
  %0 = ge.constant dense<[0x7FC00001, 0x7F800000, 0xFF800000, -0.0, 1.401298e-45, 1.0]> : tensor<6xf32>
  // CHECK: ge.constant dense<[0x7E00, 0xFC00, 5.960464e-08]> : tensor<3xf16>
  %1 = ge.constant dense<[0x7E00, 0xFC00, 0x0001]> : tensor<3xf16>
  // CHECK: ge.constant dense<[0xFFC1, -0.000000e+00, 1.000977e-01]> : tensor<3xbf16>
  %2 = ge.constant dense<[0xFFC1, 0x8000, 0.1]> : tensor<3xbf16>
  // Finite values get the digits they need (7 digits would print 0.1 + 1 ulp as 1.000000e-01).
  // CHECK: ge.constant dense<[0.10000000000000002, 4.940656e-324]> : tensor<2xf64>
  %3 = ge.constant dense<[0x3FB999999999999B, 0x0000000000000001]> : tensor<2xf64>
  func.return %0, %1, %2, %3 : tensor<6xf32>, tensor<3xf16>, tensor<3xbf16>, tensor<2xf64>
}

func.func @narrow_floats() -> (tensor<3xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2xf4E2M1FN>, tensor<2xf8E8M0FNU>) {
  // CHECK: ge.constant dense<[0x7F, 0xFF, -4.480000e+02]> : tensor<3xf8E4M3FN>
  %0 = ge.constant dense<[0x7F, 0xFF, -448.0]> : tensor<3xf8E4M3FN>
  // CHECK: ge.constant dense<[0x7C, 0xFE]> : tensor<2xf8E5M2>
  %1 = ge.constant dense<[0x7C, 0xFE]> : tensor<2xf8E5M2>
  // CHECK: ge.constant dense<[-6.000000e+00, -0.000000e+00]> : tensor<2xf4E2M1FN>
  %2 = ge.constant dense<[0xF, 0x8]> : tensor<2xf4E2M1FN>
  // CHECK: ge.constant dense<[0xFF, 1.000000e+00]> : tensor<2xf8E8M0FNU>
  %3 = ge.constant dense<[0xFF, 1.0]> : tensor<2xf8E8M0FNU>
  func.return %0, %1, %2, %3 : tensor<3xf8E4M3FN>, tensor<2xf8E5M2>, tensor<2xf4E2M1FN>, tensor<2xf8E8M0FNU>
}

func.func @splats() -> (tensor<2xf32>, tensor<50000000xf32>, tensor<3xi8>, tensor<3xi4>) {
  // Zero and negative zero differ: not a splat.
  // CHECK: ge.constant dense<[0.000000e+00, -0.000000e+00]> : tensor<2xf32>
  %0 = ge.constant dense<[0.0, -0.0]> : tensor<2xf32>
  // A splat stays one element in memory, however large its type.
  // CHECK: ge.constant dense<1.000000e+00> : tensor<50000000xf32>
  %1 = ge.constant dense<1.0> : tensor<50000000xf32>
  // Signless literals past the signed range are their two's complement.
  // CHECK: ge.constant dense<[-1, 127, -128]> : tensor<3xi8>
  %2 = ge.constant dense<[255, 127, -128]> : tensor<3xi8>
  // CHECK: ge.constant dense<[-8, 7, -1]> : tensor<3xi4>
  %3 = ge.constant dense<[-8, 7, 15]> : tensor<3xi4>
  func.return %0, %1, %2, %3 : tensor<2xf32>, tensor<50000000xf32>, tensor<3xi8>, tensor<3xi4>
}

// Names outside ASCII read back as the same names.
// CHECK: func.func @names(%x: tensor<2xf32> {ge.name = "x\C3\BC"}) -> (tensor<2xf32> {ge.name = "y\E5\B1\82"})
func.func @names(%x: tensor<2xf32> {ge.name = "xü"}) -> (tensor<2xf32> {ge.name = "y\E5\B1\82"}) {
  // CHECK: ge.relu %x : (tensor<2xf32>) -> tensor<2xf32> loc("/\E5\B1\82/relu")
  %0 = ge.relu %x : (tensor<2xf32>) -> tensor<2xf32> loc("/层/relu")
  func.return %0 : tensor<2xf32>
}
