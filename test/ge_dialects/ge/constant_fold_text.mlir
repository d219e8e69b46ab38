// A folded 0/0 and 1/0 print as bit patterns that read back as NaN and +inf (not 4.29e9 and 2.14e9).
// RUN: ge-opt %s -p fold-constants | ge-opt | filecheck %s

func.func @main() -> tensor<2xf32> {
  // CHECK: ge.constant dense<[0xFFC00000, 0x7F800000]> : tensor<2xf32>
  %a = ge.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %b = ge.constant dense<[0.0, 0.0]> : tensor<2xf32>
  %0 = ge.div %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
