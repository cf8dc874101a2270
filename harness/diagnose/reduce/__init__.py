"""Shrinks a failing IR file while it keeps failing the same way.

The interestingness test is the runner itself: a candidate is kept when torch-mlir-opt, run on
it with the same pipeline, fails as the original did - the same ``RunRecord.signature`` (outcome
and first diagnostic, or the same crash), and for a diagnosed failure the same op at the same
location (``session.Failure``). Each candidate is built on the MLIR Python bindings and verified
before it is run, so the output is always IR the binary parses; an input the bindings cannot
parse (a dialect the wheel's Python side lacks) is reduced line by line instead, where locations
move and only the signature and the op decide. An input torch-mlir-opt cannot parse either is
refused: it is not a compiler bug.

- ``strategy``: the reductions (one class each) under one delta-debugging loop;
- ``edits``: the IR edits they are made of, on the bindings (``torch_types`` reads torch types);
- ``session``: runs candidates (the best input so far, as a module or as lines), the budget,
  the same-failure test and the output file.

A candidate must be smaller (ops, then characters) to be tried, so the search terminates; the
best file so far is written atomically after every step, so a spent budget loses nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

from harness import defaults
from harness.compiler import pipelines
from harness.compiler.irfile import unique_dir
from harness.compiler.mlir import count_ops, is_bytecode
from harness.compiler.records import BACKEND_CONTRACT, BACKEND_ILLEGAL, RunRecord
from harness.compiler.runner import RunOptions, check_input, run_pipeline
from harness.errors import InputFileError, NothingToReduceError

from .edits import parse_input
from .options import AtFailingPass, ReduceOptions, Strategy
from .session import (
    Failure,
    IRState,
    LineState,
    Session,
    Stop,
    Stopped,
    check_output,
    write_output,
)
from .strategy import SliceToSubject, reduce_ir, reduce_lines
from .subject import subject_ops

__all__ = ["AtFailingPass", "ReduceOptions", "ReduceResult",
           "Stopped", "Strategy", "reduce_file"]

_FIRST_TIMEOUT_MIN_S = 60.0
# What a message quoted in a refusal is cut to (a bogus "op name" can be kilobytes long).
_QUOTE_CHARS = 200


@dataclass
class ReduceResult:
    """What a reduction did; ``output_path`` holds the smallest file that kept ``signature``."""

    ops_before: int
    ops_after: int
    tries: int
    kept: int
    elapsed_s: float
    signature: str
    output_path: str
    input_path: str = ""
    pipeline: str = ""  # as the caller named it
    pipeline_text: str = ""  # the -pass-pipeline value that was run
    mode: Strategy = Strategy.IR  # LINES when the input was not parseable by the bindings
    stopped: Stopped = Stopped.DONE
    subject: tuple[str, ...] = ()  # the op names every kept candidate still holds
    # Reduced at the failing pass: its name, and the ops of the IR just before it (the output
    # then fails ``pipeline_text``, that pass alone; ``ops_before`` counts the input's ops).
    failing_pass: str = ""
    pre_pass_ops: int = 0

    def summary(self) -> str:
        why = {Stopped.BUDGET: " (budget spent: best so far)",
               Stopped.MAX_TRIES: " (max tries reached: best so far)"}.get(self.stopped, "")
        at = (f" (from the {self.pre_pass_ops}-op IR just before {self.failing_pass}, through "
              "that pass alone)") if self.failing_pass else ""
        return (f"{self.ops_before} -> {self.ops_after} ops{at} in {self.tries} tries "
                f"({self.kept} kept), {self.elapsed_s:.1f} s{why}")


def reduce_file(path: str | os.PathLike, pipeline: str, *,
                options: ReduceOptions = ReduceOptions()) -> ReduceResult:
    """Reduces ``path``, which fails ``pipeline``, to a small file that fails the same way."""
    start = time.monotonic()
    strategy = Strategy.parse(options.strategy)
    src = check_input(path)  # before the output check, which creates folders beside it
    # with the caller's own test (IREE's compile) the pipeline is its label, never resolved
    textual = pipeline if options.runner is not None else pipelines.default().resolve(pipeline)
    out = Path(options.output_path) if options.output_path else src.with_name(f"{src.stem}.reduced.mlir")
    check_output(src, out)
    raw = src.read_bytes()
    # bisect names torch-mlir-opt's passes, not the caller's test's
    staged = AtFailingPass.NEVER if options.runner else AtFailingPass.parse(options.at_failing_pass)
    if staged is AtFailingPass.ALWAYS or (staged is AtFailingPass.OBJECT_GRAPH and _object_graph(raw)):
        at_pass = _reduce_at_failing_pass(src, raw, pipeline, textual, out, options, start)
        if at_pass is not None:
            return at_pass
    original = _original_run(src, textual, options)
    if original.ok:
        raise NothingToReduceError(str(src), pipeline)
    bytecode = is_bytecode(raw)
    text = "" if bytecode else raw.decode(errors="replace")
    parsed = parse_input(raw if bytecode else text, original.input_path)
    if parsed is None:
        _refuse_unreadable(src, original, options)
        if bytecode:
            raise InputFileError(f"cannot reduce {src}: it is MLIR bytecode the MLIR Python bindings "
                                 "cannot read. Convert it to text with 'torch-mlir-opt FILE -o OUT.mlir' "
                                 "and reduce that.")
    workdir = unique_dir("reduce-")
    try:
        session = Session(textual, original, options, workdir, out, start)
        session.subject = subject_ops(original, text, (original.input_path, str(src)))
        write_output(out, raw)  # the best so far, until something smaller fails alike
        state: IRState | LineState | None = None
        try:
            if parsed is not None and strategy is Strategy.IR:
                state = IRState(session, *parsed)
                # The subject's slice first: a big input's every run is slow, and a kept slice
                # was printed by the bindings and failed alike, which the round trip asks.
                if not SliceToSubject.kept(state) and not state.roundtrips():
                    if bytecode:  # no text to fall back on: lines of bytecode mean nothing
                        out.unlink(missing_ok=True)
                        raise InputFileError(
                            f"cannot reduce {src}: it is MLIR bytecode, and printed as text by the "
                            f"MLIR Python bindings it no longer fails as '{session.failure}'. "
                            "Convert it to text with 'torch-mlir-opt FILE -o OUT.mlir' and reduce that.")
                    state = None
            if isinstance(state, IRState):
                reduce_ir(state)
            else:  # None: no IR, or it does not print back as it was
                session.by_lines()
                state = LineState(session, text)
                reduce_lines(state)
        except Stop:
            pass
        assert state is not None
        return ReduceResult(
            ops_before=state.ops_before, ops_after=state.ops_now, tries=session.tries,
            kept=session.kept, elapsed_s=time.monotonic() - start, signature=str(session.failure),
            output_path=str(out), input_path=str(src), pipeline=pipeline, pipeline_text=textual,
            mode=Strategy.IR if isinstance(state, IRState) else Strategy.LINES,
            stopped=session.stopped, subject=session.subject,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _object_graph(raw: bytes) -> bool:
    """TorchScript's object-graph IR (what torchscript-to-torch starts from)."""
    return b"torch.class_type" in raw or b"torch.nn_module" in raw


def _reduce_at_failing_pass(src: Path, raw: bytes, pipeline: str, textual: str, out: Path,
                            options: ReduceOptions, start: float) -> ReduceResult | None:
    """The IR just before the failing pass (bisect: MLIR's local crash reproducer), reduced
    through that pass alone; None when bisect names no pass whose replay fails the same way."""
    from ..bisect import BisectResult, Replay, bisect  # tools.bisect never imports the reducer

    workdir = unique_dir("reduce-bisect-")
    try:
        # The input's own run is bisect's first: a big model's may take minutes on a busy
        # machine, and cut short it proves nothing, so it gets the runs' own timeout.
        found: _AtPass | BisectResult | None = _at_contract(src, textual, options, workdir)
        if found is None:
            # A diagnosed failure is not replayed by bisect: the pass alone on the IR before it
            # costs as much as the whole pipeline on a big model; the candidates replay it.
            found = bisect(src, textual, opt=options.opt, out_dir=workdir,
                           timeout_s=options.try_timeout_s or defaults.TIMEOUT_S, blockers=False,
                           replay=Replay.CRASHES)
        if found.first is not None and found.first.ok:
            raise NothingToReduceError(str(src), pipeline)
        single = found.failing_pass_pipeline
        if not (found.pre_pass_ir and single and found.first is not None) or single == textual:
            return None
        if found.replay is not None:  # a crash or a hang: bisect replayed it
            if not found.reproduced:
                return None
            original = found.replay
        else:  # run 1's diagnostics stand for the replay's until a candidate fails alike
            original = replace(found.first, pipeline=pipelines.default().resolve(single),
                               input_path=found.pre_pass_ir)
        # What bisect left of the budget, and at least a quarter of it: the subject's slice, the
        # first candidates, is what makes a big input small.
        left = options.budget_s - (time.monotonic() - start)
        staged = replace(options, at_failing_pass=AtFailingPass.NEVER, output_path=out,
                         original=original, budget_s=max(left, options.budget_s / 4))
        result = reduce_file(found.pre_pass_ir, single, options=staged)
        if found.replay is None and result.kept == 0 and not _replays(found.pre_pass_ir, single,
                                                                     original, staged):
            return None  # the pass alone does not fail as run 1 did: reduce the whole pipeline
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    parsed = parse_input(raw, str(src))
    result.pre_pass_ops = result.ops_before
    if parsed is not None:
        with parsed[0]:
            result.ops_before = count_ops(parsed[1])
    result.failing_pass = found.failing_pass
    result.input_path, result.pipeline = str(src), pipeline
    result.elapsed_s = time.monotonic() - start
    return result


CONTRACT_PASS = "torch-lower-to-backend-contract"
# The pass itself and torch-mlir's pipelines that end in it (Passes.cpp; the dynamo export
# pipeline does not run it).
_REACH_CONTRACT = (CONTRACT_PASS, "torchscript-module-to-torch-backend-pipeline",
                   "torch-function-to-torch-backend-pipeline")
_DUMP_HEADER = re.compile(r"^// -----// IR Dump Before \S+: (?P<pass>.+?) //----- //\n")


@dataclass
class _AtPass:
    """Where a failure's pass is and the IR before it (bisect's result, or ``_at_contract``'s)."""

    first: RunRecord
    failing_pass: str
    failing_pass_pipeline: str
    pre_pass_ir: str
    replay: RunRecord | None = None
    reproduced: bool = False


def _dump_index(path: Path) -> int:
    """MLIR's tree dump names files ``N_PASS.mlir`` in the order the passes ran."""
    head = path.name.split("_", 1)[0]
    return int(head) if head.isdigit() else -1


def _at_contract(src: Path, textual: str, options: ReduceOptions, workdir: Path) -> _AtPass | None:
    """A backend-contract failure (TorchScript's usual one) found in one plain run: the IR
    MLIR prints before torch-lower-to-backend-contract is the IR before the failing pass.
    Bisect's local reproducer snapshots the module before every pass instead, which on
    longformer's 4,034 ops costs 13.1 s CPU against this run's 4.4 s. None when the run does
    not end in a contract error after that dump: bisect then finds the pass."""
    if not any(name in textual for name in _REACH_CONTRACT):
        return None  # the pipeline never runs the contract pass: no run to spend
    tree = workdir / "before"
    record = run_pipeline(src, textual, opt=options.opt, options=RunOptions(
        timeout_s=options.try_timeout_s or defaults.TIMEOUT_S,
        extra_args=(f"-mlir-print-ir-before={CONTRACT_PASS}", f"--mlir-print-ir-tree-dir={tree}",
                    "--mlir-print-debuginfo")))
    first = record.first_error()
    dumps = sorted(tree.glob(f"*/*_{CONTRACT_PASS}.mlir"), key=_dump_index)
    if record.ok or record.outcome.is_crash or first is None or not dumps \
            or not first.message.startswith((BACKEND_ILLEGAL, BACKEND_CONTRACT)):
        return None
    text = dumps[-1].read_text(errors="replace")
    header = _DUMP_HEADER.match(text)
    if header is None:
        return None
    pre_ir = workdir / f"before-{CONTRACT_PASS}.mlir"
    pre_ir.write_text(text[header.end():])
    return _AtPass(record, CONTRACT_PASS, f"builtin.module({header.group('pass')})", str(pre_ir))


def _replays(pre_pass_ir: str, single: str, original: RunRecord, options: ReduceOptions) -> bool:
    """The failing pass alone fails on the IR before it as the whole pipeline did (run 1)."""
    replay = run_pipeline(pre_pass_ir, single, opt=options.opt, options=_run_options(options))
    return Failure.of(replay) == Failure.of(original)


def _first_timeout(options: ReduceOptions) -> float:
    """The original run decides what to keep, so a slow input (a big model with its weights
    takes tens of seconds) must not be mistaken for a hang: it gets at least a minute, or the
    whole budget. Reducing a real hang, pass --timeout (try_timeout_s) to keep it short."""
    return options.try_timeout_s or max(_FIRST_TIMEOUT_MIN_S, options.budget_s)


def _run_options(options: ReduceOptions) -> RunOptions:
    extra = ("-mlir-disable-threading",) if options.disable_threading else ()
    return RunOptions(timeout_s=_first_timeout(options), extra_args=extra)


def _original_run(src: Path, textual: str, options: ReduceOptions) -> RunRecord:
    """The input's run: the caller's when it is of this file and pipeline, else a new one."""
    given = options.original
    if given is not None and given.pipeline == textual and \
            Path(given.input_path).resolve() == src.resolve():
        return given
    if options.runner is not None:
        return options.runner(src, options.try_timeout_s or defaults.TIMEOUT_S)
    return run_pipeline(src, textual, opt=options.opt, options=_run_options(options))


def _refuse_unreadable(src: Path, original: RunRecord, options: ReduceOptions) -> None:
    """Raises when torch-mlir-opt rejects the file before running any pass (random bytes,
    malformed or invalid MLIR): there is no compiler bug to keep. A crash while reading it is
    one, and is reduced by lines."""
    if original.outcome.is_crash:
        return
    record = run_pipeline(src, "builtin.module()", opt=options.opt, options=_run_options(options))
    if record.ok or record.outcome.is_crash:
        return
    first = record.first_error()
    if first is not None:
        message = (first.message if len(first.message) <= _QUOTE_CHARS
                   else first.message[:_QUOTE_CHARS] + "...")
        why = f"at {first.location}: {message}"
    else:
        why = (record.stderr.strip().splitlines() or ["no diagnostic"])[0][:_QUOTE_CHARS]
    raise InputFileError(
        f"cannot reduce {src}: torch-mlir-opt cannot read it ({why}). This is not a torch-mlir "
        "bug: the file is not valid MLIR. Fix the file, or write it again (harness emit, "
        "harness opt), and reduce that.")
