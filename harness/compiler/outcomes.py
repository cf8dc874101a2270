"""The closed sets a run is described with, and the signature that groups runs into bugs.

A ``Signature`` is structured data rendered by ``__str__`` (the grouping key: equal keys mean
the same bug); tools read its fields (the op, the pass, the frame) and never parse the text.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields

from harness.compiler import jsonfile
from harness.enums import ParsableEnum


class Outcome(ParsableEnum):
    SUCCESS = "success"
    LEGALIZATION_FAILURE = "legalization-failure"
    PASS_FAILURE = "pass-failure"
    VERIFIER_ERROR = "verifier-error"
    PARSE_ERROR = "parse-error"
    CRASH = "crash"
    ASSERTION = "assertion"
    TIMEOUT = "timeout"
    BAD_OUTPUT = "bad-output"  # exited 0, but -o holds nothing, or IR that does not parse back

    @property
    def is_crash(self) -> bool:
        """The process died (or was killed): the stack, not a diagnostic, says what happened."""
        return self in (Outcome.CRASH, Outcome.ASSERTION, Outcome.TIMEOUT)


class Severity(ParsableEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    REMARK = "remark"


class CrashPassSource(ParsableEnum):
    """Where a crash's pass name came from, most to least certain."""

    NONE = ""
    RUNNING_PASS_LINE = "running-pass-line"  # the pretty stack's "Running pass 'X'" entry
    FRAME = "frame"                          # a ``X::runOnOperation`` frame
    CALLER = "caller"                        # the caller ran one pass and said which

    def describe(self) -> str:
        return {CrashPassSource.RUNNING_PASS_LINE: "its 'Running pass' line",
                CrashPassSource.FRAME: "its runOnOperation frame",
                CrashPassSource.CALLER: "the pipeline"}.get(self, "")


@dataclass(frozen=True)
class Signature:
    """What makes two failures the same bug. ``str()`` is the grouping key.

    - crash / assertion: the signal or assertion condition, the pass, the first project frame
      by name (no addresses) and, when that frame is generic MLIR code, the torch-mlir frame
      that led there; an LLVM ERROR's text when no frame is named;
    - hang (a timeout with a stack): the pass only, since where a hung run is interrupted
      varies from run to run;
    - legalization failure: the op left illegal (not its operands or types, which reduction
      changes): the blocker, the op whose conversion failed, when ``harness.diagnose.blockers``
      found it (``reported`` then keeps the op MLIR named, e.g. a literal left only because
      its user was not converted; it is not part of the key);
    - other failures: the first error message with SSA names dropped.
    """

    outcome: Outcome
    op: str = ""           # legalization: the op left illegal ("torch.operator" with its name)
    message: str = ""      # other failures: the first error, SSA names dropped
    signal: str = ""       # SIGSEGV, SIGABRT, ... ("" when the run ended without one)
    pass_name: str = ""    # crash / hang: the pass it happened in
    frame: str = ""        # crash: the first project frame (a function, or module+offset)
    via: str = ""          # crash: the torch-mlir frame that reached a generic MLIR ``frame``
    assertion: str = ""    # assertion: the condition, numbers and SSA names normalized
    fatal_error: str = ""  # crash: the first line of LLVM ERROR, normalized
    from_dump: bool = False  # built from a crash dump (a stack was printed)
    hang: bool = False     # a timeout whose stack the runner took
    reported: str = field(default="", compare=False)  # legalization: the op the error named,
    #                                                   when the blocker is another one

    def __str__(self) -> str:
        if self.outcome is Outcome.SUCCESS:
            return "success"
        key = f"{self.outcome.value}: {self.summary}"
        return key if self.from_dump else key.rstrip(": ")

    @property
    def summary(self) -> str:
        """The key without the outcome: what a title or a folder name says."""
        where = f" in {self.pass_name}" if self.pass_name else ""
        if self.hang:
            return f"hang{where}"
        if self.from_dump:
            at = f" at {self.frame}" if self.frame else ""
            if self.frame and self.via:
                at += f" via {self.via}"
            if self.assertion:
                return f"`{self.assertion}'{where}{at}"
            head = f"{self.signal or 'no signal'}{where}{at}"
            if not self.frame and self.fatal_error:
                return f"{head}: LLVM ERROR: {self.fatal_error}"
            return head
        if self.op and self.message:  # a pass's error about one op (the backend contract's)
            return f"{self.message}: '{self.op}'"
        if self.op:
            return f"failed to legalize operation '{self.op}'"
        return self.signal or self.message

    def slug(self, limit: int = 64) -> str:
        """A file-name-safe short form (lowercase words joined by dashes)."""
        text = self.summary.replace("(anonymous namespace)::", "").lower()
        return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:limit].rstrip("-") or "failure"

    def to_json(self) -> dict:
        d = jsonfile.plain(asdict(self))
        d["outcome"] = self.outcome.value
        d["key"] = str(self)
        return d

    @classmethod
    def from_json(cls, d: dict | str) -> Signature:
        if isinstance(d, str):  # records written before signatures were structured
            outcome, _, rest = d.partition(": ")
            return cls(Outcome.parse(outcome), message=rest)
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["outcome"] = Outcome.parse(d["outcome"])
        return cls(**kwargs)
