// RUN: ge-opt %s -p cse,dce --split-input-file | filecheck %s

// A training-mode dropout draws random numbers: two of them on one input are two (not merged by
// cse) and an unused one is kept (dce). An inference dropout is the identity and merges.
// CHECK-LABEL: func.func @dropout
// CHECK:       %a, %am = ge.dropout %x, ratio = %r, training_mode = %t
// CHECK-NEXT:  %b, %bm = ge.dropout %x, ratio = %r, training_mode = %t
// CHECK-NEXT:  %u, %um = ge.dropout %x, ratio = %r, training_mode = %t
// CHECK-NEXT:  %c = ge.dropout %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:  %f, %fm = ge.dropout %x, ratio = %r, training_mode = %off
// CHECK-NEXT:  func.return %a, %b, %c, %c, %f, %f
func.func @dropout(%x: tensor<4xf32>, %t: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = ge.constant dense<0.5> : tensor<f32>
  %off = ge.constant dense<false> : tensor<i1>
  %a, %am = ge.dropout %x, ratio = %r, training_mode = %t : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  %b, %bm = ge.dropout %x, ratio = %r, training_mode = %t : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  %u, %um = ge.dropout %x, ratio = %r, training_mode = %t : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  %c = ge.dropout %x : (tensor<4xf32>) -> tensor<4xf32>
  %d = ge.dropout %x : (tensor<4xf32>) -> tensor<4xf32>
  %f, %fm = ge.dropout %x, ratio = %r, training_mode = %off : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  %g, %gm = ge.dropout %x, ratio = %r, training_mode = %off : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
  func.return %a, %b, %c, %d, %f, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A fused group has the effects of its body: two pure groups on one input merge, two holding a
// training dropout do not.
// CHECK-LABEL: func.func @groups
// CHECK:       %p = fused.group "elementwise" "elementwise_chain" (%x)
// CHECK-NOT:   fused.group "elementwise" "elementwise_chain"
// CHECK:       %r1 = fused.group "elementwise" "dropout_chain" (%x, %t)
// CHECK:       %r2 = fused.group "elementwise" "dropout_chain" (%x, %t)
// CHECK:       func.return %p, %p, %r1, %r2
func.func @groups(%x: tensor<4xf32>, %t: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %p = fused.group "elementwise" "elementwise_chain" (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %v = ge.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    fused.yield %v : tensor<4xf32>
  }
  %q = fused.group "elementwise" "elementwise_chain" (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %v = ge.relu %a : (tensor<4xf32>) -> tensor<4xf32>
    fused.yield %v : tensor<4xf32>
  }
  %r1 = fused.group "elementwise" "dropout_chain" (%x, %t) : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %m: tensor<i1>):
    %h = ge.constant dense<0.5> : tensor<f32>
    %v, %vm = ge.dropout %a, ratio = %h, training_mode = %m : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
    fused.yield %v : tensor<4xf32>
  }
  %r2 = fused.group "elementwise" "dropout_chain" (%x, %t) : (tensor<4xf32>, tensor<i1>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %m: tensor<i1>):
    %h = ge.constant dense<0.5> : tensor<f32>
    %v, %vm = ge.dropout %a, ratio = %h, training_mode = %m : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xi1>)
    fused.yield %v : tensor<4xf32>
  }
  func.return %p, %q, %r1, %r2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
