"""Kernels write into a dying operand only when nobody else can see its array."""

import numpy as np

from ge.interpreter.runner import run
from ge.tools.common import parse_module

IR = """
func.func @main(%x: tensor<4x6xf32> {ge.name = "x"}) -> (tensor<4x6xf32> {ge.name = "a"}, tensor<24xf32> {ge.name = "b"}, tensor<4x6xf32> {ge.name = "c"}, tensor<4x6xf32> {ge.name = "d"}) {
  %shape = ge.constant dense<[24]> : tensor<1xi64>
  %t = ge.sigmoid %x : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %v = ge.reshape %t, %shape : (tensor<4x6xf32>, tensor<1xi64>) -> tensor<24xf32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %b = ge.add %v, %one : (tensor<24xf32>, tensor<f32>) -> tensor<24xf32>
  %a = ge.relu %x : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = ge.add %t, %t : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %n = ge.sub %x, %x : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %d = ge.add %n, %t : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %a, %b, %c, %d : tensor<4x6xf32>, tensor<24xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}
"""


def test_inputs_views_and_shared_values_are_never_overwritten():
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    keep = x.copy()
    out = run(parse_module(IR, "<test>"), {"x": x})
    np.testing.assert_array_equal(x, keep)  # a graph input is the caller's
    t = 1 / (1 + np.exp(-keep.astype(np.float64)))
    np.testing.assert_allclose(out["a"], np.maximum(keep, 0))
    np.testing.assert_allclose(out["b"], (t + 1).reshape(-1), rtol=1e-6)  # a view of t: not written
    np.testing.assert_allclose(out["c"], 2 * t, rtol=1e-6)  # t is read by four ops
    np.testing.assert_allclose(out["d"], t, rtol=1e-6)  # %n dies at %d: written in place
