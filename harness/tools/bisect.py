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

When the pass that reports the failure only finalizes types or checks the backend contract
(``torch-finalizing-backend-type-conversion`` saying "failed to legalize operation"), the op
it names was left behind by an earlier conversion pass; :attr:`BisectResult.responsible`
names which conversion pass of this pipeline should have lowered it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.compiler.crash import canonical_pass_name
from harness.compiler.irfile import unique_dir, write_atomically
from harness.compiler.outcomes import Signature
from harness.compiler.pipeline_text import PassRef, parse_pipeline, pipeline_prefix
from harness.compiler.records import (
    Outcome,
    RunRecord,
    op_label,
)
from harness.compiler.runner import (
    DEFAULT_TIMEOUT_S,
    RunOptions,
    repro_command,
    run_pipeline,
)
from harness.compiler.text import unescape_mlir_string
from harness.errors import PipelineConfigError


@dataclass
class Responsibility:
    """For an op a reporting pass found left over: the conversion pass that should lower it."""

    op: str
    responsible_pass: str          # the conversion pass of this pipeline that handles the op
    also_run: list[str] = field(default_factory=list)  # other conversions of its dialect here
    reason: str = ""


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
    pipeline_passes: list[str] = field(default_factory=list)  # as torch-mlir-opt expanded it
    pre_pass_ir: str = ""          # the IR just before the failing pass
    reproduced: bool = False
    signature: Signature | None = None
    replay_command: str = ""
    responsible: list[Responsibility] = field(default_factory=list)
    out_dir: str = ""
    runs: int = 0
    detail: str = ""               # why no pass was named, or how the replay differed
    first: RunRecord | None = None
    replay: RunRecord | None = None

    @property
    def found(self) -> bool:
        return bool(self.failing_pass)

    def to_json(self) -> dict:
        d = asdict(self)
        d["outcome"] = self.outcome.value
        d["signature"] = str(self.signature) if self.signature else ""
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
        where = f", pass {'/'.join(map(str, self.pass_positions))} of {len(self.pipeline_passes)}" \
            if self.pass_positions else ""
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
            lines.append(f"{self.failing_pass} only reports what earlier passes left; the op "
                         "should have been lowered by:")
            width = max(len(r.op) for r in self.responsible)
            for r in self.responsible:
                also = f" (the pipeline also runs {', '.join(r.also_run)})" if r.also_run else ""
                lines.append(f"  {r.op:<{width}}  -> {r.responsible_pass}{also}")
        lines.append(f"files: {self.out_dir}")
        return lines


# ---------------------------------------------------------------------------------------------
# What MLIR printed

_NOTE = re.compile(
    r"Pipeline failed while executing \[?`(?P<pass>[^`]+)` on '(?P<op>[^']+)' operation"
    r"(?:: (?P<sym>@[^\s:\]]+))?\]?: reproducer generated at `(?P<path>[^`]+)`"
)
_REPRO_PIPELINE = re.compile(r'pipeline:\s*"(?P<p>(?:[^"\\]|\\.)*)"')
_DUMP_HEADER = re.compile(r"^Pass Manager with \d+ passes:\s*$", re.MULTILINE)


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


def dumped_pipeline(stderr: str) -> list[PassRef]:
    """The passes ``--dump-pass-pipeline`` printed, as run (registered pipelines expanded)."""
    m = _DUMP_HEADER.search(stderr)
    listing = pipeline_prefix(stderr[m.end():]) if m else ""
    if not listing:
        return []
    try:
        return parse_pipeline(listing)
    except PipelineConfigError:  # a dump we cannot read only costs the pass positions
        return []


# ---------------------------------------------------------------------------------------------
# Who should have lowered a left-over op

# Passes that only report ops earlier conversions left (they convert types or check contracts).
_REPORTING_PASSES = re.compile(
    r"^torch-(?:finalizing-backend-type-conversion|func-backend-type-conversion|verify-)"
)
# Op-specific conversions, tried before the pipeline's main torch conversion. A hint from
# torch-mlir's lib/Conversion layout, not an authority: the main conversion is always named too.
_OP_CONVERSIONS: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"^torch\.prim\.(?:If|Loop)\b"), "convert-torch-to-scf"),
    (re.compile(r"^torch\.(?:constant\.|aten\.\w+\.(?:int|float|bool|Scalar|int_float|float_int)\b|"
                r"aten\.(?:Int|Float|Bool)\.)"), "convert-torch-to-arith"),
    (re.compile(r"^torch\.(?:aten\.(?:item|tensor\.|scalar_tensor)|prim\.NumToTensor)"),
     "convert-torch-to-tensor"),
    (re.compile(r"^torch\.aten\.(?:sort|scatter|index_put|cumsum|bincount|topk|"
                r"scaled_dot_product_attention|_index_put_impl|kthvalue)"), "convert-torch-to-tmtensor"),
)
_MAIN_TORCH_CONVERSIONS = ("convert-torch-to-linalg", "convert-torch-to-tosa",
                           "convert-torch-to-stablehlo")
_DIALECT_CONVERSIONS = {"chlo": ("chlo-legalize-to-stablehlo",)}
_LEFT_OP = re.compile(r"failed to legalize operation '(?P<op>[^']+)'|"
                      r"found an op that was marked as backend illegal|"
                      r"unsupported by backend contract: (?P<what>.*)")


def responsible_passes(record: RunRecord, failing_pass: str,
                       pipeline_passes: list[str]) -> list[Responsibility]:
    """For a reporting pass's "failed to legalize" errors: which conversion should have run."""
    if not _REPORTING_PASSES.match(failing_pass):
        return []
    ops: list[str] = []
    for diag in record.diagnostics:
        if not diag.is_error or not _LEFT_OP.search(diag.message):
            continue
        op = op_label(diag.illegal_op or diag.op, diag)
        if op and op not in ops:
            ops.append(op)
    names = list(dict.fromkeys(pipeline_passes))
    out: list[Responsibility] = []
    for op in ops:
        dialect = op.split(".", 1)[0]
        if dialect == "torch":
            conversions = [p for p in names if p.startswith("convert-torch-to-")]
            main = next((p for p in _MAIN_TORCH_CONVERSIONS if p in names), "")
            specific = next((p for rx, p in _OP_CONVERSIONS if rx.match(op) and p in names), "")
            chosen = specific or main or (conversions[0] if conversions else "")
            reason = ("its op-specific conversion" if specific else "the pipeline's torch conversion")
        else:
            conversions = [p for p in _DIALECT_CONVERSIONS.get(dialect, ()) if p in names]
            chosen = conversions[0] if conversions else ""
            reason = "the conversion of its dialect" if chosen else f"no pass of this pipeline converts '{dialect}'"
        if not chosen and not reason.startswith("no pass"):
            reason = "no conversion of its dialect in this pipeline"
        out.append(Responsibility(op, chosen or "(none in this pipeline)",
                                  [p for p in conversions if p != chosen], reason))
    return out


# ---------------------------------------------------------------------------------------------
# The two runs

def _same_failure(first: RunRecord, replay: RunRecord, expect: str, failing_name: str) -> tuple[bool, str]:
    """Whether the replay shows the failure run 1 localized (``expect``: crash|hang|failure)."""
    if replay.ok:
        return False, ("the replay succeeded: the failure depends on passes before this one "
                       "(an analysis or state they leave behind) or on the whole pipeline's options")
    if expect == "hang":
        return (replay.outcome is Outcome.TIMEOUT,
                "" if replay.outcome is Outcome.TIMEOUT else f"run 1 hung; the replay ended in {replay.outcome.value}")
    if expect == "crash":
        if replay.outcome not in (Outcome.CRASH, Outcome.ASSERTION):
            return False, f"run 1 crashed in {failing_name}; the replay ended in {replay.outcome.value}"
        crashed_in = replay.crash.pass_name if replay.crash else ""
        if crashed_in and canonical_pass_name(crashed_in) != canonical_pass_name(failing_name):
            return False, f"run 1 crashed in {failing_name}; the replay crashed in {crashed_in}"
        return True, ""
    if replay.signature != first.signature:
        return False, f"run 1: {first.signature}; replay: {replay.signature}"
    return True, ""


def bisect(input_path: str | os.PathLike, pipeline: str, *, opt: str | None = None,
           out_dir: str | os.PathLike | None = None,
           timeout_s: float = DEFAULT_TIMEOUT_S) -> BisectResult:
    """Names the first pass of ``pipeline`` that fails or crashes on ``input_path``.

    Writes into a fresh folder under ``out_dir`` (the temp dir if None): the IR before the
    failing pass (``before-PASS.mlir``), both runs' stderr and ``bisect.json``.
    """
    input_path = os.fspath(input_path)
    stem = re.sub(r"[^\w.-]", "_", Path(input_path).stem)[:40]
    workdir = unique_dir(f"bisect-{stem}-", parent=out_dir)
    try:
        return _bisect(input_path, pipeline, opt, workdir, timeout_s)
    except BaseException:  # a bad input, binary or pipeline (or Ctrl-C): no half-filled folder
        shutil.rmtree(workdir, ignore_errors=True)
        raise


def _bisect(input_path: str, pipeline: str, opt: str | None, workdir: Path,
            timeout_s: float) -> BisectResult:
    partial = workdir / ".reproducer.partial.mlir"
    first = run_pipeline(input_path, pipeline, opt=opt, options=RunOptions(
        timeout_s=timeout_s, disable_threading=True,
        extra_args=(f"--mlir-pass-pipeline-crash-reproducer={partial}",
                    "--mlir-pass-pipeline-local-reproducer", "--mlir-print-debuginfo",
                    "--dump-pass-pipeline")))
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

    failing_name = note.group("pass")
    text = partial.read_text(errors="replace")
    pass_pipeline = reproducer_pipeline(text)
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
    result.failing_on = f"'{note.group('op')}' operation" + (f": {note.group('sym')}" if note.group("sym") else "")
    result.pass_positions = [i + 1 for i, name in enumerate(result.pipeline_passes) if name == failing_arg]
    result.pre_pass_ir = str(pre_ir)
    result.responsible = responsible_passes(first, failing_arg, result.pipeline_passes)

    own_errors = [d for d in first.diagnostics if d.is_error and not d.is_reproducer_summary]
    expect = "hang" if first.outcome is Outcome.TIMEOUT else ("failure" if own_errors else "crash")
    replay_pipeline = pass_pipeline or pipeline
    result.replay_command = repro_command(replay_pipeline, pre_ir) + " -mlir-disable-threading"
    if not pass_pipeline:
        result.detail = "the reproducer records no pipeline; replayed with the whole pipeline"
    replay = run_pipeline(pre_ir, replay_pipeline, opt=opt, options=RunOptions(
        timeout_s=timeout_s, disable_threading=True, pass_hint=canonical_pass_name(failing_name)))
    result.runs = 2
    result.replay = replay
    write_atomically(workdir / "replay.stderr.txt", replay.stderr)
    result.reproduced, why = _same_failure(first, replay, expect, failing_name)
    if why:
        result.detail = (result.detail + " " + why).strip()
    if result.reproduced:
        result.outcome, result.signature = replay.outcome, replay.signature
    elif expect == "crash":
        result.outcome = Outcome.CRASH
        result.signature = Signature(
            Outcome.CRASH, message=f"in {canonical_pass_name(failing_name)} (not reproduced by the replay)")
    _finish(result, workdir)
    return result


def _finish(result: BisectResult, workdir: Path) -> None:
    write_atomically(workdir / "bisect.json", json.dumps(result.to_json(), indent=2) + "\n",
                     hint="Choose a writable --out directory.")
