"""Model frontends: ONNX import and reference models built in code."""

from ge import refuse_bare_import

refuse_bare_import(__name__)
