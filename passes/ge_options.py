"""GE's option names, as `ge-opt --ge-option NAME=VALUE` accepts them.

Each option sets a field of the passes that implement it (a value, never pipeline text);
`ge.socVersion` sets the target of every pass that has one and must name a known target. Alone
(no `-p`), the options run `ge-optimize`.

    ge-opt m.mlir --ge-option ge.oo.level=O1 --ge-option ge.exec.precision_mode=force_fp16
    ge-opt o3.mlir -p 'lower-to-tasks,plan-memory,lower-to-streams' \\
        --ge-option ge.exec.disableReuseMemory=1 --ge-option ge.enableSingleStream=true
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields, replace

from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.target import TargetError, check_target_name


def level_value(text: str) -> int:
    """`3`, `O3` or `o3` -> 3."""
    value = text[1:] if text[:1] in "Oo" else text
    if value not in ("0", "1", "2", "3"):
        raise DiagnosticException(f"ge-optimize: level '{text}' is not one of 0, 1, 2, 3 (or O0..O3)")
    return int(value)


def _flag(text: str) -> bool:
    if text.lower() in ("1", "true"):
        return True
    if text.lower() in ("0", "false"):
        return False
    raise ValueError(f"'{text}' is not 0, 1, true or false")


def _count(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"'{text}' is not a non-negative integer")
    return int(text)


def _target(text: str) -> str:
    try:
        return check_target_name(text.lower())
    except TargetError as e:
        raise ValueError(str(e)) from None


ANY_PASS = "*"

#: GE option -> (pass it applies to, field, how to read the value).
GE_OPTIONS: dict[str, tuple[str, str, Callable[[str], object]]] = {
    "ge.oo.level": ("ge-optimize", "level", level_value),
    "ge.exec.precision_mode": ("ge-optimize", "precision_mode", str),
    "precision_mode": ("ge-optimize", "precision_mode", str),
    "ge.socVersion": (ANY_PASS, "target", _target),
    "soc_version": (ANY_PASS, "target", _target),
    "ge.exec.disableReuseMemory": ("plan-memory", "reuse", lambda v: not _flag(v)),
    "ge.enableSingleStream": ("lower-to-streams", "single_stream", _flag),
    "ge.streamNum": ("lower-to-streams", "streams", _count),
    "ge.hcomParallel": ("lower-to-streams", "hcom_parallel", _flag),
    "ge.fusionTensorSize": ("data-parallel", "fusion_tensor_size", _count),
    "is_input_adjust_hw_layout": ("ge-optimize", "adjust_input_hw_layout", _flag),
    "ge.dynamicDims": ("ge-optimize", "dynamic_dims", str),
    "dynamic_dims": ("ge-optimize", "dynamic_dims", str),
    "ge.dynamicBatchSize": ("ge-optimize", "dynamic_batch_size", str),
    "dynamic_batch_size": ("ge-optimize", "dynamic_batch_size", str),
    "ge.dynamicImageSize": ("ge-optimize", "dynamic_image_size", str),
    "dynamic_image_size": ("ge-optimize", "dynamic_image_size", str),
    "ge.compileHybridMode": ("ge-optimize", "compile_hybrid_mode", _flag),
    "ge.inputShape": ("ge-optimize", "input_shape", str),
    "ge.exec.static_model_ops_lower_limit": ("partition-dynamic", "static_model_ops_lower_limit", _count),
    "input_shape": ("ge-optimize", "input_shape", str),
    "is_output_adjust_hw_layout": ("ge-optimize", "adjust_output_hw_layout", _flag),
}


def _default_pipeline() -> ModulePass:
    """ge-optimize with its defaults, imported only when GE options run alone."""
    from ge.passes.ge_optimize import GeOptimizePass

    return GeOptimizePass()


def _takes(p: ModulePass, pass_name: str, field: str) -> bool:
    if pass_name != ANY_PASS and p.name != pass_name:
        return False
    return any(f.name == field for f in fields(p))


def apply_ge_options(passes: Sequence[ModulePass], options: Sequence[str]) -> tuple[ModulePass, ...]:
    """The pipeline with `NAME=VALUE` GE options applied (ge-optimize alone when it is empty)."""
    if not options:
        return tuple(passes)
    passes = list(passes) or [_default_pipeline()]
    for option in options:
        key, sep, text = option.partition("=")
        if not sep or key not in GE_OPTIONS:
            raise DiagnosticException(
                f"--ge-option '{option}': expected NAME=VALUE with NAME one of {', '.join(GE_OPTIONS)}"
            )
        pass_name, field, read = GE_OPTIONS[key]
        try:
            value = read(text)
        except ValueError as e:
            raise DiagnosticException(f"--ge-option {key}: {e}") from None
        hits = [i for i, p in enumerate(passes) if _takes(p, pass_name, field)]
        if not hits:
            wanted = pass_name if pass_name != ANY_PASS else "a pass with a target"
            raise DiagnosticException(f"--ge-option {key} applies to {wanted}, which the pipeline does not run")
        for i in hits:
            passes[i] = replace(passes[i], **{field: value})
    return tuple(passes)
