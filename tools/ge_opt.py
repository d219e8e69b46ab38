"""ge-opt: xdsl-opt with the project's dialects and passes.

Differences from xdsl-opt: node names (locations) are printed by default (`--strip-debuginfo`
turns them off), `-o` is written whole or not at all, and errors are one line. A module's weights
sidecar is opened for the passes that read weights, and with `-o` every weight the result refers to
is written to a complete sidecar beside the output (`out.safetensors`). `--remarks` prints what the
passes applied and refused.

Only this project's passes and a few xDSL ones (passes/pipeline.py) can be named in `-p`; user
fusion rules and custom operators (Python) load only from files named with `--load-fusion-rules` and
`--load-op-library` (docs/security.md, docs/custom_ops.md).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from io import StringIO
from pathlib import Path
from typing import IO

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import DiagnosticException, InterpretationError
from xdsl.xdsl_opt_main import xDSLOptMain

from ge.frontend.sidecar import SIDECAR_ATTR, SidecarError, open_weights, save
from ge.ge_dialects.fused import FUSED
from ge.ge_dialects.ge import GE
from ge.ge_dialects.ge.weights import attach_weights, referenced_keys, referenced_weights, weights_of
from ge.ge_dialects.stream import STREAM
from ge.ge_dialects.task import TASK
from ge.interpreter.differential import DEFAULT_ATOL, DEFAULT_RTOL, DifferentialChecker, NumericsError, Tolerance
from ge.interpreter.ge import KernelError
from ge.interpreter.kernels import tensor_byte_limit
from ge.interpreter.runner import InputError
from ge.passes import remarks
from ge.passes.fuse_ops import RuleFileError, load_rule_file, merged_table, user_fusion_rules
from ge.passes.fusion.engine import FusionRule
from ge.passes.ge_options import apply_ge_options
from ge.passes.pipeline import Observer, PassVerificationError, available_passes, expand, spell_exponents
from ge.tools.common import (
    UserError,
    add_contract_arguments,
    add_op_library_argument,
    doing,
    first_line,
    op_libraries,
    reported_errors,
)
from ge.tools.ir_input import read_ir_chunk
from ge.tools.outputs import Outputs, reserve_ir_output
from ge.tools.progress import PassProgress, wanted


class _KeptText(StringIO):
    """xDSLOptMain closes its output stream when done; this one keeps its text for the final write."""

    def close(self) -> None:
        pass


class GeOptMain(xDSLOptMain):
    """xdsl-opt's driver with the project's dialects and passes, the tools' contract options
    (--max-tensor-bytes, --debug) and one-line usage errors."""

    _sidecar: tuple[Path, dict[str, np.ndarray]] | None
    """With -o: the sidecar to write beside the output and its arrays (set by `_plan_sidecar`)."""

    def register_all_dialects(self):
        super().register_all_dialects()
        self.ctx.register_dialect("ge", lambda: GE)
        self.ctx.register_dialect("fused", lambda: FUSED)
        self.ctx.register_dialect("task", lambda: TASK)
        self.ctx.register_dialect("stream", lambda: STREAM)

    def register_all_passes(self):
        # Not xDSL's whole set: its `mlir-opt` pass runs any executable the pipeline names.
        for name, factory in available_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        add_contract_arguments(arg_parser)
        arg_parser.add_argument(
            "--strip-debuginfo", action="store_true", help="do not print locations (ONNX node names)"
        )
        arg_parser.add_argument(
            "--verify-numerics",
            nargs="?",
            const=0,
            type=int,
            metavar="SEED",
            help="run the interpreter (random inputs from SEED, default 0) after every pass and fail "
            "when an element of an output breaks |after-before| <= ATOL + RTOL*|before| (or NaN / inf "
            "move, or an integer changes), each pass against the one before and the end against the start",
        )
        arg_parser.add_argument(
            "--numerics-tolerance",
            type=float,
            default=DEFAULT_RTOL,
            metavar="RTOL",
            help="RTOL of --verify-numerics, the error relative to each element (default %(default)s)",
        )
        arg_parser.add_argument(
            "--numerics-atol",
            type=float,
            default=DEFAULT_ATOL,
            metavar="ATOL",
            help="ATOL of --verify-numerics, the error allowed on elements near zero (default %(default)s)",
        )
        arg_parser.add_argument(
            "--load-fusion-rules",
            action="append",
            default=[],
            metavar="FILE",
            help="run the Python FILE and add the fusion rules it defines (RULES, a list of FusionRule) in "
            "front of fuse-ops' table; repeatable",
        )
        add_op_library_argument(arg_parser)
        arg_parser.add_argument(
            "--ge-option",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a GE option (ge.oo.level, ge.exec.precision_mode, ge.socVersion, ge.exec.disableReuseMemory, "
            "ge.enableSingleStream, ge.streamNum) applied to the passes that implement it; alone, it runs "
            "ge-optimize",
        )
        arg_parser.add_argument(
            "--quiet", action="store_true", help="no progress line (drawn only when stderr is a terminal)"
        )
        arg_parser.add_argument(
            "--remarks",
            action="store_true",
            help="print a remark (stderr) for every rewrite the passes applied or rejected",
        )

    def parse_chunk(self, chunk, file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        source = self.args.input_file or "<stdin>"
        if file_extension != "mlir":
            module = super().parse_chunk(chunk, file_extension, start_offset)
        else:
            module = read_ir_chunk(
                self.ctx,
                chunk,
                source,
                not self.args.no_implicit_module,
                start_offset,
                verify=not self.args.disable_verify,
            )
        if module is not None:
            try:
                attach_weights(module, open_weights(module, Path(source) if self.args.input_file else Path.cwd() / "-"))
            except SidecarError as e:
                raise UserError(f"{source}: {e}") from None
        return module

    def setup_pipeline(self):
        """The pipeline of -p with the GE options applied, composite passes expanded: one flat list,
        each pass verified and shown to the observers (--verify-numerics) after it runs."""
        self._check_tolerances()
        self._fusion_rules = self._load_fusion_rules()
        self._observers: Sequence[Observer] = ()
        self.args.passes = spell_exponents(self.args.passes)
        super().setup_pipeline()
        top_level = self.pipeline.callback
        assert top_level is not None, "xDSLOptMain's pipeline verifies the module after each pass"

        ran = 0

        def callback(previous, module, following):
            nonlocal ran
            ran += previous is not None
            if following is not None:
                self._progress.starting(following, ran, len(passes))
            try:
                top_level(previous, module, following)  # verifies the module
            except DiagnosticException as e:
                if previous is None:  # the input itself
                    raise
                raise PassVerificationError(previous.name, e) from e
            if previous is not None:
                for observer in self._observers:
                    observer(previous, module)

        passes = expand(apply_ge_options(self.pipeline.passes, self.args.ge_option))
        self._progress = PassProgress(self.args.input_file or "<stdin>", wanted(self.args.quiet))
        self.pipeline = PassPipeline(tuple(passes), callback)

    def _check_tolerances(self) -> None:
        """A NaN, negative or infinite tolerance makes a check that cannot pass or cannot fail."""
        for flag, value in (
            ("--numerics-tolerance", self.args.numerics_tolerance),
            ("--numerics-atol", self.args.numerics_atol),
        ):
            if not math.isfinite(value) or value < 0:
                raise UserError(f"{flag} {value}: must be a finite number >= 0")

    def _load_fusion_rules(self) -> list[FusionRule]:
        rules = []
        try:
            for path in self.args.load_fusion_rules:
                rules += load_rule_file(path)
            merged_table(rules)
        except RuleFileError as e:
            raise UserError(f"--load-fusion-rules: {e}") from None
        return rules

    def apply_passes(self, prog: ModuleOp) -> None:
        with remarks.collected() as found, ExitStack() as stack:
            checker = None
            stack.enter_context(self._progress)
            stack.enter_context(user_fusion_rules(self._fusion_rules))
            try:
                if self.args.verify_numerics is not None:
                    checker = self._numerics_checker(prog)
                    self._observers = (checker,)
                super().apply_passes(prog)
                if checker:
                    checker.finish()
            except NumericsError as e:
                raise UserError(str(e)) from None
            except (InputError, KernelError, InterpretationError) as e:
                raise UserError(f"--verify-numerics: {first_line(e)}") from None
            finally:
                self._observers = ()
                for report in checker.reports if checker else ():
                    print(report, file=sys.stderr)
        if self.args.remarks:
            for remark in found:
                print(remark, file=sys.stderr)

    def _numerics_checker(self, module: ModuleOp) -> DifferentialChecker:
        from ge.tools.ge_run import random_inputs

        inputs = random_inputs(module, self.args.verify_numerics)
        return DifferentialChecker.start(
            module, inputs, Tolerance(self.args.numerics_tolerance, self.args.numerics_atol)
        )

    def prepare_output(self) -> IO[str]:
        self._text = _KeptText()
        return self._text

    def output_resulting_program(self, prog) -> str:
        self.args.print_debuginfo = not self.args.strip_debuginfo
        self._plan_sidecar(prog)
        with doing("printing the IR"):
            return super().output_resulting_program(prog).replace(" loc(unknown)", "")

    def _plan_sidecar(self, module: ModuleOp) -> None:
        """With -o, the output gets its own complete sidecar; without, new weights cannot be kept."""
        keys = referenced_keys(module)
        if not keys:
            return
        created = [k for k in keys if k in weights_of(module).added]
        if self.args.output_file is None:
            if created:
                raise UserError(
                    f"the passes created {len(created)} new weights (e.g. '{created[0]}'); "
                    "give -o FILE.mlir so they can be written to a sidecar beside it"
                )
            return
        if self._sidecar is not None:
            raise UserError("with --split-input-file, only one module may refer to weights when writing -o")
        sidecar = Path(self.args.output_file).with_suffix(".safetensors")
        module.attributes[SIDECAR_ATTR] = StringAttr(sidecar.name)
        self._sidecar = (sidecar, referenced_weights(module))

    def run(self):
        """Parses, runs the passes and prints; the IR and its sidecar are written together at the end,
        whole or not at all (tools/outputs.py), and only if everything before succeeded."""
        self._sidecar = None
        outputs = Outputs()
        if self.args.output_file is not None:
            reserve_ir_output(outputs, self.args.output_file)  # a bad -o fails before any work
        source = self.args.input_file or "<stdin>"
        try:
            with (
                tensor_byte_limit(self.args.max_tensor_bytes),
                op_libraries(self.args.load_op_library),
                doing(f"optimizing {source}"),
            ):
                super().run()
        except ValueError as e:
            if "Unrecognized file extension" in str(e):
                raise UserError(
                    f"{source}: {first_line(e)[0].lower()}{first_line(e)[1:]} (give .mlir, or -f to name the format)"
                ) from None
            raise
        except OSError as e:
            raise UserError(f"{e.filename or source}: {e.strerror or first_line(e)}") from None
        text = self._text.getvalue()
        if self.args.output_file is None:
            sys.stdout.write(text)
            return
        if self._sidecar is not None:
            path, arrays = self._sidecar
            outputs.add(path, lambda tmp: save(tmp, arrays))
        outputs.add(self.args.output_file, text)
        with doing(f"writing {self.args.output_file}"):
            outputs.commit()


def main(argv: list[str] | None = None) -> None:
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)  # known before the parser ran, too
    with reported_errors("ge-opt", debug):
        try:
            tool = GeOptMain(description="ge graph optimizer driver", args=argv)
        except ValueError as e:  # an unknown pass or pass option in -p
            raise UserError(f"pass pipeline: {first_line(e)}") from None
        tool.run()


if __name__ == "__main__":
    main()
