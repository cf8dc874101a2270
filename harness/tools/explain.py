"""``harness explain``: each error of a failing run, as the model author needs to read it.

For every error: the op it is about, the Python file:line from the op's location (the inlined
call chain that MLIR prints as "called from" notes included), the source lines around each, which
of them is the user's own code rather than torch or transformers, and, where the op or the
diagnostic matches a known idiom (``harness.knowledge.idioms``: the 2022 walkthrough's six and the ones
found since), its surgical fix as a hint. A crash has no op location; it gets its signature and
the idioms its frames point at.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field

from harness.compiler.records import Diagnostic, RunRecord
from harness.compiler.runner import (
    DEFAULT_TIMEOUT_S,
    RunOptions,
    repro_command,
    run_pipeline,
)
from harness.knowledge import idioms

from .source import excerpt, is_library

_MLIR_FILE = re.compile(r"\.mlir(bc)?$")


@dataclass
class SourceFrame:
    file: str
    line: int
    col: int
    library: bool  # torch, transformers, the standard library: not the user's model
    lines: list[str] = field(default_factory=list)  # the excerpt, "> LINE | text" marked
    stale: bool = False  # the file changed after the IR was written: the line may have moved

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass
class Explanation:
    message: str
    op: str
    frames: list[SourceFrame]  # innermost first, as MLIR prints them
    hints: list[idioms.KnownIdiom]
    ir_only: bool = False  # the location is a position in an IR file: no Python location

    def user_frame(self) -> SourceFrame | None:
        """The innermost frame in the user's own code, else the innermost frame."""
        return next((f for f in self.frames if not f.library), self.frames[0] if self.frames else None)


@dataclass
class ExplainResult:
    record: RunRecord
    explanations: list[Explanation]
    crash_hints: list[idioms.KnownIdiom] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "outcome": self.record.outcome.value,
            "signature": str(self.record.signature),
            "input": self.record.input_path,
            "pipeline": self.record.pipeline,
            "errors": [asdict(e) for e in self.explanations],
            "crash_hints": [asdict(h) for h in self.crash_hints],
        }

    def render(self) -> list[str]:
        rec = self.record
        if rec.ok:
            return [f"nothing to explain: {rec.input_path} passes {rec.pipeline}"]
        out = [f"{rec.outcome.value} ({rec.signature}) running {rec.pipeline} on {rec.input_path}"]
        for n, exp in enumerate(self.explanations, start=1):
            out.append("")
            out.append(f"error {n}: {exp.message}")
            if exp.op:
                out.append(f"  op: {exp.op}")
            if not exp.frames:
                out.append("  location: none; the op carries no location (import with debug "
                           "locations: harness emit / harness opt keep them)")
            elif exp.ir_only:
                out.append(f"  location: {exp.frames[0].location}, a line of the IR file, not Python: "
                           "the IR was printed without locations (add --mlir-print-debuginfo)")
                out += ["    " + s for s in exp.frames[0].lines]
            else:
                mine = exp.user_frame()
                for i, frame in enumerate(exp.frames):
                    role = "at" if i == 0 else "called from"
                    tag = " (your code)" if frame is mine and not frame.library else (
                        " (library)" if frame.library else "")
                    stale = " (edited since the IR was written: the line may have moved)" if frame.stale else ""
                    out.append(f"  {role} {frame.location}{tag}{stale}")
                    if frame is mine or i == 0:
                        out += ["    " + s for s in frame.lines]
            for hint in exp.hints:
                out += _render_hint(hint)
        if rec.crash is not None:
            out.append("")
            out.append(f"crash: {rec.crash.signature}")
            out.append("  a crash carries no op location; 'harness bisect' names the pass and writes "
                       "the IR before it, 'harness reduce' shrinks it")
            for hint in self.crash_hints:
                out += _render_hint(hint, "possibly related")
        out.append("")
        out.append(f"reproduce: {repro_command(rec.pipeline, rec.input_path)}")
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


def _frames(diag: Diagnostic, context: int, ir_path: str) -> tuple[list[SourceFrame], bool]:
    located = [(diag.file, diag.line, diag.col)] if diag.file else []
    located += [(n.file, n.line, n.col) for n in diag.notes if n.message == "called from" and n.file]
    written = _mtime(ir_path)
    frames = [SourceFrame(f, line, col, is_library(f), excerpt(f, line, context),
                          stale=bool(written) and _mtime(f) > written)
              for f, line, col in located]
    ir_only = bool(frames) and bool(_MLIR_FILE.search(frames[0].file))
    return frames, ir_only


def explain_record(record: RunRecord, *, context: int = 2) -> ExplainResult:
    explanations: list[Explanation] = []
    for diag in record.diagnostics:
        if not diag.is_error or diag.is_reproducer_summary:
            continue
        op = diag.op
        text = " ".join([diag.message, diag.current_op] + [n.message for n in diag.notes])
        frames, ir_only = _frames(diag, context, record.input_path)
        explanations.append(Explanation(diag.message, op, frames, idioms.matches(op, text), ir_only))
    crash_hints: list[idioms.KnownIdiom] = []
    if record.crash is not None:
        stack = " ".join(f.function for f in record.crash.frames)
        crash_hints = idioms.matches("", "", stack)
    return ExplainResult(record, explanations, crash_hints)


def explain_file(path: str | os.PathLike, pipeline: str, *, opt: str | None = None,
                 context: int = 2, timeout_s: float = DEFAULT_TIMEOUT_S) -> ExplainResult:
    """Runs ``pipeline`` on ``path`` once and explains what failed."""
    record = run_pipeline(path, pipeline, opt=opt, options=RunOptions(timeout_s=timeout_s))
    return explain_record(record, context=context)
