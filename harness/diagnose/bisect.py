"""Which pass of a pipeline fails first, and the IR just before it: in two torch-mlir-opt runs.

Built on MLIR's own machinery rather than running passes one by one:

1. run the pipeline once with ``--mlir-pass-pipeline-crash-reproducer=F
   --mlir-pass-pipeline-local-reproducer -mlir-disable-threading`` (plus
   ``--mlir-print-debuginfo`` so F keeps the input's locations, and ``--dump-pass-pipeline``
   for the pass list). On a crash *and* on a plain pass failure MLIR then writes to F the IR
   just before the failing pass with an ``external_resources: { mlir_reproducer: { pipeline:
   ... } }`` block holding that one pass, and notes ``Pipeline failed while executing `PASS`
   on 'OP' operation``. A crash is recovered in-process (exit 1, no stack dump), and a hang
   interrupted by the runner's SIGABRT is recovered the same way.
2. replay F through the pass it records, without the reproducer flags, so a crash prints its
   stack; the replay must fail the same way (same signature; for a crash, in the same pass).

Run 1 also asks for MLIR's pass timing tree (``-mlir-timing -mlir-timing-display=tree``,
printed even when the pipeline fails or crashes under the reproducer flags): it lists the passes
that ran, nested as run, so the failing pass's position is the last one that ran, not every
position of its name (a canonicalize listed four times crashes in one of them).

For a legalization failure the op a reporting pass names (``torch-finalizing-backend-type-
conversion`` saying "failed to legalize operation") may be a symptom; ``harness.diagnose.blockers``
finds the op whose conversion failed and replays the pipeline's conversion passes one at a time
on each op alone, so :attr:`BisectResult.responsible` says which conversion lowers it, that none
does, or which lowers the op a named fix replaces it by. No table of "op -> pass" is kept.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from pathlib import Path

from harness.compiler import jsonfile
from harness import defaults
from harness.compiler.crash import canonical_pass_name
from harness.compiler.irfile import unique_dir, write_atomically
from harness.compiler.outcomes import Signature
from harness.compiler.pipeline_text import dumped_pipeline, parse_pipeline
from harness.compiler.records import Outcome, RunRecord
from harness.compiler.runner import (
    RunOptions,
    repro_command,
    run_pipeline,
)
from harness.compiler.text import unescape_mlir_string
from harness.errors import PipelineConfigError

from .onnx_terms import no_pattern, node_of, onnx_op_name, onnx_opset
from .blockers import BlockerAnalysis, analyze
from .registry import describe_unregistered
from .timing import NOT_PASSES, timing_nodes


class _Expect(Enum):
    """How run 1 ended, which the replay of the failing pass alone must show again."""

    FAILURE = "failure"  # its own error diagnostics
    CRASH = "crash"
    HANG = "hang"


@dataclass
class Responsibility:
    """An op the failing pass left illegal, and which conversion pass of the pipeline lowers it,
    found by replaying them one at a time on it alone (``harness.diagnose.blockers``)."""

    op: str
    blocker: bool                  # fails alone; else a symptom of a blocker that uses it
    converted_by: list[str] = field(default_factory=list)  # conversions that lower it alone
    symptom_of: list[str] = field(default_factory=list)    # blockers it is left behind by
    equivalent_op: str = ""        # what a named fix replaces it by
    fix: str = ""                  # that fix's name
    equivalent_converted_by: list[str] = field(default_factory=list)
    onnx_opset: int | None = None  # an ONNX op's: the opset its file records
    onnx_node: str = ""            # an ONNX op's: its node's name (the importer's name location)

    @property
    def responsible_pass(self) -> str:
        """The conversion that should have lowered it: the one that lowers it (or, when none
        does, the op a fix replaces it by) alone; "" when no conversion of the pipeline does."""
        return (self.converted_by or self.equivalent_converted_by or [""])[0]

    def describe(self) -> str:
        if not self.blocker:
            by = f"{self.converted_by[0]} lowers it alone" if self.converted_by else "it lowers alone"
            of = " and ".join(self.symptom_of) or "another op"
            return f"{by}; it is left only because its user {of} was not converted"
        if self.converted_by:
            return (f"{self.converted_by[0]} lowers it alone but not in this input: the failure "
                    "depends on what surrounds it")
        unregistered = describe_unregistered(self.op)
        if unregistered is not None:
            return unregistered
        if onnx_op_name(self.op):
            return no_pattern(onnx_op_name(self.op), self.onnx_opset, self.onnx_node)
        text = f"no conversion pass of this pipeline lowers {self.op}"
        if self.equivalent_converted_by:
            text += (f"; {self.equivalent_converted_by[0]} lowers the equivalent "
                     f"{self.equivalent_op} (fix: {self.fix}): the conversion that should lower it")
        return text

    @classmethod
    def from_analysis(cls, analysis: BlockerAnalysis) -> list[Responsibility]:
        out = []
        for op in analysis.illegal:
            eq = op.equivalent
            out.append(cls(op.name, op.blocker, list(op.converted_by),
                           [b.name for b in analysis.blockers
                            if not op.blocker and op in analysis.explained_by(b.name)],
                           eq.op if eq else "", eq.fix if eq else "",
                           list(eq.converted_by) if eq else [],
                           onnx_node=node_of(op.location) if onnx_op_name(op.name) else ""))
        return out


@dataclass
class BisectResult:
    input_path: str
    pipeline: str
    outcome: Outcome               # what the failing pass did (replay's outcome when reproduced)
    failing_pass: str = ""         # the pass argument, e.g. convert-torch-to-linalg
    failing_pass_name: str = ""    # MLIR's name for it, e.g. ConvertTorchToLinalg
    failing_pass_pipeline: str = ""  # the pass alone, nested: builtin.module(func.func(...))
    failing_on: str = ""           # "'func.func' operation: @f"
    pass_positions: list[int] = field(default_factory=list)  # 1-based in pipeline_passes
    position_note: str = ""        # how the position was found, or why it is not one
    pipeline_passes: list[str] = field(default_factory=list)  # as torch-mlir-opt expanded it
    pre_pass_ir: str = ""          # the IR just before the failing pass
    reproduced: bool = False
    signature: Signature | None = None
    replay_command: str = ""
    responsible: list[Responsibility] = field(default_factory=list)
    blockers: BlockerAnalysis | None = None  # legalization failures: the left-over ops alone
    out_dir: str = ""
    runs: int = 0
    detail: str = ""               # why no pass was named, or how the replay differed
    first: RunRecord | None = None
    replay: RunRecord | None = None

    @property
    def found(self) -> bool:
        return bool(self.failing_pass)

    def to_json(self) -> dict:
        d = jsonfile.plain(asdict(self))
        d["outcome"] = self.outcome.value
        d["signature"] = str(self.signature) if self.signature else ""
        d["blockers"] = self.blockers.to_json() if self.blockers else None
        d["first"] = self.first.to_json() if self.first else None
        d["replay"] = self.replay.to_json() if self.replay else None
        return d

    def render(self) -> list[str]:
        """The human summary ``harness bisect`` prints."""
        lines = [(f"bisect: {Path(self.input_path).name} through {self.pipeline} "
                  f"({self.runs} torch-mlir-opt run{'s' if self.runs != 1 else ''})")]
        if self.first is not None and self.first.ok:
            lines.append("the pipeline succeeds: nothing to bisect")
            return lines
        if not self.found:
            lines.append(f"no failing pass named: {self.detail}")
            lines.append(f"outcome: {self.outcome.value}; signature: {self.signature}")
            return lines
        where = f", {self.position()}" if self.pass_positions else ""
        lines.append(f"first failing pass: {self.failing_pass} ({self.failing_pass_name} on "
                     f"{self.failing_on}{where})")
        lines.append(f"outcome:   {self.outcome.value}")
        lines.append(f"signature: {self.signature}")
        lines.append(f"IR before it: {self.pre_pass_ir}")
        lines.append(f"replay: {'reproduced' if self.reproduced else 'DID NOT reproduce'}: "
                     f"{self.replay_command}")
        if self.detail:
            lines.append(f"  {self.detail}")
        if self.responsible:
            lead = (f"{self.failing_pass} only reports what earlier passes left"
                    if _REPORTING_PASSES.match(self.failing_pass)
                    else f"{self.failing_pass} left these ops illegal")
            runs = self.blockers.runs if self.blockers else 0
            lines.append(f"{lead}; each alone, through this pipeline's conversion passes one at "
                         f"a time ({runs} runs):")
            width = max(len(r.op) for r in self.responsible)
            for r in self.responsible:
                kind = "blocker" if r.blocker else "symptom"
                lines.append(f"  {r.op:<{width}}  {kind}: {r.describe()}")
        elif self.blockers is not None and self.blockers.detail:
            lines.append(f"no blocker analysis: {self.blockers.detail}")
        lines.append(f"files: {self.out_dir}")
        return lines

    def position(self) -> str:
        """``pass 6 of 18``; every position of the name when the run did not say which."""
        where = f"pass {'/'.join(map(str, self.pass_positions))} of {len(self.pipeline_passes)}"
        return where + (f" ({self.position_note})" if self.position_note else "")


# ---------------------------------------------------------------------------------------------
# What MLIR printed

_NOTE = re.compile(
    r"Pipeline failed while executing \[?`(?P<pass>[^`]+)` on '(?P<op>[^']+)' operation"
    r"(?:: (?P<sym>@[^\s:\]]+))?\]?: reproducer generated at `(?P<path>[^`]+)`"
)
_REPRO_PIPELINE = re.compile(r'pipeline:\s*"(?P<p>(?:[^"\\]|\\.)*)"')


def reproducer_note(record: RunRecord) -> re.Match | None:
    for diag in record.diagnostics:
        for text in [diag.message] + [n.message for n in diag.notes]:
            m = _NOTE.search(text)
            if m:
                return m
    return None


def reproducer_pipeline(text: str) -> str:
    """The ``pipeline:`` of a reproducer's ``mlir_reproducer`` resource ("" if absent)."""
    m = _REPRO_PIPELINE.search(text)
    return unescape_mlir_string(m.group("p")) if m else ""


# The resource sits in the file's metadata at its end; a model's reproducer holds its weights
# (reading a 100 MB one as text held it three times over), so only the tail is read.
_REPRO_TAIL = 1 << 20


def reproducer_pipeline_of_file(path: Path) -> str:
    """``reproducer_pipeline`` of a file, reading its last MiB, then the whole file in
    overlapping chunks only when the resource is not there."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - _REPRO_TAIL))
        found = reproducer_pipeline(f.read().decode(errors="replace"))
        if found or size <= _REPRO_TAIL:
            return found
        f.seek(0)
        carry = b""
        while chunk := f.read(_REPRO_TAIL):
            window = carry + chunk
            if (b"mlir_reproducer" in window
                    and (found := reproducer_pipeline(window.decode(errors="replace")))):
                return found
            carry = window[-(_REPRO_TAIL // 4):]
    return ""


# ---------------------------------------------------------------------------------------------
# Who should have lowered a left-over op

# Passes that only report ops earlier conversions left (they convert types or check contracts).
_REPORTING_PASSES = re.compile(
    r"^torch-(?:finalizing-backend-type-conversion|func-backend-type-conversion|verify-)"
)


@dataclass
class RanPass:
    name: str                 # MLIR's pass name, as the timing tree prints it
    nested: list[str] = field(default_factory=list)  # passes of the pipelines it ran itself


def ran_passes(stderr: str) -> list[RanPass]:
    """The pipeline's own passes that ran, in order, from MLIR's timing tree
    (``-mlir-timing-display=tree``): children of an "'op' Pipeline" node are the pipeline's
    passes; children of a pass are its analyses or the dynamic pipelines it ran."""
    ran: list[RanPass] = []
    stack: list[tuple[int, bool]] = []  # (depth, is a pipeline node)
    for depth, name, _ in timing_nodes(stderr):
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if (depth == 0 and name in NOT_PASSES) or name.startswith("(A)"):
            continue
        pipeline = name.endswith(" Pipeline")
        if all(is_pipeline for _, is_pipeline in stack):
            if not pipeline:
                ran.append(RanPass(name))
        elif ran and not pipeline:
            ran[-1].nested.append(name)
        stack.append((depth, pipeline))
    return ran


def failing_position(stderr: str, failing_name: str, failing_arg: str,
                     pipeline_passes: list[str]) -> tuple[int | None, str]:
    """The 1-based position of the pass that failed, and how it was found; (None, why) when
    the timing tree does not tell."""
    ran = ran_passes(stderr)
    if not ran:
        return None, "MLIR printed no pass timing"
    last = len(ran)
    listed = pipeline_passes[last - 1] if last <= len(pipeline_passes) else ""
    if ran[-1].name == failing_name and listed == failing_arg:
        return last, ""
    if failing_name in ran[-1].nested and listed:
        return last, f"inside a pipeline that {listed} runs itself"
    return None, "the passes that ran do not line up with the pipeline's list"


def responsible_passes(analysis: BlockerAnalysis | None) -> list[Responsibility]:
    """For a legalization failure: each left-over op and the conversion that lowers it."""
    return Responsibility.from_analysis(analysis) if analysis is not None else []


# ---------------------------------------------------------------------------------------------
# The two runs

def _same_failure(first: RunRecord, replay: RunRecord, expect: _Expect,
                  failing_name: str) -> tuple[bool, str]:
    """Whether the replay shows the failure run 1 localized (``expect``: how run 1 ended)."""
    if replay.ok:
        return False, ("the replay succeeded: the failure depends on passes before this one "
                       "(an analysis or state they leave behind) or on the whole pipeline's options")
    if expect is _Expect.HANG:
        return (replay.outcome is Outcome.TIMEOUT,
                "" if replay.outcome is Outcome.TIMEOUT
                else f"run 1 hung; the replay ended in {replay.outcome.value}")
    if expect is _Expect.CRASH:
        if replay.outcome not in (Outcome.CRASH, Outcome.ASSERTION):
            return False, f"run 1 crashed in {failing_name}; the replay ended in {replay.outcome.value}"
        crashed_in = replay.crash.pass_name if replay.crash else ""
        if crashed_in and canonical_pass_name(crashed_in) != canonical_pass_name(failing_name):
            return False, f"run 1 crashed in {failing_name}; the replay crashed in {crashed_in}"
        return True, ""
    if replay.signature != first.signature:
        return False, f"run 1: {first.signature}; replay: {replay.signature}"
    return True, ""


class Replay(Enum):
    """Which failures bisect replays through the failing pass alone (a second run of it)."""

    ALL = "all"          # every one: whether the pass alone fails the same way
    CRASHES = "crashes"  # crashes and hangs (for their stack); a diagnosed failure is the caller's
    NONE = "none"        # none: the caller reads only the pass's name (a runaway costs minutes)


def bisect(input_path: str | os.PathLike, pipeline: str, *, opt: str | None = None,
           out_dir: str | os.PathLike | None = None,
           timeout_s: float = defaults.TIMEOUT_S, blockers: bool = True,
           replay: Replay = Replay.ALL, memory_limit_mb: int | None = None) -> BisectResult:
    """Names the first pass of ``pipeline`` that fails or crashes on ``input_path``.

    Writes into a fresh folder under ``out_dir`` (the temp dir if None): the IR before the
    failing pass (``before-PASS.mlir``), both runs' stderr and ``bisect.json``. ``blockers``:
    for a legalization failure, also replay each left-over op alone through the pipeline's
    conversion passes (``harness.diagnose.blockers``, ~15 small runs) to say which should have
    lowered it. ``replay`` (:class:`Replay`): which failures are replayed through the failing
    pass; the reducer replays a diagnosed failure on smaller IR itself (its candidates are
    replays), since on a big model the pass alone costs as much as the whole pipeline
    (longformer: torch-lower-to-backend-contract alone, 4.8 s of the pipeline's 4.5-5.3 s CPU),
    and a port reads only the pass's name. ``memory_limit_mb``: each run's address space.
    """
    input_path = os.fspath(input_path)
    stem = re.sub(r"[^\w.-]", "_", Path(input_path).stem)[:40]
    workdir = unique_dir(f"bisect-{stem}-", parent=out_dir)
    try:
        limits = RunOptions(timeout_s=timeout_s, memory_limit_mb=memory_limit_mb)
        return _bisect(input_path, pipeline, opt, workdir, limits, blockers, replay)
    except BaseException:  # a bad input, binary or pipeline (or Ctrl-C): no half-filled folder
        shutil.rmtree(workdir, ignore_errors=True)
        raise


def _bisect(input_path: str, pipeline: str, opt: str | None, workdir: Path,
            limits: RunOptions, blockers: bool, replay: Replay = Replay.ALL) -> BisectResult:
    timeout_s = limits.timeout_s
    partial = workdir / ".reproducer.partial.mlir"
    first = run_pipeline(input_path, pipeline, opt=opt, options=replace(
        limits, disable_threading=True,
        extra_args=(f"--mlir-pass-pipeline-crash-reproducer={partial}",
                    "--mlir-pass-pipeline-local-reproducer", "--mlir-print-debuginfo",
                    "--dump-pass-pipeline", "-mlir-timing", "-mlir-timing-display=tree")))
    result = BisectResult(input_path=input_path, pipeline=pipeline, outcome=first.outcome,
                          first=first, runs=1, out_dir=str(workdir), signature=first.signature)
    result.pipeline_passes = [p.name for p in dumped_pipeline(first.stderr)]
    write_atomically(workdir / "run1.stderr.txt", first.stderr)
    note = reproducer_note(first)
    if first.ok or note is None or not partial.is_file():
        partial.unlink(missing_ok=True)
        if first.ok:
            result.detail = "the pipeline succeeds"
        elif first.outcome is Outcome.PARSE_ERROR:
            result.detail = "the input does not parse, so no pass ran; fix the IR first"
        elif first.outcome is Outcome.TIMEOUT:
            result.detail = (f"the run hung past {timeout_s:g} s and did not write a reproducer; "
                             "rerun with a shorter --timeout")
        else:
            result.detail = ("MLIR wrote no reproducer: the failure happened outside the pass "
                             "manager (parsing, verification of the input, or printing)")
        _finish(result, workdir)
        return result

    pre_ir, pass_pipeline = _failing_pass(result, first, note, partial, workdir)
    if blockers and first.outcome is Outcome.LEGALIZATION_FAILURE:
        result.blockers = analyze(input_path, pipeline, opt=first.binary, timeout_s=timeout_s)
        result.responsible = responsible_passes(result.blockers)
        if any(onnx_op_name(r.op) for r in result.responsible):
            opset = onnx_opset(input_path)
            result.responsible = [replace(r, onnx_opset=opset) for r in result.responsible]
    diagnosed = first.outcome is not Outcome.TIMEOUT and any(
        d.is_error and not d.is_reproducer_summary for d in first.diagnostics)
    if replay is Replay.ALL or (replay is Replay.CRASHES and not diagnosed):
        _replay(result, first, pre_ir, pass_pipeline or pipeline, note.group("pass"), opt, limits,
                workdir)
    else:
        result.detail = ("not replayed (the caller replays the failing pass on smaller IR)"
                         if replay is Replay.CRASHES else "not replayed (only the pass was asked for)")
    if not pass_pipeline:
        result.detail = ("the reproducer records no pipeline; replayed with the whole pipeline "
                         + result.detail).strip()
    _finish(result, workdir)
    return result


def _failing_pass(result: BisectResult, first: RunRecord, note: re.Match, partial: Path,
                  workdir: Path) -> tuple[Path, str]:
    """The failing pass from MLIR's reproducer (its name, its pipeline, its position in the
    pipeline as run); the IR before it moved to ``before-PASS.mlir``. Returns that file and the
    pass's own pipeline ("" when the reproducer records none)."""
    failing_name = note.group("pass")
    pass_pipeline = reproducer_pipeline_of_file(partial)
    try:
        refs = parse_pipeline(pass_pipeline) if pass_pipeline else []
    except PipelineConfigError:
        refs = []
    failing_arg = refs[0].name if len(refs) == 1 else (pass_pipeline or failing_name)
    safe = re.sub(r"[^\w.-]", "_", failing_arg)[:60]
    pre_ir = workdir / f"before-{safe}.mlir"
    os.replace(partial, pre_ir)
    result.failing_pass = failing_arg
    result.failing_pass_name = failing_name
    result.failing_pass_pipeline = pass_pipeline
    result.failing_on = (f"'{note.group('op')}' operation"
                         + (f": {note.group('sym')}" if note.group("sym") else ""))
    result.pass_positions = [i + 1 for i, name in enumerate(result.pipeline_passes) if name == failing_arg]
    if len(result.pass_positions) != 1:
        position, result.position_note = failing_position(first.stderr, failing_name, failing_arg,
                                                          result.pipeline_passes)
        result.pass_positions = [position] if position else result.pass_positions
    result.pre_pass_ir = str(pre_ir)
    return pre_ir, pass_pipeline


def _replay(result: BisectResult, first: RunRecord, pre_ir: Path, replay_pipeline: str,
            failing_name: str, opt: str | None, limits: RunOptions, workdir: Path) -> None:
    """The failing pass alone on the IR before it: whether it fails the same way (a failure, a
    crash or a hang, as the first run did), and the signature the result then carries."""
    own_errors = [d for d in first.diagnostics if d.is_error and not d.is_reproducer_summary]
    expect = (_Expect.HANG if first.outcome is Outcome.TIMEOUT
              else _Expect.FAILURE if own_errors else _Expect.CRASH)
    result.replay_command = (repro_command(replay_pipeline, pre_ir, first.binary)
                             + " -mlir-disable-threading")
    replay = run_pipeline(pre_ir, replay_pipeline, opt=opt, options=replace(
        limits, disable_threading=True, pass_hint=canonical_pass_name(failing_name)))
    result.runs = 2 + (result.blockers.runs if result.blockers else 0)
    result.replay = replay
    write_atomically(workdir / "replay.stderr.txt", replay.stderr)
    result.reproduced, why = _same_failure(first, replay, expect, failing_name)
    if why:
        result.detail = (result.detail + " " + why).strip()
    if result.reproduced:
        named = result.blockers.names() if result.blockers else []
        result.outcome, result.signature = replay.outcome, replace(replay, blockers=named).signature
    elif expect is _Expect.CRASH:
        result.outcome = Outcome.CRASH
        result.signature = Signature(
            Outcome.CRASH, message=f"in {canonical_pass_name(failing_name)} (not reproduced by the replay)")


def _finish(result: BisectResult, workdir: Path) -> None:
    write_atomically(workdir / "bisect.json", jsonfile.dumps(result.to_json(), indent=2) + "\n",
                     hint="Choose a writable --out directory.")
