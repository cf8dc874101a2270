"""``harness explain``: a failing run, as the model author needs to read it.

For a legalization failure it names the **blocker** first: the op whose conversion failed
(``harness.diagnose.blockers``), which is not always the op the error names (stock OPT's error
names a bool literal that only stays because its user ``aten.__and__.Tensor`` was not
converted). For each blocker: the Python file:line of the op (the inlined call chain that MLIR
prints as "called from" notes included, the user's own frame marked), the symptom ops it
explains, which conversion pass of the pipeline lowers it alone (or that none does, and which
lowers the op a named fix turns it into), the known idiom and the fix by name
(``harness.knowledge``), and upstream reports that may already cover it.

Then every error as MLIR reported it, with its own Python lines. A crash has no op location; it
gets its signature and the idioms its frames point at.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field, replace

from harness.compiler import jsonfile
from harness import defaults
from harness.compiler.locations import SourceLocation
from harness.compiler.outcomes import Outcome
from harness.compiler.records import Diagnostic, RunRecord
from harness.compiler.runner import (
    RunOptions,
    repro_command,
    run_pipeline,
)
from harness.errors import InputFileError
from harness.knowledge import fixes, idioms, upstream

from .blockers import BlockerAnalysis, Equivalent, IllegalOp, analyze
from .onnx_terms import no_pattern, node_of, onnx_op_name, onnx_opset
from .registry import describe_unregistered
from .source import excerpt, is_harness, is_library

_MLIR_FILE = re.compile(r"\.mlir(bc)?$")


@dataclass
class SourceFrame:
    """A position of a diagnostic (the op's line, then each "called from"), with its source."""

    at: SourceLocation
    library: bool  # torch, transformers, the standard library: not the user's model
    lines: list[str] = field(default_factory=list)  # the excerpt, "> LINE | text" marked
    stale: bool = False  # the file changed after the IR was written: the line may have moved
    harness: bool = False  # the harness's own code (its wrappers, its models): not the user's either

    @property
    def file(self) -> str:
        return self.at.file

    @property
    def line(self) -> int:
        return self.at.line

    @property
    def location(self) -> str:
        return str(self.at)


def _user_frame(frames: list[SourceFrame]) -> SourceFrame | None:
    """The innermost frame in the user's own code, else the innermost in the harness's (its own
    models: the seed idioms, FixedOPT), else the innermost frame."""
    return next((f for f in frames if not f.library and not f.harness),
                next((f for f in frames if not f.library), frames[0] if frames else None))


@dataclass
class Explanation:
    message: str
    op: str
    frames: list[SourceFrame]  # innermost first, as MLIR prints them
    hints: list[idioms.KnownIdiom]
    ir_only: bool = False  # the location is a position in an IR file: no Python location
    symptom_of: list[str] = field(default_factory=list)  # blockers that leave this op behind

    def user_frame(self) -> SourceFrame | None:
        return _user_frame(self.frames)


@dataclass
class Symptom:
    op: str
    converted_by: list[str]  # conversion passes that lower it alone


@dataclass
class BlockerExplanation:
    """One op whose conversion failed, with what a torch-mlir maintainer asks about it."""

    op: str
    count: int
    types: str                     # its operand and result types
    frames: list[SourceFrame]
    ir_only: bool
    converted_alone_by: list[str]  # conversion passes of the pipeline that lower it alone
    conversions: list[str]         # the conversion passes tried
    equivalent: Equivalent | None  # what a named fix turns it into, replayed
    symptoms: list[Symptom]        # ops left only because of it
    hints: list[idioms.KnownIdiom]
    fixes: list[fixes.KnownFix]
    upstream: list[upstream.UpstreamReport]
    isolated_ir: str
    onnx: str = ""  # an ONNX op no TorchOnnxToTorch pattern converts: why, in ONNX's terms

    def user_frame(self) -> SourceFrame | None:
        return _user_frame(self.frames)

    def lowering_line(self) -> str:
        """Which conversion lowers it, from the replay of the pipeline's conversion passes."""
        if self.converted_alone_by:
            return (f"{', '.join(self.converted_alone_by)} lowers it alone, but not inside "
                    "this input: the failure depends on what surrounds it")
        unregistered = describe_unregistered(self.op)
        if unregistered is not None:
            return unregistered
        tried = f" (tried: {', '.join(self.conversions)})" if self.conversions else ""
        line = f"no conversion pass of this pipeline lowers {self.op}{tried}"
        eq = self.equivalent
        if eq is not None and eq.converted_by:
            line += f"; {eq.converted_by[0]} lowers the equivalent {eq.op}"
            if eq.lowers:
                line += " (the pipeline passes with it)"
        return line


@dataclass
class ExplainResult:
    record: RunRecord
    explanations: list[Explanation]
    crash_hints: list[idioms.KnownIdiom] = field(default_factory=list)
    blockers: list[BlockerExplanation] = field(default_factory=list)
    analysis: BlockerAnalysis | None = None

    def to_json(self) -> dict:
        return {
            "outcome": self.record.outcome.value,
            "signature": str(self.record.signature),
            "input": self.record.input_path,
            "pipeline": self.record.pipeline,
            "binary": self.record.binary,
            "blockers": [_blocker_json(b) for b in self.blockers],
            "errors": [jsonfile.plain(asdict(e)) for e in self.explanations],
            "crash_hints": [jsonfile.plain(asdict(h)) for h in self.crash_hints],
            "blocker_analysis": self.analysis.to_json() if self.analysis else None,
        }

    def render(self) -> list[str]:
        rec = self.record
        if rec.ok:
            return [f"nothing to explain: {rec.input_path} passes {rec.pipeline}"]
        out = [f"{rec.outcome.value} running {rec.pipeline} on {rec.input_path}"]
        named = rec.illegal_ops()
        if self.blockers and named and named[0] not in [b.op for b in self.blockers]:
            out.append(f"the error names {named[0]}, but the op whose conversion failed is "
                       f"{' and '.join(b.op for b in self.blockers)}")
        elif self.analysis is not None and not self.blockers and self.analysis.detail:
            out.append(f"(no blocker analysis: {self.analysis.detail})")
        for b in self.blockers:
            out.append("")
            out += _render_blocker(b)
        for n, exp in enumerate(self.explanations, start=1):
            out.append("")
            out.append(f"error {n}{' (as MLIR reports it)' if self.blockers else ''}: {exp.message}")
            is_blocker = exp.op in [b.op for b in self.blockers]
            if exp.op:
                role = (f" (a symptom of {', '.join(exp.symptom_of)}: it lowers alone)" if exp.symptom_of
                        else " (the blocker above)" if is_blocker else "")
                out.append(f"  op: {exp.op}{role}")
            out += _render_frames(exp.frames, exp.ir_only, brief=bool(exp.symptom_of) or is_blocker)
            for hint in [] if is_blocker else exp.hints:
                out += _render_hint(hint)
        if rec.crash is not None:
            out.append("")
            out.append(f"crash: {rec.crash.signature}")
            out.append("  a crash carries no op location; 'harness bisect' names the pass and writes "
                       "the IR before it, 'harness reduce' shrinks it")
            for hint in self.crash_hints:
                out += _render_hint(hint, "possibly related")
        out.append("")
        out.append(f"reproduce: {repro_command(rec.pipeline, rec.input_path, rec.binary)}")
        return out


def _blocker_json(b: BlockerExplanation) -> dict:
    d = jsonfile.plain(asdict(b))
    d["hints"] = [h.name for h in b.hints]
    d["fixes"] = [f.name for f in b.fixes]
    d["upstream"] = [u.ref for u in b.upstream]
    d["lowering"] = b.lowering_line()
    return d


def _render_blocker(b: BlockerExplanation) -> list[str]:
    many = f" ({b.count} in the module)" if b.count > 1 else ""
    out = [f"blocker: {b.op}{many}: it fails alone, as a one-op function of {b.types}",
           f"  lowering: {b.lowering_line()}"]
    if b.onnx:
        out.append(f"  onnx: {b.onnx}")
    out += _render_frames(b.frames, b.ir_only)
    for s in b.symptoms:
        by = f"; {', '.join(s.converted_by)} lowers it alone" if s.converted_by else "; it lowers alone"
        out.append(f"  explains: {s.op} (left only because its user {b.op} was not converted{by})")
    for fix in b.fixes:
        out.append(f"  fix: {fix.name} ({fix.level.value}: {fix.changes}; {fix.why})")
    for hint in b.hints:
        out += _render_hint(hint, "cause")
    for report in b.upstream:
        out.append(f"  possibly known upstream: {report.describe()}")
    return out


def _render_frames(frames: list[SourceFrame], ir_only: bool, *, brief: bool = False) -> list[str]:
    if not frames:
        return ["  location: none; the op carries no location (import with debug locations: "
                "harness emit / harness opt keep them)"]
    if ir_only:
        out = [f"  location: {frames[0].location}, a line of the IR file, not Python: the IR was "
               "written without debug locations (harness emit/opt keep them; torch-mlir-opt "
               "needs --mlir-print-debuginfo)"]
        return out + ["    " + s for s in frames[0].lines]
    out = []
    mine = _user_frame(frames)
    for i, frame in enumerate(frames):
        role = "at" if i == 0 else "called from"
        tag = (" (library)" if frame.library else " (harness)" if frame.harness
               else " (your code)" if frame is mine else "")
        stale = " (edited since the IR was written: the line may have moved)" if frame.stale else ""
        out.append(f"  {role} {frame.location}{tag}{stale}")
        if (frame is mine or i == 0) and not brief:
            out += ["    " + s for s in frame.lines]
    return out


def _render_hint(hint: idioms.KnownIdiom, strength: str = "hint") -> list[str]:
    origin = "seed idiom" if hint.seed else "known idiom"
    lines = [f"  {strength} ({origin} '{hint.name}': {hint.title}): {hint.hint}"]
    if hint.seen_2022:
        lines.append(f"    (in 2022 this idiom gave: {hint.seen_2022})")
    return lines


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _frames(diag: Diagnostic | None, context: int, ir_path: str) -> tuple[list[SourceFrame], bool]:
    if diag is None:
        return [], False
    located = [(diag.file, diag.line, diag.col)] if diag.file else []
    located += [(n.file, n.line, n.col) for n in diag.notes if n.message == "called from" and n.file]
    written = _mtime(ir_path)
    frames = [SourceFrame(SourceLocation(f, line, col), is_library(f) and not is_harness(f),
                          excerpt(f, line, context), stale=bool(written) and _mtime(f) > written,
                          harness=is_harness(f))
              for f, line, col in located]
    ir_only = bool(frames) and bool(_MLIR_FILE.search(frames[0].file))
    return frames, ir_only


def _explain_blocker(op: IllegalOp, analysis: BlockerAnalysis, record: RunRecord,
                     context: int) -> BlockerExplanation:
    frames, ir_only = _frames(op.diagnostic, context, record.input_path)
    hints = idioms.matches(op.name, "")
    named = [fixes.FIXES[h.fix] for h in hints if h.fix in fixes.FIXES]
    if op.equivalent is not None and op.equivalent.fix in fixes.FIXES:
        named.append(fixes.FIXES[op.equivalent.fix])
    reported = record.illegal_ops()
    return BlockerExplanation(
        op=op.name, count=op.count, types=op.signature, frames=frames, ir_only=ir_only,
        converted_alone_by=list(op.converted_by), conversions=list(analysis.conversions),
        equivalent=op.equivalent,
        symptoms=[Symptom(s.name, list(s.converted_by)) for s in analysis.explained_by(op.name)],
        hints=hints, fixes=list(dict.fromkeys(named)),
        upstream=upstream.matching(op.name, reported[0] if reported else ""),
        isolated_ir=op.isolated_ir, onnx=_onnx_terms(op, record))


def _onnx_terms(op: IllegalOp, record: RunRecord) -> str:
    """An ONNX op that stayed generic and lowers alone under no pass: in ONNX's terms, with its
    node (the importer's name location) and the opset the file records (text or bytecode)."""
    name = onnx_op_name(op.name)
    return (no_pattern(name, onnx_opset(record.input_path), node_of(op.location))
            if name and not op.converted_by else "")


def explain_record(record: RunRecord, *, context: int = 2,
                   analysis: BlockerAnalysis | None = None) -> ExplainResult:
    """Explains ``record``; with ``analysis`` (of the same input and pipeline) the blockers too."""
    if analysis is not None and analysis.blockers and not record.blockers:
        record = replace(record, blockers=analysis.names())
    blockers = [_explain_blocker(op, analysis, record, context)
                for op in analysis.blockers] if analysis is not None else []
    explanations: list[Explanation] = []
    for diag in record.diagnostics:
        if not diag.is_error or diag.is_reproducer_summary:
            continue
        op = diag.op
        text = " ".join([diag.message, diag.current_op] + [n.message for n in diag.notes])
        frames, ir_only = _frames(diag, context, record.input_path)
        symptom_of = []
        if analysis is not None:
            symptom_of = [b.name for b in analysis.blockers
                          if any(s.name == op for s in analysis.explained_by(b.name))]
        hints = [] if symptom_of else idioms.matches(op, text)
        explanations.append(Explanation(diag.message, op, frames, hints, ir_only, symptom_of))
    crash_hints: list[idioms.KnownIdiom] = []
    if record.crash is not None:
        stack = " ".join(f.function for f in record.crash.frames)
        crash_hints = idioms.matches("", "", stack)
    return ExplainResult(record, explanations, crash_hints, blockers, analysis)


def explain_file(path: str | os.PathLike, pipeline: str, *, opt: str | None = None,
                 context: int = 2, timeout_s: float = defaults.TIMEOUT_S,
                 blockers: bool = True) -> ExplainResult:
    """Runs ``pipeline`` on ``path`` and explains what failed; for a legalization failure,
    ``blockers`` also finds the ops whose conversion failed (~15 more small runs, ~1 s)."""
    record = run_pipeline(path, pipeline, opt=opt, options=RunOptions(timeout_s=timeout_s))
    if record.outcome is Outcome.PARSE_ERROR:
        first = record.first_error()
        where = f" ({first.location}: {first.message})" if first is not None else ""
        raise InputFileError(
            f"{path} is not MLIR that torch-mlir-opt can parse{where}, so no pass ran and "
            "there is nothing to explain. Give explain the IR file that failed (harness opt "
            "and harness run print its path), not a Python file or a log.")
    analysis = None
    if blockers and record.outcome is Outcome.LEGALIZATION_FAILURE:
        analysis = analyze(path, pipeline, opt=record.binary, timeout_s=timeout_s)
    return explain_record(record, context=context, analysis=analysis)
