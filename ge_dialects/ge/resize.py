"""Resize (ONNX Resize, opsets 13-19 semantics): nearest, linear and cubic interpolation."""

RESIZE_OPS: list = []
