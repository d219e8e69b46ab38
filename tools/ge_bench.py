"""ge-bench: O0 per-op launch against O3 whole-graph sink on the modeled Ascend targets.

    ge-bench [--models "resnet50 b1,bert_base"] [--targets ascend910b] [--markdown out.md]
"""

from __future__ import annotations

import argparse

from bench.ge_bench import MODELS, TARGETS, markdown, row, stream_sweep
from tools.common import UserError, reported_errors, write_atomic


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="ge-bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated (default: all)")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--precision", default="force_fp16",
                        help="precision_mode for both levels (default %(default)s, ATC's default)")
    parser.add_argument("--sweep", default="bert_base,resnet50 b32", help="models for the stream-count sweep")
    parser.add_argument("--no-max-batch", action="store_true", help="skip the largest-batch search (slow)")
    parser.add_argument("--markdown", metavar="FILE", help="also write the tables as markdown")
    args = parser.parse_args(argv)
    with reported_errors("ge-bench"):
        names = [n for n in args.models.split(",") if n]
        for n in names + [s for s in args.sweep.split(",") if s]:
            if n not in MODELS:
                raise UserError(f"unknown model '{n}' (models: {', '.join(MODELS)})")
        targets = args.targets.split(",")
        rows = [row(n, t, args.precision, not args.no_max_batch) for n in names for t in targets]
        table = markdown(rows)
        print(table)
        sweeps = [r for n in args.sweep.split(",") if n for r in stream_sweep(n, targets[-1], args.precision)]
        sweep_table = markdown(sweeps) if sweeps else ""
        if sweep_table:
            print()
            print(sweep_table)
        if args.markdown:
            write_atomic(args.markdown, f"# ge-bench ({args.precision})\n\n{table}\n\n## Stream count\n\n{sweep_table}\n")


if __name__ == "__main__":
    main()
