// A model that does not fit the device is refused with one line giving the sizes.
// RUN: not ge-opt %s -p lower-to-tasks,plan-memory 2>&1 | filecheck %s
// CHECK: ge-opt: error: plan-memory: @huge needs 96.00 GiB of device memory (activations 32.00 GiB, weights 0.00 GiB, inputs/outputs 64.00 GiB) but ascend910b has 64.00 GiB HBM
func.func @huge(%x: tensor<8192x8192x128xf32>) -> tensor<8192x8192x128xf32> {
  %0 = ge.relu %x : (tensor<8192x8192x128xf32>) -> tensor<8192x8192x128xf32>
  %1 = ge.sigmoid %0 : (tensor<8192x8192x128xf32>) -> tensor<8192x8192x128xf32>
  func.return %1 : tensor<8192x8192x128xf32>
}
