"""The signature of a failure when the compiled code runs (``execution`` stage): what a
reduction keeps and what repro.sh tests.

Two kinds seen at the pinned versions (gaps of upstream's e2e tests):

- the code dies by a signal, e.g. a ``cf.assert`` of torch-mlir's elementwise lowering aborts
  with "mismatched size for broadcast": the signal and the last line the code printed; when
  MLIR's runtime op verification failed, its op and reason instead ("runtime op verification
  failed: memref.cast: size mismatch of dim 1"), not its ``Location:`` line, which holds a path
  (a name location, an ONNX node's, is kept: ``... out-of-bounds access at loc("node_softmax")``);
- the ExecutionEngine cannot resolve symbols, e.g. ``memrefCopy`` (MLIR's C runner utilities,
  which the RefBackend does not load): the sorted symbol names.

The RefBackend's child and its worker report these as text (``RefBackendResult.error``); this
module reads that text once, at the boundary, into a value; nothing parses it back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.enums import ParsableEnum
from harness.errors import HarnessError

from .outcomes import CheckOutcome
from .refbackend import Stage

_DIED = re.compile(r"the code died by (SIG[A-Z0-9]+)")
_SYMBOLS = re.compile(r"Symbols not found: \[([^\]]*)\]")
#: MLIR's runtime op verification (``-generate-runtime-verification``, which the RefBackend's
#: lowering runs): the op, then ``^ why``, then ``Location: loc(...)`` (a path, so not kept).
_VERIFICATION = re.compile(r"Runtime op verification failed\s*\n(?P<op>[^\n]*)\n\s*\^\s*(?P<why>[^\n]+)")
_OP_NAME = re.compile(r"(?:=\s*|^\s*)\"?([a-z_]+\.[a-z_.]+)\b")
#: The check's ``Location:`` when it is a name location and nothing else (the onnx_importer
#: names each op after its ONNX node: ``loc("node_softmax")``): no path in it, so it is kept,
#: and a reduction keeps the failure at that node (it lost it to a check elsewhere, 1 run in 3).
_NAME_LOCATION = re.compile(r'\A\s*Location:\s*loc\("([^"/:]+)"\)\s*$', re.M)


class RuntimeFailureKind(ParsableEnum):
    SIGNAL = "signal"                   # the code died by a signal
    MISSING_SYMBOLS = "missing-symbols"  # the ExecutionEngine could not resolve symbols
    OTHER = "other"                     # any other error at execution (a Python exception)

    @classmethod
    def _error(cls) -> type[HarnessError]:
        return HarnessError  # read back from a record, not typed by the user


@dataclass(frozen=True)
class RuntimeFailure:
    """Two runs fail the same way when their values are equal."""

    kind: RuntimeFailureKind
    signal: str = ""                    # SIGABRT, for a signal
    message: str = ""                   # the last line the code printed (a signal), or the error
    symbols: tuple[str, ...] = ()       # the symbols not found, sorted

    @classmethod
    def of(cls, error: str, signal: str = "") -> RuntimeFailure:
        """From an ``execution`` failure's error text (and the signal, when the caller has it)."""
        found = _SYMBOLS.search(error)
        if found:
            names = sorted(n.strip() for n in found.group(1).split(",") if n.strip())
            return cls(RuntimeFailureKind.MISSING_SYMBOLS, symbols=tuple(names))
        died = _DIED.search(error)
        signal = signal or (died.group(1) if died else "")
        if signal:
            after = error[died.end():].lstrip(": ") if died else error
            verified = _VERIFICATION.search(after)
            if verified:
                op = _OP_NAME.search(verified["op"])
                named = _NAME_LOCATION.match(after[verified.end():])
                message = ("runtime op verification failed: "
                           + (f"{op[1]}: " if op else "") + verified["why"].strip()
                           + (f' at loc("{named[1]}")' if named else ""))
                return cls(RuntimeFailureKind.SIGNAL, signal=signal, message=message)
            lines = [line.strip() for line in after.splitlines() if line.strip()]
            return cls(RuntimeFailureKind.SIGNAL, signal=signal, message=lines[-1] if lines else "")
        lines = [line.strip() for line in error.splitlines() if line.strip()]
        return cls(RuntimeFailureKind.OTHER, message=lines[0][:300] if lines else "")

    def __str__(self) -> str:
        if self.kind is RuntimeFailureKind.MISSING_SYMBOLS:
            return f"the ExecutionEngine cannot resolve symbols: {', '.join(self.symbols)}"
        if self.kind is RuntimeFailureKind.SIGNAL:
            return f"the code dies by {self.signal}" + (f": {self.message}" if self.message else "")
        return f"it fails at execution: {self.message}"

    def to_json(self) -> dict:
        return {"kind": self.kind.value, "signal": self.signal, "message": self.message,
                "symbols": list(self.symbols), "text": str(self)}

    @classmethod
    def from_json(cls, d: dict) -> RuntimeFailure:
        return cls(RuntimeFailureKind.parse(d["kind"]), d.get("signal", ""), d.get("message", ""),
                   tuple(d.get("symbols", ())))


def of_check_json(record: dict) -> RuntimeFailure | None:
    """The run-time failure of a ``harness check --json`` record; None when it did not fail at
    ``execution`` (it ran, or failed before the code ran)."""
    if (record.get("outcome") != CheckOutcome.FAILS.value
            or record.get("failed_stage") != Stage.EXECUTION.value):
        return None
    rb = record.get("refbackend") or {}
    return RuntimeFailure.of(record.get("error") or rb.get("error", ""), rb.get("signal", ""))
