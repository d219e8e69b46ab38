// #ge.target names one of the known targets (target/*.toml): anything else is refused at parse time.
// RUN: not ge-opt %s 2>&1 | filecheck %s
// CHECK: unknown target 'ascend999' (targets: ascend910, ascend910b)
// CHECK-NOT: Traceback
builtin.module attributes {ge.target = #ge.target<"ascend999">} {
}
