"""The records that flow from the runner to the tools: one currency, JSON-serializable."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import Enum


class Outcome(str, Enum):
    SUCCESS = "success"
    LEGALIZATION_FAILURE = "legalization-failure"
    PASS_FAILURE = "pass-failure"
    VERIFIER_ERROR = "verifier-error"
    PARSE_ERROR = "parse-error"
    CRASH = "crash"
    ASSERTION = "assertion"
    TIMEOUT = "timeout"


@dataclass
class Diagnostic:
    severity: str  # error | warning | note | remark
    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    notes: list["Diagnostic"] = field(default_factory=list)
    current_op: str = ""  # the "see current operation" text, when MLIR printed it

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.file else "<unknown>"

    def render(self) -> str:
        lines = [f"{self.location}: {self.severity}: {self.message}"]
        lines += [f"  {n.location}: note: {n.message}" for n in self.notes]
        return "\n".join(lines)


@dataclass
class RunRecord:
    outcome: Outcome
    command: list[str]
    pipeline: str
    input_path: str
    binary: str
    returncode: int | None
    elapsed_s: float
    stderr: str = ""
    output_path: str = ""
    signal: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.SUCCESS

    def first_error(self) -> Diagnostic | None:
        return next((d for d in self.diagnostics if d.severity == "error"), None)

    def to_json(self) -> dict:
        d = asdict(self)
        d["outcome"] = self.outcome.value
        return d


# MLIR prints `FILE:LINE:COL: error: MESSAGE`; the file may be quoted or contain colons.
_DIAG = re.compile(
    r'^(?P<file>"[^"]*"|[^\s:][^:]*|<unknown>|within split at [^:]+):(?P<line>\d+):(?P<col>\d+): '
    r"(?P<sev>error|warning|note|remark): (?P<msg>.*)$"
)
_DIAG_NOLOC = re.compile(r"^(?:loc\([^)]*\)|<unknown>): (?P<sev>error|warning|note|remark): (?P<msg>.*)$")
_NOTE_OP = "see current operation: "


def parse_diagnostics(stderr: str) -> list[Diagnostic]:
    """Errors with their notes, from torch-mlir-opt's stderr (source-line echoes skipped)."""
    out: list[Diagnostic] = []
    for raw in stderr.splitlines():
        m = _DIAG.match(raw)
        if m:
            file = m.group("file").strip('"')
            diag = Diagnostic(m.group("sev"), m.group("msg"), file, int(m.group("line")), int(m.group("col")))
        else:
            m = _DIAG_NOLOC.match(raw)
            if not m:
                continue
            diag = Diagnostic(m.group("sev"), m.group("msg"))
        if diag.severity == "note" and out:
            out[-1].notes.append(diag)
            if diag.message.startswith(_NOTE_OP) and not out[-1].current_op:
                out[-1].current_op = diag.message[len(_NOTE_OP):]
        else:
            out.append(diag)
    return out
