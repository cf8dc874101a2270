"""One program of a miscompile's search: torch-level IR lowered to linalg (torch-mlir-opt), run on
a RefBackend worker, and compared with expected values the caller already has.

``harness check`` gets its expected values from the reference evaluator on the same file; a
localization or a reduction evaluates a whole function once and then cuts it into many small
programs, whose expected values are the recorded values of the ops they return. The verdict is
``check``'s: verified, numerics-mismatch, or fails at a stage.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from harness import defaults
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions

from .check import CheckOutcome
from .dtypes import TensorSignature
from .lowering import LLVM_PIPELINE, run_stage
from .closeness import NumericsResult, Tolerances, compare
from .refbackend import without_runtime_checks
from .backend import SearchRunner


@dataclass(frozen=True)
class ProbeOptions:
    to_linalg: str                     # textual: the torch backend contract -> linalg
    opt: str | None = None             # torch-mlir-opt (None: $TORCH_MLIR_OPT, the wheel's)
    tolerances: Tolerances = Tolerances()
    timeout_s: float = defaults.TIMEOUT_S  # per torch-mlir-opt run
    llvm_pipeline: str = LLVM_PIPELINE  # the RefBackend's lowering (a variant drops a pass)
    # MLIR's runtime op verification in that lowering: off, as in a port's own run (on Gemma 3n's
    # vision tower its checks cost the one-op search minutes of code generation per piece).
    runtime_checks: bool = False


@dataclass
class ProbeResult:
    outcome: CheckOutcome
    failed_stage: str = ""
    error: str = ""
    numerics: NumericsResult | None = None
    outputs: tuple[np.ndarray, ...] = ()
    record: RunRecord | None = None      # the run to linalg
    linalg_path: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def mismatch(self) -> bool:
        """Wrong values, as opposed to right ones or a failure to lower or run."""
        return self.outcome is CheckOutcome.NUMERICS_MISMATCH

    def wrong_outputs(self) -> list[int]:
        """Indices of the outputs whose values (not shape or dtype) are off."""
        if self.numerics is None:
            return []
        return [o.index for o in self.numerics.outputs if not o.ok]

    def describe(self) -> str:
        if self.outcome is CheckOutcome.FAILS:
            first = self.error.strip().splitlines()[0] if self.error.strip() else ""
            return f"fails at {self.failed_stage}: {first}"
        if self.numerics is None:
            return self.outcome.value
        worst = max(self.numerics.outputs, key=lambda o: o.max_abs_diff, default=None)
        if worst is None or self.numerics.ok:
            return self.outcome.value
        return f"{self.outcome.value} (max abs diff {worst.max_abs_diff:.3g})"


def run_program(  # noqa: PLR0913 - a piece, its reference (float32, float64, the sums behind each)
        path: str | os.PathLike, inputs: Sequence[np.ndarray], expected: Sequence,
        signature: TensorSignature, *, worker: SearchRunner, options: ProbeOptions,
        work_dir: str | os.PathLike, wide: Sequence | None = None,
        terms: Sequence[int] | None = None) -> ProbeResult:
    """``path`` (at the torch backend contract) through ``options.to_linalg``, then the worker;
    its outputs against ``expected`` (and ``wide``, their float64 evaluation, by the float64
    rule of ``closeness``; ``terms``: each output's producing op's reduction length)."""
    path = Path(path)
    linalg = Path(work_dir) / f"{path.name.removesuffix('.mlir')}.linalg.mlir"
    start = time.perf_counter()
    record = run_stage(path, options.to_linalg, output_path=linalg, opt=options.opt,
                       options=RunOptions(timeout_s=options.timeout_s))
    result = ProbeResult(CheckOutcome.FAILS, record=record, linalg_path=str(linalg),
                         seconds={"to-linalg": time.perf_counter() - start})
    if not record.ok:
        result.failed_stage = "to-linalg"
        first = record.first_error()
        result.error = first.message if first is not None else str(record.signature)
        return result
    llvm = options.llvm_pipeline if options.runtime_checks else without_runtime_checks(options.llvm_pipeline)
    ran = worker.run(linalg, inputs, signature, pipeline=llvm)
    result.seconds.update(ran.seconds)
    if not ran.ok:
        result.failed_stage = ran.failed_stage.value if ran.failed_stage else "refbackend"
        result.error = ran.error
        return result
    return judge(result, ran.outputs, expected, options.tolerances, wide, terms)


def judge(result: ProbeResult, actual: Sequence[np.ndarray], expected: Sequence,
          tolerances: Tolerances, wide: Sequence | None = None,
          terms: Sequence[int] | None = None) -> ProbeResult:
    """Fills ``result`` from a comparison. A mismatch of shape or dtype is a failure of its
    own kind, not wrong values: a search must not take one for the other."""
    result.outputs = tuple(actual)
    result.numerics = compare(actual, expected, tolerances, wide, terms)
    if result.numerics.ok:
        result.outcome = CheckOutcome.VERIFIED
    elif result.numerics.problem or any(o.problem for o in result.numerics.outputs):
        result.outcome = CheckOutcome.FAILS
        result.failed_stage = "comparison"
        result.error = (result.numerics.problem
                        or next(o.problem for o in result.numerics.outputs if o.problem))
    else:
        result.outcome = CheckOutcome.NUMERICS_MISMATCH
    return result
