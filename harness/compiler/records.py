"""The records that flow from the runner to the tools: one currency, JSON-serializable."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

from .crash import CrashInfo
from .crash_text import CrashView, render_crash
from .outcomes import Outcome, Severity, Signature
from .text import decimal, drop_ssa_names

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["Diagnostic", "Outcome", "RunRecord", "Severity", "Signature", "parse_diagnostics",
           "render_record"]

# What MLIR prints (at :0:0 or the input's first op) when a pass fails or crashes under
# --mlir-pass-pipeline-crash-reproducer; a note then names the pass and the reproducer file.
REPRODUCER_SUMMARY = "Failures have been detected while processing an MLIR pass pipeline"


@dataclass
class Diagnostic:
    severity: Severity
    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    notes: list[Diagnostic] = field(default_factory=list)
    current_op: str = ""  # the "see current operation" text, when MLIR printed it on the note
    # The op MLIR printed on lines below an empty "see current operation: " note (an op with
    # regions): read for its types only, so that signatures stay what they were.
    current_op_below: str = ""

    @property
    def current_op_text(self) -> str:
        """The current operation as printed, on the note or below it."""
        return self.current_op or self.current_op_below

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.file else "<unknown>"

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def is_reproducer_summary(self) -> bool:
        """MLIR's "Failures have been detected ..." line under the crash reproducer flags: it
        repeats that something failed and says nothing of what."""
        return self.message.startswith(REPRODUCER_SUMMARY)

    @property
    def illegal_op(self) -> str:
        """For "failed to legalize operation 'X'": X as printed; else ""."""
        m = _LEGALIZE.match(self.message)
        return m.group("op") if m else ""

    @property
    def op(self) -> str:
        """The op this diagnostic is about: from its message, else from "see current operation"."""
        return op_of(self)

    def render(self) -> str:
        lines = [f"{self.location}: {self.severity.value}: {self.message}"]
        lines += [f"  {n.location}: note: {n.message}" for n in self.notes]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {**_shallow(self), "severity": self.severity.value,
                "notes": [n.to_json() for n in self.notes]}

    @classmethod
    def from_json(cls, d: dict) -> Diagnostic:
        d = dict(d)
        d["severity"] = Severity.parse(d["severity"])
        d["notes"] = [cls.from_json(n) for n in d.get("notes", [])]
        return cls(**d)


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
    crash: CrashInfo | None = None  # set for crash, assertion and (when dumped) timeout outcomes
    # Legalization failures: the ops whose conversion failed, when harness.diagnose.blockers found
    # them (the error may name an operand left only because its user was not converted).
    blockers: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.SUCCESS

    def errors(self) -> list[Diagnostic]:
        """The errors, without the crash reproducer's summary when there are others."""
        errors = [d for d in self.diagnostics if d.is_error]
        own = [d for d in errors if not d.is_reproducer_summary]
        return own or errors

    def first_error(self) -> Diagnostic | None:
        errors = self.errors()
        return errors[0] if errors else None

    def illegal_ops(self) -> list[str]:
        """The ops "failed to legalize" names, in order, each once (a ``torch.operator`` with
        the name of the op it stands for)."""
        return list(dict.fromkeys(op_label(d.illegal_op, d) for d in self.diagnostics
                                  if d.is_error and d.illegal_op))

    @property
    def signature(self) -> Signature:
        """Equal signatures mean the same bug: what reduce keeps and report titles with (see
        ``Signature``)."""
        if self.ok:
            return Signature(Outcome.SUCCESS)
        if self.crash is not None and self.outcome.is_crash:
            return replace(self.crash.signature, outcome=self.outcome)
        if self.outcome is Outcome.LEGALIZATION_FAILURE:
            illegal = self.illegal_ops()
            if self.blockers:
                named = illegal[0] if illegal and illegal[0] != self.blockers[0] else ""
                return Signature(self.outcome, op=self.blockers[0], reported=named)
            if illegal:
                return Signature(self.outcome, op=illegal[0])
        first = self.first_error()
        # The backend contract names no op in its message, only in the "see current operation"
        # note: the op is what tells one such gap from another (and what a title must say), for
        # an illegal op and for a result of unknown rank or dtype alike.
        op = op_label(first.op, first) if first is not None and names_no_op(first.message) else ""
        return Signature(self.outcome, op=op, signal=self.signal,
                         message=drop_ssa_names(first.message) if first else "")

    def to_json(self) -> dict:
        d = _shallow(self)
        d["outcome"] = self.outcome.value
        d["command"] = list(self.command)
        d["crash"] = self.crash.to_json() if self.crash is not None else None
        d["diagnostics"] = [x.to_json() for x in self.diagnostics]
        signature = self.signature
        d["signature"] = str(signature)
        d["signature_fields"] = signature.to_json()
        return d

    @classmethod
    def from_json(cls, d: dict) -> RunRecord:
        """The inverse of to_json, for tools that read records written by an earlier run."""
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["outcome"] = Outcome.parse(d["outcome"])
        kwargs["diagnostics"] = [Diagnostic.from_json(x) for x in d.get("diagnostics", [])]
        kwargs["crash"] = CrashInfo.from_json(d["crash"]) if d.get("crash") else None
        return cls(**kwargs)


def _shallow(obj: DataclassInstance) -> dict:
    """The fields of a dataclass as a dict, not copied deeply (``asdict`` copies every nested
    diagnostic first; 200,000 of them took seconds)."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def render_record(record: RunRecord, *, frames: int = 10) -> list[str]:
    """The readable form ``harness run`` prints: diagnostics, or for a crash what
    ``crash_text.render_crash`` shows (signal, LLVM ERROR, assertion, pass, signature and the
    first ``frames`` frames below the signal handler), indented by two spaces."""
    lines: list[str] = []
    if record.crash is not None:
        view = CrashView(frames=frames)
        lines += [f"  {line}" for line in render_crash(record.crash, view, signature=record.signature)]
        lines += [d.render() for d in record.diagnostics]
        return lines
    for d in record.diagnostics:
        lines.append(d.render())
    if not record.ok:
        lines.append(f"  signature: {record.signature}")
        if not record.diagnostics and record.stderr:
            lines.append(record.stderr.rstrip())
    return lines


# An op at a name location (an ONNX node's) prints as `<unknown>:0: error: loc("NODE"): MESSAGE`.
_LEGALIZE = re.compile(r"^(?:loc\(\"[^\"]*\"\): )?failed to legalize operation '(?P<op>[^']+)'")
_OPERATOR_NAME = re.compile(r'name = "(?P<name>[^"]+)"')


_OP_IN_CURRENT = re.compile(r'^\s*(?:%[^=]+=\s*)?"?(?P<op>[A-Za-z_][\w$]*\.[\w$.]+)"?[\s(<{]')
_OP_IN_MESSAGE = (
    re.compile(r"failed to legalize operation '(?P<op>[\w.$]+)'"),
    re.compile(r"^'(?P<op>[\w.$]+)' op "),
)


def op_of(diag: Diagnostic) -> str:
    """The op a diagnostic is about: from its message, else from "see current operation"."""
    for pattern in _OP_IN_MESSAGE:
        m = pattern.search(diag.message)
        if m:
            return m.group("op")
    m = _OP_IN_CURRENT.match(diag.current_op) if diag.current_op else None
    return m.group("op") if m else ""


def op_label(op: str, diag: Diagnostic) -> str:
    """``op``; a ``torch.operator`` with the name of the op it stands for, since the generic op
    alone would give unrelated unknown ops one signature."""
    if op == "torch.operator":
        named = _OPERATOR_NAME.search(diag.current_op or diag.message)
        if named:
            return f'{op} "{named.group("name")}"'
    return op


# MLIR prints `FILE:LINE:COL: error: MESSAGE`; the file may be quoted or contain colons.
_DIAG = re.compile(
    r'^(?P<file>"[^"]*"|[^\s:][^:]*|<unknown>|within split at [^:]+):(?P<line>\d+):(?P<col>\d+): '
    r"(?P<sev>error|warning|note|remark): (?P<msg>.*)$"
)
# An unknown location prints as `<unknown>:0:` (a line, no column) or bare `<unknown>:`.
_DIAG_NOLOC = re.compile(
    r"^(?:loc\([^)]*\)|<unknown>(?::\d+)?): (?P<sev>error|warning|note|remark): (?P<msg>.*)$")
_NOTE_OP = "see current operation: "
#: The most lines of a current operation kept when MLIR prints it below its note (an op with
#: regions); its type signature is on the last.
CURRENT_OP_MAX_LINES = 400
#: torch-lower-to-backend-contract's error for an op no pass lowered or decomposed.
BACKEND_ILLEGAL = "found an op that was marked as backend illegal"
#: its errors for a type (unknown rank, unknown dtype, non-value tensor), on the op that makes it.
BACKEND_CONTRACT = "unsupported by backend contract: "
_NAMES_ITS_OP = "unsupported by backend contract: Unimplemented operator"


def names_no_op(message: str) -> bool:
    """A backend-contract error whose message does not name the op it is about (the op is in
    its "see current operation" note): an illegal op, a tensor of unknown rank or dtype."""
    return message.startswith(BACKEND_ILLEGAL) or (
        message.startswith(BACKEND_CONTRACT) and not message.startswith(_NAMES_ITS_OP))


def parse_diagnostics(stderr: str) -> list[Diagnostic]:
    """Errors with their notes, from torch-mlir-opt's stderr (source-line echoes skipped)."""
    out: list[Diagnostic] = []
    op_lines: list[str] | None = None  # the lines of a current operation printed below its note
    for raw in stderr.splitlines():
        m = _DIAG.match(raw)
        if m is None and _DIAG_NOLOC.match(raw) is None and op_lines is not None:
            if len(op_lines) < CURRENT_OP_MAX_LINES:  # an op with regions prints on its own lines
                op_lines.append(raw)
                out[-1].current_op_below = "\n".join(op_lines)
            continue
        op_lines = None
        if m:
            file = m.group("file").strip('"')
            diag = Diagnostic(Severity(m.group("sev")), m.group("msg"), file, decimal(m.group("line")),
                              decimal(m.group("col")))
        else:
            m = _DIAG_NOLOC.match(raw)
            if not m:
                continue
            diag = Diagnostic(Severity(m.group("sev")), m.group("msg"))
        if diag.severity is Severity.NOTE and out:
            out[-1].notes.append(diag)
            if diag.message.startswith(_NOTE_OP) and not out[-1].current_op:
                out[-1].current_op = diag.message[len(_NOTE_OP):]
                op_lines = [] if not out[-1].current_op.strip() else None
        else:
            out.append(diag)
    return out
