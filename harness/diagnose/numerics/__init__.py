"""Where a lowered model's numbers go wrong: ``harness bisect FILE --numerics``.

``harness check`` says a lowering computes wrong values; this says which ops. The file is taken
to the torch backend contract once (``subject``), the reference evaluator records every value
of its entry function, and pieces of the function (``programs``), fed those values, are lowered
and run on one RefBackend worker (``search``): two binary searches name the chain of ops that
goes wrong together, in at most about 2 * log2(ops) runs. The chain is then replayed with each
pass choice changed (``blame``): a RefBackend pass left out, an op decomposed at the torch
level; which choices make it right says whether the linalg pipeline or the RefBackend's lowering
computes the wrong values. The chain is then narrowed to the one op that computes wrong
(``culprit``: the values inside the program, each op alone on the reference's operands), with
a second opinion from the op's other lowerings (``opinion``).

- ``bisect_numerics``: all of it, for ``harness bisect --numerics``;
- ``check_ops``: the check and the localization without the replays, for a sweep: a model's
  numbers are verified, or wrong from a named op on;
- ``one_op``: the one op alone, searching the chain only when the values inside the program do
  not show it (a port's numerics mismatch, ``tools/bench_numerics.py``).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness import defaults
from harness.compiler.locations import file_locations
from harness.execute.inputs import RandomInputs, save_npz
from harness.execute.outcomes import CheckOutcome
from harness.execute.closeness import Tolerances
from harness.execute.probe import ProbeResult
from harness.execute.backend_names import BackendName
from harness.execute.backends import search_runner

from .blame import Blame, Fault, ReplayedChoice, blame, torch_level_fault
from .culprit import Culprit, OneOpResult, find_culprit
from .programs import END, Cuts, CutProgram, ValueRef, Values
from .result import ChainOp, NumericsBisectResult, FunctionVerdict
from .search import Localization, Probe, Searcher, localize, run_bound
from .subject import NumericsSubject, SubjectOptions, pipeline_name, prepare

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import torch

__all__ = [
    "END",
    "Blame",
    "ChainOp",
    "Culprit",
    "CutProgram",
    "Cuts",
    "Fault",
    "FunctionVerdict",
    "Localization",
    "NumericsBisectOptions",
    "NumericsBisectResult",
    "NumericsSubject",
    "OneOpResult",
    "Probe",
    "ReplayedChoice",
    "Searcher",
    "SubjectOptions",
    "ValueRef",
    "Values",
    "bisect_numerics",
    "check_ops",
    "find_culprit",
    "localize",
    "one_op",
    "pipeline_name",
    "prepare",
    "run_bound",
]


@dataclass(frozen=True)
class NumericsBisectOptions:
    inputs_path: str | None = None      # .npz of the arguments; None: random
    random: RandomInputs = RandomInputs()
    function: str | None = None         # entry point; None: the only public function
    opt: str | None = None              # torch-mlir-opt for the torch-level pipelines
    tolerances: Tolerances = Tolerances()
    timeout_s: float = defaults.TIMEOUT_S  # per subprocess and per RefBackend request
    backend: BackendName = BackendName.REFBACKEND  # where the cut pieces run (execute.backends)
    out_dir: str | None = None          # parent of the unique work folder
    blame: bool = True                  # replay the chain with each pass choice
    one_op: bool = True                 # narrow the chain to the one op that computes wrong
    # Run the whole function first: a right one then costs one run (a sweep's case); without
    # it a localization of a known miscompile takes about 2 * log2(ops) runs.
    confirm_first: bool = False
    progress: Callable[[str], None] | None = None  # one line per step
    # one_op: seconds after which the chain's search takes the chain it has (None: no limit)
    budget_s: float | None = None


_DEFAULT_OPTIONS = NumericsBisectOptions()  # the defaults below (frozen, so shared safely)


def bisect_numerics(path: str | os.PathLike, pipeline: str, *,
                    options: NumericsBisectOptions = _DEFAULT_OPTIONS) -> NumericsBisectResult:
    """Localizes the wrong numbers of ``path`` lowered by ``pipeline`` (to linalg, as ``harness
    check`` takes it) and, with ``options.blame``, says which pass choices make them right."""
    began = time.perf_counter()
    say = options.progress or (lambda _line: None)
    say("taking the file to the torch backend contract and recording the reference's values")
    subject = prepare(path, SubjectOptions.of(pipeline, options))
    result = NumericsBisectResult(str(path), pipeline, FunctionVerdict.FAILS, function=subject.function,
                                  inputs=subject.inputs_text, ops=subject.ops(),
                                  bound=run_bound(subject.ops()), work_dir=str(subject.work_dir))
    if subject.torch_level_changed_values:
        result.verdict = FunctionVerdict.TORCH_LEVEL
        result.blame = torch_level_fault(subject)
        result.detail = result.blame.reason
        result.seconds = time.perf_counter() - began
        return result
    probe_options = subject.probe_options()
    with search_runner(options.backend, timeout_s=options.timeout_s, work_dir=subject.work_dir) as worker:
        searcher = Searcher(subject, worker, probe_options, say)
        found = localize(searcher, confirm_first=options.confirm_first)
        result.runs = worker.runs
        result.probes = [p.render(subject) for p in searcher.probes]
        if isinstance(found, ProbeResult):
            result.verdict = (FunctionVerdict.VERIFIED if found.outcome is CheckOutcome.VERIFIED
                              else FunctionVerdict.FAILS)
            result.detail = _whole(found, subject)
            result.seconds = time.perf_counter() - began
            return result
        result.verdict = FunctionVerdict.LOCALIZED
        result.literal_args = found.literal_args
        _describe_chain(result, subject, found)
        if options.one_op:
            say("narrowing the chain to the one op that computes wrong")
            result.one_op = find_culprit(subject, worker, probe_options, chain=found.program,
                                         chain_pipeline=result.piece_pipeline,
                                         opinions=options.blame, say=say)
        if options.blame:
            result.blame = blame(subject, found.program, Path(result.piece_path), found.result,
                                 worker, replace(probe_options), say)
    result.seconds = time.perf_counter() - began
    return result


def check_ops(path: str | os.PathLike, pipeline: str, *,
              options: NumericsBisectOptions = _DEFAULT_OPTIONS) -> NumericsBisectResult:
    """The op-level check a sweep runs on a model that lowers: verified, or the chain of ops
    from which the numbers are wrong (no pass-choice replays: those are bisect's)."""
    return bisect_numerics(path, pipeline, options=replace(options, blame=False, confirm_first=True))


def one_op(path: str | os.PathLike, pipeline: str, *, known_wrong: bool = False,
           options: NumericsBisectOptions = _DEFAULT_OPTIONS) -> OneOpResult:
    """The one op that computes wrong, without the chain's search when the values inside the
    program show it (two RefBackend runs); the chain is searched only when returning them hides
    the miscompile. ``known_wrong``: the caller has seen the function mismatch (``check``, a
    port), so the search does not run it whole first. ``options.blame``: the second opinion."""
    say = options.progress or (lambda _line: None)
    deadline = None if options.budget_s is None else time.monotonic() + options.budget_s
    subject = prepare(path, SubjectOptions.of(pipeline, options), reference_of_file=False)
    probe_options = subject.probe_options()
    short: list[bool] = []
    with search_runner(options.backend, timeout_s=options.timeout_s, work_dir=subject.work_dir) as worker:
        def chain() -> CutProgram | None:
            found = localize(Searcher(subject, worker, probe_options, say, deadline),
                             confirm_first=not known_wrong)
            short.append(isinstance(found, Localization) and found.cut_short)
            return found.program if isinstance(found, Localization) else None

        result = find_culprit(subject, worker, probe_options, localize_chain=chain,
                              chain_pipeline=pipeline_name(subject.split.to_linalg),
                              opinions=options.blame, say=say)
    if any(short):
        result.cut_short = (f"the chain's search stopped at its {options.budget_s:g} s budget: a "
                            "shorter chain may exist")
    return result


def _whole(found: ProbeResult, subject: NumericsSubject) -> str:
    what = f"@{subject.function} ({subject.ops()} ops at the torch backend contract)"
    if found.outcome is CheckOutcome.VERIFIED:
        return (f"{what} lowered through {subject.split.to_linalg} and the RefBackend gives the "
                "reference's values: nothing to bisect")
    return f"{what} does not lower or run: {found.describe()}"


def _describe_chain(result: NumericsBisectResult, subject: NumericsSubject, found: Localization) -> None:
    cuts = subject.cuts
    wrong = set(found.wrong())
    result.start = found.start
    result.chain = [ChainOp(p, cuts.label(p), file_locations(str(cuts.ops[p].location)), p in wrong)
                    for p in found.chain]
    result.max_abs_diff = max((o.max_abs_diff for o in found.result.numerics.outputs if not o.ok),
                              default=0.0) if found.result.numerics else 0.0
    folder = subject.work_dir
    piece = folder / "chain.mlir"
    piece.write_text(found.program.text)
    save_npz(folder / "chain.inputs.npz", found.program.inputs(subject.values))
    save_npz(folder / "chain.expected.npz", [_array(v) for v in found.program.expected(subject.values)],
             prefix="result")
    linalg = Path(found.result.linalg_path)
    if linalg.is_file():
        shutil.copyfile(linalg, folder / "chain.linalg.mlir")
    result.piece_pipeline = pipeline_name(subject.split.to_linalg)
    result.piece_path = str(piece)
    result.piece_inputs = str(folder / "chain.inputs.npz")
    result.piece_expected = str(folder / "chain.expected.npz")


def _array(value: torch.Tensor | npt.ArrayLike) -> np.ndarray:
    import numpy as np

    if hasattr(value, "detach"):
        return value.detach().contiguous().numpy()
    return np.asarray(value)
