"""A plugin for the lit tests of custom ops in layouts and fused groups
(test/passes/layout/assign_formats_custom.mlir, test/passes/fusion/fuse_ops_custom.mlir):
com.test.Softsign(X) = X / (1 + |X|), declared elementwise in both storage formats; SoftsignND,
elementwise in ND only; Opaque, the same kernel undeclared."""

import numpy as np

import ge


def softsign(inputs, attrs):
    (x,) = inputs
    return [x / (x.dtype.type(1) + np.abs(x))]


def same(inputs, attrs):
    return [ge.TensorSpec(inputs[0].shape, inputs[0].dtype)]


def work(inputs, outputs, attrs):
    return 3 * outputs[0].size  # abs, add, divide


common = dict(domain="com.test", inputs=["X"], outputs=["Y"], shape=same, kernel=softsign, engine="vector", work=work)
ge.register_op("Softsign", fusion="elementwise", formats=("NC1HWC0", "FRACTAL_NZ"), **common)
ge.register_op("SoftsignND", fusion="elementwise", **common)
ge.register_op("Opaque", **common)
