"""The bindings tool's pass-by-pass run: what torch-mlir-opt's crash reproducer and pass timing
give ``harness bisect``, on a PassManager of the MLIR Python bindings.

Why: the bindings expose no ``enable_crash_reproducer`` (torch-mlir 20261001), and bisect reads
MLIR's ``Pipeline failed while executing `PASS` ...: reproducer generated at `F``` note and its
``-mlir-timing-display=tree`` report. Running each pass of the expanded pipeline (``str(pm)``:
registered pipelines such as ``buffer-deallocation-pipeline`` spelled out, as
``--dump-pass-pipeline`` prints them) as its own PassManager gives the IR before the failing
pass, and that pass's own timing report names it as MLIR does (``LinalgElementwiseOpFusionPass``).

Limits, said in the tool's output rather than hidden:
- a pass that crashes the process (a signal) leaves no note: Python cannot recover it in-process
  as MLIR's reproducer does, so bisect reports "no reproducer";
- function passes run on every function before the next pass starts (MLIR interleaves them per
  function), which MLIR's local reproducer assumes too.
"""

from __future__ import annotations

import gc
import os
import re
import tempfile
from dataclasses import dataclass, field

from torch_mlir import ir, passmanager

from harness.compiler.pipeline_text import PassRef, parse_pipeline

_TIMING_ROW = re.compile(r"^\s+-?[\d.]+ \(\s*-?[\d.]+%\)  (?P<indent> *)(?P<name>\S.*?)\s*$")
_NOT_PASSES = ("Rest", "Total")


@dataclass
class PassStep:
    ref: PassRef
    name: str                                   # MLIR's name for the pass (its timing row)
    timing_rows: list[str] = field(default_factory=list)


@dataclass
class SteppedRun:
    expanded: str                               # the pipeline as run, registered pipelines spelled out
    steps: list[PassStep] = field(default_factory=list)
    error: ir.MLIRError | None = None           # the failing step's error (the last step)
    before: ir.Operation | None = None          # the module just before the failing step

    @property
    def failed(self) -> PassStep | None:
        return self.steps[-1] if self.error is not None and self.steps else None

    def timing_report(self) -> str:
        """Each step's rows under one header, in MLIR's tree layout (each row's percentage is
        of its own step)."""
        rows = [row for step in self.steps for row in step.timing_rows]
        return "\n".join([
            "===" + "-" * 73 + "===",
            "                         ... Execution time report ...",
            "===" + "-" * 73 + "===",
            "  ----Wall Time----  ----Name----", *rows, ""])


def expanded_pipeline(pipeline: str) -> str:
    return str(passmanager.PassManager.parse(pipeline))


def run_in_steps(module: ir.Module, pipeline: str, *, keep_before: bool) -> SteppedRun:
    """Runs ``pipeline`` one pass at a time on ``module``, stopping at the first that fails."""
    expanded = expanded_pipeline(pipeline)
    run = SteppedRun(expanded)
    for ref in parse_pipeline(expanded):
        before = module.operation.clone() if keep_before else None
        pm = passmanager.PassManager.parse(ref.textual())
        pm.enable_verifier(True)
        pm.enable_timing()
        error: ir.MLIRError | None = None
        with _stderr_captured() as captured:
            try:
                pm.run(module.operation)
            except ir.MLIRError as e:
                error = e
            del pm  # the timing report is printed when the PassManager goes
            gc.collect()
        run.steps.append(_step(ref, captured.text()))
        if error is not None:
            run.error, run.before = error, before
            return run
        if before is not None:
            before.erase()
    return run


def _step(ref: PassRef, report: str) -> PassStep:
    """The step with its pass's name from its timing rows (the argument when there are none)."""
    at = report.find("----Name----")
    rows: list[str] = []
    name = ""
    if at >= 0:
        for line in report[at:].splitlines()[1:]:
            m = _TIMING_ROW.match(line)
            if not m:
                break
            label = m.group("name")
            if not m.group("indent") and label in _NOT_PASSES:
                continue
            rows.append(line)
            if not label.endswith(" Pipeline") and not label.startswith("(A)") and not name:
                name = label
    return PassStep(ref, name or ref.name, rows)


class _Captured:
    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as this object

    def text(self) -> str:
        self.file.seek(0)
        return self.file.read().decode(errors="replace")


class _stderr_captured:
    """File descriptor 2 into a temporary file: MLIR's C++ side prints timing there."""

    def __enter__(self) -> _Captured:
        self.captured = _Captured()
        self.saved = os.dup(2)
        os.dup2(self.captured.file.fileno(), 2)
        return self.captured

    def __exit__(self, *exc: object) -> None:
        os.dup2(self.saved, 2)
        os.close(self.saved)


def reproducer_text(module_text: str, pass_pipeline: str) -> str:
    """``module_text`` with MLIR's ``mlir_reproducer`` resource, as torch-mlir-opt writes it."""
    quoted = pass_pipeline.replace("\\", "\\\\").replace('"', '\\"')
    return (module_text.rstrip("\n") + "\n\n{-#\n  external_resources: {\n    mlir_reproducer: {\n"
            f'      pipeline: "{quoted}",\n      disable_threading: true,\n      verify_each: true\n'
            "    }\n  }\n#-}\n")
