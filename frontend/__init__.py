"""Model frontends: ONNX import and reference models built in code."""
