"""Shrinks IR while its compiled code still fails when it runs, the same way: the reducer of a
run-time failure bundle (``harness report --numerics`` on a program that dies at ``execution``).

- The numerics bisection does not apply: a crash has no first wrong value to localize. The IR
  reductions of ``strategy`` run on the whole function at the torch backend contract.
- The oracle: the candidate lowered to linalg (torch-mlir-opt) and run on the RefBackend worker
  fails at ``execution`` with the same ``RuntimeFailure`` (signal and message, or the symbols
  not found). Lowering failures, right values and other crashes are not kept.
- Inputs keep their meaning as in the numerics reducer (``NumericsSession``): each candidate is
  evaluated in eager PyTorch so an argument standing in for an op gets that op's values. A
  candidate the reference evaluator cannot run is not kept.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness import defaults
from harness.errors import NoMiscompileError
from harness.execute.check import CheckOutcome
from harness.execute.failure import RuntimeFailure
from harness.execute.inputs import RandomInputs
from harness.execute.closeness import Tolerances
from harness.execute.probe import ProbeResult
from harness.execute.signature import find_function
from harness.execute.backend_names import BackendName
from harness.execute.backends import search_runner

from ..numerics import SubjectOptions, pipeline_name, prepare
from ..numerics.programs import END, computing_ops
from . import Stopped
from .edits import entry_block
from .miscompile import NumericsReduceOptions, NumericsSession
from .session import Stop, check_output
from .strategy import reduce_ir

EXECUTION_STAGE = "execution"


class NoRuntimeFailureError(NoMiscompileError):
    """The program does not fail at execution the expected way (it runs, or fails earlier)."""


@dataclass(frozen=True)
class RuntimeReduceOptions:
    output_path: str | os.PathLike | None = None
    budget_s: float = defaults.REDUCE_BUDGET_S  # wall clock
    max_tries: int = defaults.REDUCE_MAX_TRIES
    inputs_path: str | None = None
    random: RandomInputs = RandomInputs()
    function: str | None = None
    opt: str | None = None
    # What the reference's values are compared with (a runtime failure is not a number: only
    # the judge of a piece that runs reads them).
    tolerances: Tolerances = Tolerances()
    timeout_s: float = defaults.TIMEOUT_S
    backend: BackendName = BackendName.REFBACKEND  # where the cut pieces run (execute.backends)
    out_dir: str | None = None
    progress: Callable[[str], None] | None = None


@dataclass
class RuntimeReduceResult:
    input_path: str
    pipeline: str
    output_path: str              # the reduced IR, at the torch backend contract
    inputs_path: str              # its arguments (.npz)
    expected_path: str            # what eager PyTorch computes on them (.npz)
    piece_pipeline: str           # what lowers the reduced IR to linalg
    failure: RuntimeFailure       # kept by every candidate
    ops_before: int
    ops_after: int
    computing_ops: list[str]
    tries: int
    kept: int
    elapsed_s: float
    stopped: Stopped = Stopped.DONE
    steps: list[str] = field(default_factory=list)

    def summary(self) -> str:
        why = {Stopped.BUDGET: " (budget spent: best so far)",
               Stopped.MAX_TRIES: " (max tries reached: best so far)"}.get(self.stopped, "")
        return (f"{self.ops_before} -> {self.ops_after} ops ({' -> '.join(self.computing_ops)}) in "
                f"{self.tries} tries ({self.kept} kept), {self.elapsed_s:.1f} s{why}")

    def to_json(self) -> dict:
        d = dict(self.__dict__)
        d.update(stopped=self.stopped.value, failure=self.failure.to_json())
        return d


def failure_of(result: ProbeResult) -> RuntimeFailure | None:
    """The run-time failure of a probe; None when it ran or failed before the code ran."""
    if result.outcome is not CheckOutcome.FAILS or result.failed_stage != EXECUTION_STAGE:
        return None
    return RuntimeFailure.of(result.error)


class RuntimeSession(NumericsSession):
    """The numerics session with another verdict: the same run-time failure."""

    target: RuntimeFailure | None = None  # None: the first candidate (the whole function) sets it

    def verdict(self, result: ProbeResult) -> float | None:
        found = failure_of(result)
        if found is None:
            return None
        if self.target is None:
            self.target = found
        return 0.0 if found == self.target else None

    def score_text(self, score: float) -> str:
        return f"still: {self.target}"


def reduce_runtime(path: str | os.PathLike, pipeline: str, *,
                   options: RuntimeReduceOptions = RuntimeReduceOptions()) -> RuntimeReduceResult:
    """Reduces ``path``, whose code (lowered by ``pipeline`` and the RefBackend) fails when it runs,
    to a smaller program at the torch backend contract that fails the same way."""
    start = time.monotonic()
    src = Path(path)
    out = Path(options.output_path) if options.output_path else src.with_name(f"{src.stem}.reduced.mlir")
    check_output(src, out)
    say = options.progress or (lambda _line: None)
    say("taking the file to the torch backend contract and recording the reference's values")
    subject = prepare(src, SubjectOptions.of(pipeline, options), reference_of_file=False)
    probe = subject.probe_options()
    program = subject.cuts.build(-1, END)
    with search_runner(options.backend, timeout_s=options.timeout_s, work_dir=subject.work_dir) as worker:
        base = NumericsReduceOptions(output_path=out, budget_s=options.budget_s,
                                     max_tries=options.max_tries, opt=options.opt,
                                     tolerances=options.tolerances, progress=options.progress)
        session = RuntimeSession(subject.work_dir, out, base, probe, worker, start)
        try:
            state = session.begin(program.text, program.inputs(subject.values))
        except NoMiscompileError:
            # A bad access may read garbage and return: with MLIR's runtime op verification it
            # aborts (off by default, as in the port's first run), so the search keeps it on.
            probe = replace(probe, runtime_checks=True)
            session = RuntimeSession(subject.work_dir, out, base, probe, worker, start)
            try:
                state = session.begin(program.text, program.inputs(subject.values))
            except NoMiscompileError:
                raise NoRuntimeFailureError(str(src), pipeline, "runs",
                                            "its code does not fail at execution on these inputs, "
                                            "with or without runtime checks") from None
        try:
            reduce_ir(state)
        except Stop:
            pass
        assert session.target is not None
        with state.ctx:
            computing = computing_ops(state.best)
            body = len(list(entry_block(find_function(state.best, None, "the reduced IR")).operations)) - 1
    return RuntimeReduceResult(
        input_path=str(src), pipeline=pipeline, output_path=str(out),
        inputs_path=str(session.inputs_path), expected_path=str(session.expected_path),
        piece_pipeline=pipeline_name(subject.split.to_linalg), failure=session.target,
        ops_before=subject.ops(), ops_after=body,
        computing_ops=[n.removeprefix("torch.") for n in computing], tries=session.tries,
        kept=session.kept, elapsed_s=time.monotonic() - start, stopped=session.stopped,
        steps=session.steps)


__all__ = ["NoRuntimeFailureError", "RuntimeReduceOptions", "RuntimeReduceResult", "RuntimeSession",
           "failure_of", "reduce_runtime"]
