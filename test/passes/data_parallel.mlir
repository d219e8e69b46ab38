// data-parallel after autodiff: the inputs with the batch dim take one replica's rows, the
// backward is rebuilt at that batch, every gradient but the local ones goes through one fused
// AllReduce (sum) per bucket, right after its last gradient, then is scaled by 1/devices.
// RUN: ge-opt %s -p 'autodiff,data-parallel{devices=4 bucket_mib=1}' | filecheck %s
// Two buckets of one gradient each (idx:0 closes the first after the first gradient made, w2's).
// RUN: ge-opt %s -p 'autodiff,data-parallel{devices=2 split="idx:0"}' | filecheck %s --check-prefix=IDX
// A local parameter keeps the replica's own gradient: no collective reads it.
// RUN: ge-opt %s -p 'autodiff,data-parallel{devices=2 local="w1"}' | filecheck %s --check-prefix=LOCAL
// GE's ge.fusionTensorSize caps a bucket: at 64 bytes no two gradients share one.
// RUN: ge-opt %s -p 'autodiff,data-parallel{devices=2}' --ge-option ge.fusionTensorSize=64 | filecheck %s --check-prefix=CAP
// CAP-COUNT-2: ge.hcom_all_reduce %{{[^,]*}} {
// CAP-NOT: ge.hcom_all_reduce
// One device: nothing to split or reduce.
// RUN: ge-opt %s -p 'autodiff,data-parallel{devices=1}' | filecheck %s --check-prefix=ONE

// CHECK: func.func @main(%x: tensor<2x3xf32> {ge.name = "x", ge.replica_split = 0 : i64}, %{{.*}}: tensor<3xf32> {ge.name = "s"})
// CHECK-SAME: attributes {ge.replicas = 4 : i64}
// CHECK-NOT: tensor<8x
// CHECK: %[[R0:.*]], %[[R1:.*]] = ge.hcom_all_reduce %{{.*}}, %{{.*}} {reduction = "sum", rank_size = 4 : i64, group = "hccl_world_group", fusion = 1 : i64, fusion_id = 0 : i64} : (tensor<4x5xf32>, tensor<3x4xf32>) -> (tensor<4x5xf32>, tensor<3x4xf32>) loc("/data_parallel/bucket.0")
// CHECK: ge.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: ge.mul %[[R0]], %{{.*}} : (tensor<4x5xf32>, tensor<f32>) -> tensor<4x5xf32> loc("/data_parallel/bucket.0/mean")
// CHECK-NOT: ge.hcom_all_reduce

// IDX: ge.hcom_all_reduce %{{.*}} {{.*}}fusion_id = 0 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32>
// IDX: ge.hcom_all_reduce %{{.*}} {{.*}}fusion_id = 1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>

// LOCAL: ge.hcom_all_reduce %{{.*}} {{.*}} : (tensor<4x5xf32>) -> tensor<4x5xf32>
// LOCAL-NOT: ge.hcom_all_reduce

// ONE-NOT: ge.replicas
// ONE-NOT: ge.hcom_all_reduce
// ONE: func.func @main(%{{.*}}: tensor<8x3xf32>

func.func @main(%x: tensor<8x3xf32> {ge.name = "x"}, %s: tensor<3xf32> {ge.name = "s"}) -> (tensor<8x5xf32> {ge.name = "y"}, tensor<f32> {ge.name = "loss"}) {
  %w1 = ge.constant parameter<"w1"> dense<0.5> : tensor<3x4xf32>
  %w2 = ge.constant parameter<"w2"> dense<0.25> : tensor<4x5xf32>
  %xs = ge.mul %x, %s : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  %h = ge.matmul %xs, %w1 : (tensor<8x3xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
  %a = ge.tanh %h : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = ge.matmul %a, %w2 : (tensor<8x4xf32>, tensor<4x5xf32>) -> tensor<8x5xf32>
  %sq = ge.mul %y, %y : (tensor<8x5xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
  %loss = ge.reduce_mean %sq {keepdims = 0 : i64} : (tensor<8x5xf32>) -> tensor<f32>
  func.return %y, %loss : tensor<8x5xf32>, tensor<f32>
}
