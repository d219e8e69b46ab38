// The module's ge.target holds a #ge.target, not a string: a pass that reads it refuses other kinds.
// RUN: not ge-opt %s -p lower-to-tasks 2>&1 | filecheck %s
// CHECK: ge-opt: error: module attribute ge.target must be a #ge.target<"name">, not "ascend910"
builtin.module attributes {ge.target = "ascend910"} {
}
