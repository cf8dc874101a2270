"""``harness run FILE --pipeline P`` as a library step: the pipeline run by the tool it needs
(torch-mlir-opt, or the bindings tool for a pipeline of upstream MLIR passes such as
``linalg-to-llvm``), and, on a legalization failure, the op whose conversion failed. The CLI only
prints the result and maps it to an exit status."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness import defaults
from harness.compiler.outcomes import Outcome
from harness.compiler.pipelines import Driver
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions, repro_command, run_pipeline, shell_command
from harness.errors import InputFileError
from harness.execute.lowering import driver_for, run_bindings_pipeline

from .blockers import BlockerAnalysis, analyze
from .bisect import Responsibility


@dataclass(frozen=True, kw_only=True)
class RunFileOptions:
    opt: str | None = None                    # torch-mlir-opt (a build name or a path)
    driver: Driver | None = None              # None: the pipeline's own (pipelines.toml)
    timeout_s: float = defaults.TIMEOUT_S
    output_path: str | None = None            # -o: written only when the run succeeds
    max_input_mb: int = defaults.MAX_INPUT_MB
    blockers: bool = True                     # a legalization failure: each left-over op alone
    say: Callable[[str], None] | None = None  # progress lines


@dataclass
class RunFileResult:
    record: RunRecord
    textual: str                              # the pipeline as it ran
    on_bindings: bool                         # run by the bindings tool, not torch-mlir-opt
    analysis: BlockerAnalysis | None = None

    def to_json(self) -> dict[str, Any]:
        data = self.record.to_json()
        if self.analysis is not None:
            data["blocker_analysis"] = self.analysis.to_json()
        return data

    def headline(self) -> str:
        record = self.record
        signal = f" ({record.signal})" if record.signal else ""
        return (f"{record.outcome.value}: {Path(record.input_path).name} through {self.textual} "
                f"in {record.elapsed_s:.2f} s{signal}")

    def blocker_lines(self) -> list[str]:
        if self.analysis is None:
            return []
        lines = []
        for op, r in zip(self.analysis.illegal, Responsibility.from_analysis(self.analysis), strict=False):
            role = "blocker (fails alone)" if op.blocker else "symptom (lowers alone)"
            lines.append(f"  {role}: {op.name} x{op.count} at {op.location}: {r.describe()}")
        return lines

    def tail(self) -> list[str]:
        """What follows the record: each left-over op's role, and the command that reruns it."""
        lines = self.blocker_lines()
        if not self.record.ok:
            record = self.record
            lines.append("reproduce: " + (shell_command(record.command) if self.on_bindings
                                          else repro_command(self.textual, record.input_path, record.binary)))
        return lines

    def input_error(self) -> InputFileError | None:
        """The error to end with when the input itself is not IR (no pass ran): bad input, not a
        compiler result."""
        if self.record.outcome is not Outcome.PARSE_ERROR:
            return None
        return InputFileError(
            f"{self.record.input_path} is not MLIR that torch-mlir-opt can parse; no pass ran. "
            "Give the IR file that failed (harness opt and harness emit write them).")


def run_file(path: str | os.PathLike, pipeline: str, textual: str,
             options: RunFileOptions = RunFileOptions()) -> RunFileResult:
    """Runs ``textual`` (``pipeline`` as resolved) on ``path`` by the tool ``pipeline`` needs;
    ``-o`` is read back, so a binary that exits 0 without writing it is not a success."""
    run_options = RunOptions(timeout_s=options.timeout_s, output_path=options.output_path,
                             max_input_mb=options.max_input_mb, read_back_output=True)
    on_bindings = driver_for(pipeline, options.driver) is Driver.BINDINGS
    if on_bindings:
        record = run_bindings_pipeline(path, textual, options=run_options)
    else:
        record = run_pipeline(path, textual, opt=options.opt, options=run_options)
    result = RunFileResult(record, textual, on_bindings)
    if options.blockers and record.outcome is Outcome.LEGALIZATION_FAILURE and not on_bindings:
        if options.say is not None:
            options.say("finding the op whose conversion failed (each left-over op alone)")
        result.analysis = analyze(path, textual, opt=record.binary, timeout_s=options.timeout_s)
        result.record = replace(record, blockers=result.analysis.names())
    return result
