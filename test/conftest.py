"""Makes the test helper modules (e.g. test/frontend/onnx_node_cases.py) importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "frontend"))
sys.path.insert(0, str(Path(__file__).parent / "passes"))
