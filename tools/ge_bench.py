"""ge-bench: what the compiler buys on the modeled Ascend targets, and what the launch mode buys.

    ge-bench [--models "resnet50 b1,bert_base"] [--targets ascend910b] [--sensitivity] [--markdown out.md]
    ge-bench --training [--models "resnet50 b32,bert_large b32"] [--no-max-batch]
    ge-bench --data-parallel [--models "resnet50 b256"] [--targets ascend910] [--no-sweep]
    ge-bench --deployment [--targets ascend910b] [--no-max-batch]
    ge-bench --int8 [--models "resnet50 b1,bert_base"] [--targets ascend910,ascend910b]

Tables: O0 per-op launch against O3 whole-graph sink (the headline); the same speedup split into
the compiler's share and the launch mode's share (O0 and O3, each per-op and graph-sunk); with
--sensitivity, the split again with the two assumed constants of the target file (`[host]
launch_s`, `[overheads] task_device_s`) at half, as given and double; the stream-count sweep.
With --training, instead: the modeled training step (tools/ge_bench_training.py) of ResNet-50 and
BERT-Large per target: step time, samples/s, utilization, peak memory and the largest batch.
With --data-parallel: the data-parallel step of ResNet-50 (batch 256 per chip) and BERT-Large (96)
on 1, 2, 4, 8 and 16 chips per target: step time, samples/s, scaling efficiency, the collectives'
time and the share of it hidden; the bucket sweep at 16 chips and the step at half and double each
assumed [cluster] constant (tools/ge_bench_data_parallel.py).
With --deployment: ResNet-50 before (imported, per-op launch) and after (O3, graph sink), metric by
metric with the ratio (tools/ge_bench_deployment.py).
With --int8: each model quantized by onnxruntime's quantize_static against itself in f16, O3,
graph sink: kernels, Cube time and latency with their ratios (tools/ge_bench_int8.py).
"""

from __future__ import annotations

import argparse

from ge.target import TargetError, load_target
from ge.tools.common import UserError, reported_errors, write_atomic
from ge.tools.ge_bench_data_parallel import DP_MODELS, SWEEP_DEVICES, bucket_rows, scaling_rows
from ge.tools.ge_bench_data_parallel import sensitivity_rows as cluster_sensitivity_rows
from ge.tools.ge_bench_deployment import DEPLOYMENT_TARGET, deployment_rows
from ge.tools.ge_bench_int8 import INT8_MODELS, int8_rows
from ge.tools.ge_bench_measure import (
    CONSTANT_SOURCES,
    MODELS,
    SENSITIVITY_MODELS,
    TARGETS,
    Compiled,
    compile_both,
    markdown,
    row,
    sensitivity_rows,
    split_row,
    stream_sweep,
)
from ge.tools.ge_bench_training import DEFAULT_PRECISION, TRAINING_MODELS, training_row


def model_list(text: str, option: str, known=MODELS) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if n not in known:
            raise UserError(f"{option}: unknown model '{n}' (models: {', '.join(known)})")
    return names


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ge-bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--models", help="comma-separated (default: all of the table's)")
    p.add_argument("--targets", default=",".join(TARGETS))
    p.add_argument(
        "--precision",
        help=(
            "precision_mode for both levels (default force_fp16, ATC's default; "
            f"with --training and --data-parallel {DEFAULT_PRECISION})"
        ),
    )
    p.add_argument(
        "--training",
        action="store_true",
        help="the training-step table (ResNet-50 b32/b256, BERT-Large b32/b96) instead of the inference ones",
    )
    p.add_argument(
        "--data-parallel",
        action="store_true",
        help="the data-parallel step on 1 to 16 chips, the bucket sweep and the [cluster] sensitivity instead",
    )
    p.add_argument("--no-sweep", action="store_true", help="with --data-parallel: only the scaling table")
    p.add_argument(
        "--deployment",
        action="store_true",
        help="the before/after table of ResNet-50 batch 1 (imported graph per-op against O3 graph sink) instead",
    )
    p.add_argument(
        "--int8",
        action="store_true",
        help="int8 (quantize_static, QDQ) against f16 per model and target instead of the inference tables",
    )
    p.add_argument("--sweep", default="bert_base,resnet50 b32", help="models for the stream-count sweep ('' to skip)")
    p.add_argument("--no-max-batch", action="store_true", help="skip the largest-batch search (slow)")
    p.add_argument(
        "--sensitivity",
        action="store_true",
        help="add the table of speedups with launch_s and task_device_s at half, as given and double",
    )
    p.add_argument(
        "--sensitivity-models",
        default=",".join(SENSITIVITY_MODELS),
        help="models of the sensitivity table (default %(default)s)",
    )
    p.add_argument("--markdown", metavar="FILE", help="also write the tables as markdown")
    return p


def target_list(text: str) -> list[str]:
    targets = [t.strip() for t in text.split(",") if t.strip()]
    if not targets:
        raise UserError("--targets: no target given")
    for t in targets:
        try:
            load_target(t)
        except TargetError as e:
            raise UserError(f"--targets: {e}") from None
    return targets


def training_sections(args: argparse.Namespace) -> list[tuple[str, str]]:
    names = model_list(args.models or ",".join(TRAINING_MODELS), "--models", TRAINING_MODELS)
    targets = target_list(args.targets)
    rows = [training_row(n, t, args.precision, not args.no_max_batch) for n in names for t in targets]
    return [(f"Training step (momentum, {args.precision}, O3, graph sink)", markdown(rows))]


def data_parallel_sections(args: argparse.Namespace) -> list[tuple[str, str]]:
    names = model_list(args.models or ",".join(DP_MODELS), "--models", TRAINING_MODELS)
    targets = target_list(args.targets)
    out = []
    for t in targets:
        rows = [r for n in names for r in scaling_rows(n, t, args.precision)]
        out.append((f"Data-parallel step on {t} (momentum, {args.precision}, O3, graph sink)", markdown(rows)))
        ones = {r["model"]: float(r["samples/s"]) for r in rows if r["chips"] == "1" and "samples/s" in r}
        fits = {r["model"] for r in rows if r["chips"] == str(SWEEP_DEVICES) and "samples/s" in r}
        if args.no_sweep:
            continue
        sweep, sens = [], []
        for n in [n for n in names if n in fits]:  # a step that does not fit: its scaling rows say so
            rows_n, default = bucket_rows(n, t, args.precision, ones.get(n))
            sweep += rows_n
            if default is not None:
                sens += cluster_sensitivity_rows(n, t, default)
        if sweep:
            out.append((f"Buckets at {SWEEP_DEVICES} chips on {t}", markdown(sweep)))
        if sens:
            out.append((f"16 chips on {t} at half and double each assumed [cluster] constant", markdown(sens)))
    return out


def deployment_sections(args: argparse.Namespace) -> list[tuple[str, str]]:
    targets = target_list(args.targets if args.targets != ",".join(TARGETS) else DEPLOYMENT_TARGET)
    return [
        (
            f"ResNet-50 deployed on {t} ({args.precision}): imported graph, per-op launch -> O3, graph sink",
            markdown(deployment_rows(t, args.precision, not args.no_max_batch)),
        )
        for t in targets
    ]


def int8_sections(args: argparse.Namespace) -> list[tuple[str, str]]:
    names = model_list(args.models or ",".join(INT8_MODELS), "--models", INT8_MODELS)
    targets = target_list(args.targets)
    rows, sensitivity = [], []
    for n in names:
        r, s = int8_rows(n, targets)
        rows += r
        sensitivity += s
    out = [("int8 (quantize_static, QDQ) against f16, O3, graph sink", markdown(rows))]
    if sensitivity:
        out.append(("The int8 figures at half and double an assumed int8_k", markdown(sensitivity)))
    return out


def sections(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The report's tables, each (title, markdown), checking every name before compiling anything."""
    if sum((args.training, args.deployment, args.int8, args.data_parallel)) > 1:
        raise UserError("--training, --data-parallel, --deployment and --int8 are different reports: give one")
    if args.data_parallel:
        args.precision = args.precision or DEFAULT_PRECISION
        return data_parallel_sections(args)
    if args.int8:
        if args.precision not in (None, "force_fp16"):
            raise UserError("--int8 compiles both models in force_fp16 (ATC's default): --precision does not apply")
        args.precision = "force_fp16"
        return int8_sections(args)
    if args.deployment:
        args.precision = args.precision or "force_fp16"
        return deployment_sections(args)
    if args.training:
        args.precision = args.precision or DEFAULT_PRECISION
        return training_sections(args)
    args.precision = args.precision or "force_fp16"
    names = model_list(args.models or ",".join(MODELS), "--models")
    sweep_names = model_list(args.sweep, "--sweep")
    sensitivity_names = model_list(args.sensitivity_models, "--sensitivity-models") if args.sensitivity else []
    targets = target_list(args.targets)
    compiled: dict[tuple[str, str], Compiled] = {}
    rows = []
    for n in names:
        for t in targets:
            headline, compiled[(n, t)] = row(n, t, args.precision, not args.no_max_batch)
            rows.append(headline)
    out = []
    if rows:
        out.append(("O0 per-op against O3 graph sink", markdown(rows)))
        splits = markdown([split_row(compiled[(n, t)]) for n in names for t in targets])
        out.append(("The compiler's share and the launch mode's share", splits))
    sens = []
    for n in sensitivity_names:
        for t in targets:
            if (n, t) not in compiled:
                compiled[(n, t)] = compile_both(n, t, args.precision)
            sens += sensitivity_rows(compiled[(n, t)])
    if sens:
        out.append(("Sensitivity to the assumed constants", markdown(sens) + "\n\n" + CONSTANT_SOURCES))
    sweeps = [r for n in sweep_names for r in stream_sweep(n, targets[-1], args.precision)]
    if sweeps:
        out.append(("Stream count", markdown(sweeps)))
    return out


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    with reported_errors("ge-bench"):
        text = "\n\n".join(f"## {title}\n\n{table}" for title, table in sections(args))
        print(text)
        if args.markdown:
            write_atomic(args.markdown, f"# ge-bench ({args.precision})\n\n{text}\n")


if __name__ == "__main__":
    main()
