// RUN: ge-opt %s --load-op-library %S/../../api/custom_ops/fusion_ops.py -p fuse-ops --split-input-file --strip-debuginfo | filecheck %s
// RUN: ge-opt %s --load-op-library %S/../../api/custom_ops/fusion_ops.py -p fuse-ops --split-input-file --remarks -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK

// A plugin's op declared fusion="elementwise" (test/api/custom_ops/fusion_ops.py: Softsign,
// SoftsignND) follows where elementwise ops follow: a Cube op's epilogue, an elementwise chain
// the relu anchors (a custom op never anchors), a reduction's tail.

// CHECK-LABEL: func.func @epilogue_and_chain
// CHECK:         fused.group "cube+elementwise" "cube_epilogue"
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %m = ge.matmul
// CHECK-NEXT:      ge.custom %m {{.*}}op_type = "Softsign"
// CHECK-NEXT:      fused.yield
// CHECK:         fused.group "elementwise" "elementwise_chain"
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %r = ge.relu
// CHECK-NEXT:      ge.custom %r {{.*}}op_type = "SoftsignND"
// CHECK-NEXT:      fused.yield
// REMARK: applied cube_epilogue on [/mm, /ss]
// REMARK: applied elementwise_chain on [/relu, /ss2]
func.func @epilogue_and_chain(%a: tensor<32x64xf32>, %b: tensor<64x64xf32>) -> tensor<32x64xf32> {
  %m = ge.matmul %a, %b : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32> loc("/mm")
  %s = ge.custom %m {library = "fusion_ops", domain = "com.test", op_type = "Softsign", attrs = {}} : (tensor<32x64xf32>) -> tensor<32x64xf32> loc("/ss")
  %r = ge.relu %s : (tensor<32x64xf32>) -> tensor<32x64xf32> loc("/relu")
  %t = ge.custom %r {library = "fusion_ops", domain = "com.test", op_type = "SoftsignND", attrs = {}} : (tensor<32x64xf32>) -> tensor<32x64xf32> loc("/ss2")
  func.return %t : tensor<32x64xf32>
}

// -----

// CHECK-LABEL: func.func @reduction_tail
// CHECK:         fused.group "reduce+elementwise" "reduce_elementwise"
// REMARK: applied reduce_elementwise on [/softmax, /ss]
func.func @reduction_tail(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %p = ge.softmax %x {axis = -1 : i64} : (tensor<32x64xf32>) -> tensor<32x64xf32> loc("/softmax")
  %s = ge.custom %p {library = "fusion_ops", domain = "com.test", op_type = "Softsign", attrs = {}} : (tensor<32x64xf32>) -> tensor<32x64xf32> loc("/ss")
  func.return %s : tensor<32x64xf32>
}

// -----

// Negative: Opaque declares no fusion: nothing is fused (the relu alone is no group).

// CHECK-LABEL: func.func @undeclared
// CHECK-NOT:     fused.group
// CHECK:         func.return
// REMARK-NOT: applied {{.*}} on [/mm, /ss]
// REMARK-NOT: applied {{.*}} on [/relu, /ss2]
func.func @undeclared(%a: tensor<32x64xf32>, %b: tensor<64x64xf32>) -> tensor<32x64xf32> {
  %m = ge.matmul %a, %b : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32> loc("/mm")
  %s = ge.custom %m {library = "fusion_ops", domain = "com.test", op_type = "Opaque", attrs = {}} : (tensor<32x64xf32>) -> tensor<32x64xf32> loc("/ss")
  %r = ge.relu %s : (tensor<32x64xf32>) -> tensor<32x64xf32> loc("/relu")
  %t = ge.custom %r {library = "fusion_ops", domain = "com.test", op_type = "Opaque", attrs = {}} : (tensor<32x64xf32>) -> tensor<32x64xf32> loc("/ss2")
  func.return %t : tensor<32x64xf32>
}
