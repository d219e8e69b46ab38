"""ge-run's training steps: the state a step carries to the next, and the state files.

A training step (made by `apply-optimizer`) reads its parameters and optimizer slots with
`ge.variable "key"` and returns their new values as outputs marked `{ge.state = "key"}`: GE's
Assign at the end of the graph. Between steps the runtime writes each marked output back into
its variable, so state is the variables' values keyed like the weights sidecar; `ge.variable`
reads from the same mapping as `#ge.weight` constants. `--save-state` writes that state as
safetensors after the last step; `--load-state` starts from a saved one instead of the sidecar.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType

from ge.frontend.sidecar import SidecarError, WeightStore, save
from ge.ge_dialects.ge.types import numpy_dtype, shape_of, type_name
from ge.interpreter.runner import main_function, output_names
from ge.tools.common import UserError

STATE_ATTR = "ge.state"


def state_outputs(module: ModuleOp) -> dict[str, tuple[str, TensorType]]:
    """Output name -> (state key, type) of each output a step writes back into a variable."""
    fn = main_function(module)
    marked: dict[str, tuple[str, TensorType]] = {}
    if fn.res_attrs is None:
        return marked
    for name, attrs, t in zip(output_names(fn), fn.res_attrs.data, fn.function_type.outputs.data):
        key = attrs.data.get(STATE_ATTR)
        if isinstance(key, StringAttr) and isinstance(t, TensorType):
            marked[name] = (key.data, t)
    return marked


def require_state(program: str, marked: Mapping[str, tuple[str, TensorType]], option: str) -> None:
    if not marked:
        raise UserError(
            f"{program}: {option} needs a training step (outputs marked ge.state, as apply-optimizer makes them)"
        )


def load_state(path: str, marked: Mapping[str, tuple[str, TensorType]]) -> dict[str, np.ndarray]:
    """The state file's arrays, which must be exactly the step's state: every key, with its type."""
    try:
        store = WeightStore(Path(path))
    except SidecarError as e:
        raise UserError(f"{path}: {e}") from None
    want = {key: t for key, t in marked.values()}
    for key in store:
        if key not in want:
            raise UserError(f"{path}: state '{key}' is not a variable the step writes")
    state: dict[str, np.ndarray] = {}
    for key, t in want.items():
        if key not in store:
            raise UserError(f"{path}: the file has no state '{key}'")
        dtype, shape = store.spec(key)
        expected = (np.dtype(numpy_dtype(t.element_type)), tuple(shape_of(t)))
        if (dtype, tuple(shape)) != expected:
            raise UserError(
                f"{path}: state '{key}' is {dtype}{list(shape)}, the step's variable is {type_name(t.element_type)}"
                f"{list(shape_of(t))}"
            )
        state[key] = np.array(store[key])
    return state


def state_writer(state: Mapping[str, np.ndarray]) -> Callable[[str], None]:
    """Writes the state as safetensors (for tools/outputs.py: written only when the whole job succeeds)."""
    arrays = dict(state)
    return lambda path: save(path, arrays)


def run_steps(
    run_step: Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]],
    weights: Mapping[str, np.ndarray],
    marked: Mapping[str, tuple[str, TensorType]],
    steps: int,
    on_step: Callable[[int, dict[str, np.ndarray]], None],
    initial: Mapping[str, np.ndarray] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Runs `steps` steps, each reading the state the previous one wrote (the first reads `initial`,
    else the sidecar's values); returns the last step's outputs and the final state."""
    state = dict(initial) if initial is not None else {}
    outputs: dict[str, np.ndarray] = {}
    for step in range(1, steps + 1):
        outputs = run_step(_Overlay(weights, state))
        for name, (key, _) in marked.items():
            state[key] = outputs[name]
        on_step(step, outputs)
    return outputs, state


class _Overlay(Mapping[str, np.ndarray]):
    """The weights with the current state over them (the sidecar itself is never changed)."""

    def __init__(self, base: Mapping[str, np.ndarray], state: Mapping[str, np.ndarray]):
        self.base, self.state = base, state

    def __getitem__(self, key: str) -> np.ndarray:
        return self.state[key] if key in self.state else self.base[key]

    def __iter__(self):
        yield from self.state
        yield from (k for k in self.base if k not in self.state)

    def __len__(self) -> int:
        return len(self.state) + sum(1 for k in self.base if k not in self.state)

    def __contains__(self, key: object) -> bool:
        return key in self.state or key in self.base


def scalar_line(label: str, outputs: Mapping[str, np.ndarray]) -> str:
    """`step 3: loss 0.4127` — the scalar outputs of a step (the loss curve) or of a replica."""
    values = [f"{name} {float(v.reshape(-1)[0]):.6g}" for name, v in outputs.items() if v.size == 1]
    return f"{label}: " + ("  ".join(values) if values else "(no scalar outputs)")
