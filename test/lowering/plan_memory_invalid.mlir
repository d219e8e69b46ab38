// Issue 8: plan-memory on a module not lowered to tasks used to record pool 0.
// RUN: not ge-opt %s -p plan-memory 2>&1 | filecheck %s --check-prefix=UNLOWERED
// UNLOWERED: ge-opt: error: plan-memory: @dynamic has 'ge.relu' outside a task.kernel (run lower-to-tasks first)

// Issue 9: a dynamic shape used to be planned as if its unknown dimensions were 1.
// RUN: not ge-opt %s -p lower-to-tasks,plan-memory 2>&1 | filecheck %s --check-prefix=DYNAMIC
// DYNAMIC: ge-opt: error: plan-memory: @dynamic: task '/a' result 0 has an unknown size (tensor<?x1024xf32>); a static memory plan needs static shapes
func.func @dynamic(%x: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
  %0 = ge.relu %x : (tensor<?x1024xf32>) -> tensor<?x1024xf32> loc("/a")
  %1 = ge.sigmoid %0 : (tensor<?x1024xf32>) -> tensor<?x1024xf32> loc("/b")
  func.return %1 : tensor<?x1024xf32>
}
