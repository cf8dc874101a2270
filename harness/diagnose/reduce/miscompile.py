"""Shrinks IR while its lowered numbers stay wrong: ``harness reduce FILE --numerics``.

The oracle is the reference evaluator on each candidate itself: a candidate is kept when, run
op by op in eager PyTorch and lowered through the pipeline and the RefBackend on the same
inputs, it still gives wrong values (a numerics mismatch, not a failure, not a shape or dtype
difference). The first reduction is a numerics bisection (``harness.diagnose.numerics``): the
chain of ops that goes wrong together, cut out of the function at the torch backend contract
and fed the reference's values; the IR reductions of ``strategy`` then run on that piece with
this oracle (no zero weights: values matter here, an argument stands in for a literal instead).

Inputs keep their meaning through every edit. Each op of the piece carries a key
(``edits.VALUE_KEY``) and each argument names its source (``edits.ARG_SOURCE``): an input of
the piece, or the op whose result it stands in for. A candidate's arguments are fed those
values, as the best program so far computed them; the keys are taken off the text that is
run and written. A candidate the evaluator cannot run, or whose eager values do not fit the
types the IR claims, is not kept.
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import torch
from torch_mlir import ir

from harness import defaults
from harness.compiler.mlir import parse_ir, print_op
from harness.errors import (
    HarnessError,
    InputFileError,
    NoMiscompileError,
    ReferenceEvaluationError,
    UnsupportedDTypeError,
    UnsupportedOpsError,
)
from harness.execute.inputs import RandomInputs, save_npz
from harness.execute.closeness import Tolerances
from harness.execute.probe import ProbeOptions, ProbeResult, run_program
from harness.execute.check import flatten_outputs
from harness.execute.reference import ReferenceOptions, evaluate
from harness.execute.signature import find_function, signature_of
from harness.execute.backend import SearchRunner
from harness.execute.backend_names import BackendName
from harness.execute.backends import search_runner

from ..numerics import (
    Searcher,
    SubjectOptions,
    find_culprit,
    localize,
    pipeline_name,
    prepare,
    run_bound,
)
from ..numerics.programs import END, computing_ops
from . import ReduceOptions, Stopped
from .edits import ARG_SOURCE, VALUE_KEY, drop_unused, entry_block, set_arg_source, single_return
from .session import IRState, Session, Stop, check_output, write_output
from .strategy import reduce_ir



@dataclass(frozen=True)
class NumericsReduceOptions:
    output_path: str | os.PathLike | None = None  # None: FILE.reduced.mlir beside the input
    budget_s: float = defaults.REDUCE_BUDGET_S  # wall clock, the localization included
    max_tries: int = defaults.REDUCE_MAX_TRIES  # candidates evaluated and run
    inputs_path: str | None = None      # .npz of the arguments; None: random
    random: RandomInputs = RandomInputs()
    function: str | None = None
    opt: str | None = None              # torch-mlir-opt
    tolerances: Tolerances = Tolerances()
    timeout_s: float = defaults.TIMEOUT_S  # the file's own runs (to the contract, the whole function)
    backend: BackendName = BackendName.REFBACKEND  # where the cut pieces run (execute.backends)
    cleanup: bool = True                # try the binary's canonicalize / symbol-dce
    # False: the IR reductions on the whole function (a benchmark's baseline)
    localize_first: bool = True
    out_dir: str | None = None          # parent of the work folder (default: temp dir)
    progress: Callable[[str], None] | None = None


@dataclass
class NumericsReduceResult:
    input_path: str
    pipeline: str                 # as given: FILE -> linalg
    output_path: str              # the reduced IR, at the torch backend contract
    inputs_path: str              # its arguments (.npz)
    expected_path: str            # the reference's values of its results (.npz)
    actual_path: str              # the RefBackend's values of its results (.npz)
    piece_pipeline: str           # what lowers the reduced IR (the to-linalg part)
    ops_before: int               # ops of the contract-level function's body
    ops_after: int                # ops of the reduced function's body
    computing_before: int         # of those, the ops that compute (no constants, lists)
    computing_after: int
    computing_ops: list[str]
    localization_runs: int
    localization_bound: float
    tries: int
    kept: int
    elapsed_s: float
    cpu_s: float                  # this process and its children (torch-mlir-opt, the worker)
    max_abs_diff: float
    stopped: Stopped = Stopped.DONE
    steps: list[str] = field(default_factory=list)
    culprit: str = ""             # the one op that computes wrong (its headline), when found

    def summary(self) -> str:
        why = {Stopped.BUDGET: " (budget spent: best so far)",
               Stopped.MAX_TRIES: " (max tries reached: best so far)"}.get(self.stopped, "")
        return (f"{self.ops_before} -> {self.ops_after} ops ({self.computing_before} -> "
                f"{self.computing_after} computing: {' -> '.join(self.computing_ops)}) in "
                f"{self.localization_runs} localization runs and {self.tries} tries "
                f"({self.kept} kept), {self.elapsed_s:.1f} s, {self.cpu_s:.1f} s CPU{why}")

    def to_json(self) -> dict:
        d = dict(self.__dict__)
        d["stopped"] = self.stopped.value
        return d


def _cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def reduce_numerics(path: str | os.PathLike, pipeline: str, *,
                    options: NumericsReduceOptions = NumericsReduceOptions()) -> NumericsReduceResult:
    """Reduces ``path``, whose numbers ``pipeline`` (to linalg) and the RefBackend get wrong, to a
    small program at the torch backend contract that still gets them wrong."""
    start, cpu_start = time.monotonic(), _cpu_s()
    src = Path(path)
    out = Path(options.output_path) if options.output_path else src.with_name(f"{src.stem}.reduced.mlir")
    check_output(src, out)
    say = options.progress or (lambda _line: None)
    say("taking the file to the torch backend contract and recording the reference's values")
    subject = prepare(src, SubjectOptions.of(pipeline, options), reference_of_file=False)
    probe_options = subject.probe_options()
    culprit = ""
    try:
        with search_runner(options.backend, timeout_s=options.timeout_s, work_dir=subject.work_dir) as worker:
            if options.localize_first:
                found = localize(Searcher(subject, worker, probe_options, say), confirm_first=False)
                if isinstance(found, ProbeResult):
                    raise NoMiscompileError(str(src), pipeline, found.outcome.value, found.describe())
                program = found.program
                say(f"the chain: {' -> '.join(subject.cuts.label(p) for p in found.chain)} "
                    f"({worker.runs} RefBackend runs)")
                # The culprit and what feeds it, nothing else: the one op alone when it is wrong
                # alone, else the chain's first wrong value and the ops that feed it.
                verdict = find_culprit(subject, worker, probe_options, chain=found.program,
                                       chain_pipeline=pipeline_name(subject.split.to_linalg),
                                       opinions=False, say=say)
                if verdict.culprit is not None and verdict.program is not None:
                    program = verdict.program
                    culprit = verdict.culprit.headline()
                    say(f"the culprit: {culprit}; reducing it")
            else:
                program = subject.cuts.build(-1, END)
            runs = worker.runs
            session = NumericsSession(subject.work_dir, out, options, probe_options, worker, start)
            state = session.begin(program.text, program.inputs(subject.values))
            try:
                reduce_ir(state)
            except Stop:
                pass
            with state.ctx:
                computing = computing_ops(state.best)
                entry = entry_block(find_function(state.best, None, "the reduced IR"))
                body = len(list(entry.operations)) - 1
            result = NumericsReduceResult(
                input_path=str(src), pipeline=pipeline, output_path=str(out),
                inputs_path=str(session.inputs_path), expected_path=str(session.expected_path),
                actual_path=str(session.actual_path),
                piece_pipeline=pipeline_name(subject.split.to_linalg),
                ops_before=subject.ops(), ops_after=body,
                computing_before=len(subject.cuts.computing()), computing_after=len(computing),
                computing_ops=[n.removeprefix("torch.") for n in computing],
                localization_runs=runs, localization_bound=run_bound(subject.ops()),
                tries=session.tries, kept=session.kept, elapsed_s=0.0, cpu_s=0.0,
                max_abs_diff=session.max_abs_diff, stopped=session.stopped, steps=session.steps,
                culprit=culprit)
    finally:  # the products lie beside -o; a work folder of our own is not left behind
        if options.out_dir is None:
            shutil.rmtree(subject.work_dir, ignore_errors=True)
    result.elapsed_s = time.monotonic() - start
    result.cpu_s = _cpu_s() - cpu_start  # the worker is waited for: its time is counted
    return result


@dataclass
class _Pending:
    table: dict[str, np.ndarray]
    text: str
    inputs: list[np.ndarray]
    expected: list
    actual: tuple
    max_abs_diff: float


class NumericsSession(Session):
    """The reducer's session with the numerics oracle: ``interesting`` evaluates and runs."""

    def __init__(self, workdir: Path, out: Path, options: NumericsReduceOptions,
                 probe: ProbeOptions, worker: SearchRunner, start: float):
        base = ReduceOptions(output_path=out, budget_s=options.budget_s, max_tries=options.max_tries,
                             opt=options.opt, splat_weights=False, cleanup=options.cleanup,
                             progress=options.progress)
        self.probe = probe
        self.worker = worker
        self.folder = workdir / "candidates"
        self.folder.mkdir(exist_ok=True)
        self.table: dict[str, np.ndarray] = {}
        self.pending: _Pending | None = None
        self.max_abs_diff = 0.0
        self.steps: list[str] = []
        self.inputs_path = out.with_name(f"{out.name.removesuffix('.mlir')}.inputs.npz")
        self.expected_path = out.with_name(f"{out.name.removesuffix('.mlir')}.expected.npz")
        self.actual_path = out.with_name(f"{out.name.removesuffix('.mlir')}.actual.npz")
        from harness.compiler.records import Outcome, RunRecord

        original = RunRecord(outcome=Outcome.SUCCESS, command=[], pipeline=probe.to_linalg,
                             input_path="", binary="", returncode=0, elapsed_s=1.0, stderr="")
        super().__init__(probe.to_linalg, original, base, workdir, out, start)
        self._keys = 0

    def begin(self, text: str, inputs: list[np.ndarray]) -> IRState:
        """The piece, keyed, as the best so far (after one run through the oracle)."""
        parsed = parse_ir(text)
        if parsed is None:
            raise InputFileError("the chain's program does not parse on the bindings: the IR the "
                                 "reduction started from is not one the wheel's MLIR reads")
        context, module = parsed
        with context:
            func = find_function(module, None, "the chain")
            for i, array in enumerate(inputs):
                key = f"in{i}"
                self.table[key] = np.asarray(array)
                set_arg_source(func, i, key)
            self._key_ops(module)
            drop_unused(func)  # what the cut left that nothing uses: no run needed to drop it
        state = IRState(self, context, module)
        if not self.interesting(state.text):
            raise NoMiscompileError("the chain", self.probe.to_linalg, "verified",
                                    "the chain cut out by the bisection no longer mismatches")
        self.keep(state.text, state.ops_now, "the chain", reduction=False)
        return state

    def _key_ops(self, module: ir.Operation) -> None:
        for op in (o.operation for o in entry_block(find_function(module, None, "the IR")).operations):
            if VALUE_KEY not in op.attributes and len(op.results):
                self._keys += 1
                op.attributes[VALUE_KEY] = ir.StringAttr.get(f"v{self._keys}")

    # --- the oracle --------------------------------------------------------------------------

    def interesting(self, text: str) -> bool:
        digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
        if digest in self._seen:
            return False
        self._check_budget()
        self._seen.add(digest)
        self.tries += 1
        parsed = parse_ir(text)
        if parsed is None:
            return False
        context, module = parsed
        try:
            with context:
                return self._judge(module)
        finally:
            with context:
                module.erase()

    def _judge(self, module: ir.Operation) -> bool:
        func = find_function(module, None, "the candidate")
        ret = single_return(func)
        if ret is None or not len(ret.operands):
            return False  # a program that returns nothing cannot be run and compared
        sources = _arg_sources(func)
        if sources is None or any(s not in self.table for s in sources):
            return False
        inputs = [self.table[s] for s in sources]
        try:
            reference = evaluate(module, inputs, ReferenceOptions(keep_values=True))
        except (UnsupportedOpsError, ReferenceEvaluationError, HarnessError, RuntimeError):
            return False
        if reference.random_ops or reference.type_notes:
            return False
        table: dict[str, np.ndarray | None] = {s: self.table[s] for s in sources}  # None: bf16
        ops = [o.operation for o in entry_block(func).operations]
        for record in reference.values:
            op = ops[record.index]
            if VALUE_KEY not in op.attributes:
                continue
            key = ir.StringAttr(op.attributes[VALUE_KEY]).value
            for r, value in enumerate(record.values):
                if isinstance(value, torch.Tensor):
                    table[f"{key}:{r}"] = value.detach().contiguous().numpy().copy() \
                        if value.dtype != torch.bfloat16 else None
        clean = _strip_keys(module)
        path = self.folder / "candidate.mlir"
        path.write_text(clean)
        expected = list(reference.outputs)
        try:  # a candidate returning a scalar (!torch.int) cannot be run: not kept
            signature = signature_of(func)
        except UnsupportedDTypeError:
            return False
        self.worker.timeout_s = max(1.0, min(self.try_timeout * 4, self.remaining_s()))
        result = run_program(path, inputs, expected, signature, worker=self.worker,
                             options=self.probe, work_dir=self.folder, wide=_wide(module, inputs),
                             terms=[_module_terms(func)] * len(expected))
        worst = self.verdict(result)
        if worst is None:
            return False
        self.pending = _Pending({k: v for k, v in table.items() if v is not None}, clean, inputs,
                                expected, result.outputs, worst)
        return True

    def verdict(self, result: ProbeResult) -> float | None:
        """None when the candidate is not kept; else its score (the worst difference). A
        subclass keeps another kind of failure with the same evaluation and inputs."""
        if not result.mismatch or result.numerics is None:  # a mismatch has its numerics
            return None
        return max((o.max_abs_diff for o in result.numerics.outputs if not o.ok), default=0.0)

    def score_text(self, score: float) -> str:
        return f"max abs diff {score:.3g}"

    def keep(self, text: str, ops: int, what: str, *, reduction: bool = True) -> None:
        pending = self.pending
        assert pending is not None, "keep follows an interesting candidate"
        self.kept += reduction
        self.table = pending.table
        self.max_abs_diff = pending.max_abs_diff
        write_output(self.out, pending.text)
        save_npz(self.inputs_path, pending.inputs)
        save_npz(self.expected_path, [_numpy(v) for v in pending.expected], prefix="result")
        save_npz(self.actual_path, pending.actual, prefix="result")
        line = (f"{what}: {ops} ops in the module, {self.score_text(pending.max_abs_diff)} "
                f"(try {self.tries}, {time.monotonic() - self.start:.1f} s)")
        self.steps.append(line)
        if self.options.progress:
            self.options.progress(line)


def _arg_sources(func: ir.Operation) -> list[str] | None:
    count = len(entry_block(func).arguments)
    if not count:
        return []
    if "arg_attrs" not in func.attributes:
        return None
    sources = []
    for item in ir.ArrayAttr(func.attributes["arg_attrs"]):
        entries = ir.DictAttr(item)
        if ARG_SOURCE not in entries:
            return None
        sources.append(ir.StringAttr(entries[ARG_SOURCE]).value)
    return sources if len(sources) == count else None


def _strip_keys(module: ir.Operation) -> str:
    """The candidate's text without the reducer's keys (a clone is stripped; ``module`` keeps
    them for the table)."""
    clone = module.clone()
    try:
        stack = [clone]
        while stack:
            op = stack.pop()
            if VALUE_KEY in op.attributes:
                del op.attributes[VALUE_KEY]
            if "arg_attrs" in op.attributes:
                items = []
                for item in ir.ArrayAttr(op.attributes["arg_attrs"]):
                    items.append(ir.DictAttr.get({a.name: a.attr for a in ir.DictAttr(item)
                                                  if a.name != ARG_SOURCE}))
                if any(len(ir.DictAttr(i)) for i in items):
                    op.attributes["arg_attrs"] = ir.ArrayAttr.get(items)
                else:
                    del op.attributes["arg_attrs"]
            for region in op.regions:
                for block in region.blocks:
                    stack.extend(child.operation for child in block.operations)
        return print_op(clone)
    finally:
        clone.erase()


def _numpy(value: torch.Tensor | npt.ArrayLike) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().float().numpy() if value.dtype == torch.bfloat16 else value.detach().numpy()
    return np.asarray(value)


__all__ = ["NumericsReduceOptions", "NumericsReduceResult", "NumericsSession", "reduce_numerics"]


def _wide(module: ir.Operation, inputs: list) -> list | None:
    """The candidate evaluated in float64 on its inputs widened: the float64 rule judges it as it
    judged the op the reduction started from (None: it does not evaluate so)."""
    try:
        found = evaluate(module, inputs, ReferenceOptions(check_types=False, widen=True))
    except Exception:  # a float32-only kernel: the flat tolerance judges it
        return None
    return flatten_outputs(found.outputs)


_SIZES = re.compile(r"^!torch\.vtensor<\[([0-9,]*)\]")


def _module_terms(func: ir.Operation) -> int:
    """The longest in-order sum of the candidate (:func:`~..numerics.diffs.terms_of` read from
    its ops' static types): its outputs are judged with the float64 rule's floor of that sum, as
    the search judged the piece it started from (a matmul and a bias add: 2 ulp is rounding)."""
    from ..numerics.diffs import terms_of

    def shape(value: ir.Value) -> tuple[int, ...] | None:
        found = _SIZES.match(str(value.type))
        return tuple(int(s) for s in found[1].split(",") if s) if found else None

    most = 1
    for op in entry_block(func).operations:
        name = op.operation.name
        if not name.startswith("torch.aten."):
            continue
        shapes = [shape(v) for v in op.operation.operands]
        result = shape(op.operation.results[0]) if len(op.operation.results) else None
        numel = int(np.prod(result)) if result is not None else None
        most = max(most, terms_of(name.removeprefix("torch."), shapes, None, numel))
    return most
