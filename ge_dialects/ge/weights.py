"""The weights a ge module's constants refer to, for passes that read or make constants.

A module's `#ge.weight<"key">` constants name arrays in its sidecar. Passes such as Conv+BN folding,
constant folding or TransData folding read those arrays and make new ones; the new arrays live here,
beside the module, until a tool writes them out (`ge-opt -o` writes a complete sidecar). Tools
attach the sidecar when they read a module; a module without one sees only its inline constants.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator, Mapping

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.optimizer import VariableOp
from ge.ge_dialects.ge.types import element_type_of, tensor


class ModuleWeights(Mapping[str, np.ndarray]):
    """The sidecar's arrays (read lazily) plus the ones passes added; added ones win."""

    def __init__(self, base: Mapping[str, np.ndarray] | None = None):
        self.base: Mapping[str, np.ndarray] = base if base is not None else {}
        self.added: dict[str, np.ndarray] = {}

    def __getitem__(self, key: str) -> np.ndarray:
        if key in self.added:
            return self.added[key]
        return np.asarray(self.base[key])

    def __iter__(self) -> Iterator[str]:
        yield from self.added
        yield from (k for k in self.base if k not in self.added)

    def __len__(self) -> int:
        return len(set(self.added) | set(self.base))

    def __contains__(self, key: object) -> bool:
        return key in self.added or key in self.base

    def fresh_key(self, hint: str, taken: frozenset[str] = frozenset()) -> str:
        """The key `add` would store under: `hint` made a plain name, numbered past the keys in
        use (and those in `taken`)."""
        stem = re.sub(r"[^A-Za-z0-9_.:/-]+", "_", hint) or "w"
        key, n = stem, 1
        while key in self or key in taken:
            n += 1
            key = f"{stem}.{n}"
        return key

    def add(self, hint: str, array: np.ndarray) -> str:
        """Stores `array` under a new key derived from `hint` and returns the key."""
        key = self.fresh_key(hint)
        self.added[key] = np.require(array, requirements="C")  # ascontiguousarray makes a 0-d array 1-d
        return key


_WEIGHTS: weakref.WeakKeyDictionary[ModuleOp, ModuleWeights] = weakref.WeakKeyDictionary()


def attach_weights(module: ModuleOp, weights: Mapping[str, np.ndarray] | None) -> ModuleWeights:
    """Makes `weights` (a sidecar store or a dict) the arrays of `module`'s weight constants."""
    table = weights if isinstance(weights, ModuleWeights) else ModuleWeights(weights)
    _WEIGHTS[module] = table
    return table


def weights_of(module: ModuleOp) -> ModuleWeights:
    """The module's weights (an empty table when none were attached)."""
    table = _WEIGHTS.get(module)
    if table is None:
        table = attach_weights(module, None)
    return table


def module_of(op: Operation) -> ModuleOp:
    top, parent = op, op.parent_op()
    while parent is not None:
        top, parent = parent, parent.parent_op()
    if not isinstance(top, ModuleOp):
        raise ValueError(f"{op.name} is not inside a module")
    return top


def constant_array(value: SSAValue | Operation) -> np.ndarray | None:
    """The value of a `ge.constant` (inline or in the weights), else None."""
    op = value if isinstance(value, Operation) else value.owner
    if not isinstance(op, ConstantOp):
        return None
    inline = op.inline_value()
    if inline is not None:
        return inline
    table = weights_of(module_of(op))
    key = op.weight_key
    return table[key] if key is not None and key in table else None


def make_constant(
    module: ModuleOp, array: np.ndarray, hint: str, inline_limit: int | None = None, parameter: str | None = None
) -> ConstantOp:
    """A new (unattached) `ge.constant` holding `array`: inline when small, else a new weight.

    With `parameter`, the constant is the trainable parameter of that key (a float array), stored
    under the key itself when large: the key must not be in the weights yet."""
    array = np.asarray(array)
    limit = ConstantOp.INLINE_LIMIT if inline_limit is None else inline_limit
    if array.size <= limit:
        return ConstantOp.inline(array, parameter=parameter)
    table = weights_of(module)
    t = tensor(element_type_of(array.dtype), array.shape)
    if parameter is None:
        return ConstantOp.weight(table.add(hint, array), t)
    if parameter in table:
        raise ValueError(f"the weights already hold '{parameter}', the key of a new parameter")
    table.added[parameter] = np.require(array, requirements="C")
    return ConstantOp.weight(parameter, t, parameter=True)


def parameter_keys(module: ModuleOp) -> set[str]:
    """The keys of the module's parameter constants."""
    return {k for op in module.walk() if isinstance(op, ConstantOp) and (k := op.parameter_key) is not None}


def referenced_keys(module: ModuleOp) -> list[str]:
    """The weight keys the module's constants and variables (their initial state) refer to, each
    once, in program order."""
    keys: dict[str, None] = {}
    for op in module.walk():
        if isinstance(op, ConstantOp) and op.weight_key is not None:
            keys[op.weight_key] = None
        elif isinstance(op, VariableOp):
            keys[op.state_key] = None
    return list(keys)


def referenced_weights(module: ModuleOp) -> dict[str, np.ndarray]:
    """Every array the module's weight constants refer to, by key (what a sidecar must hold)."""
    table = weights_of(module)
    return {key: table[key] for key in referenced_keys(module)}


def clone_with_weights(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with its own weights table over the same arrays (passes on the copy add
    weights to the copy only)."""
    clone = module.clone()
    table = weights_of(module)
    copy = attach_weights(clone, ModuleWeights(table.base))
    copy.added.update(table.added)
    return clone
