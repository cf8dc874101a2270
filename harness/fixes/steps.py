"""One fix tried on one stage's input (:class:`FixStep`) and how its numbers were checked
(:class:`Verification`): the entries of a port record's ``fixes`` and of ``fix.json``'s
``steps``, JSON both ways.

A module of its own, without torch, numpy or the bindings: the port record (and through it the
sweep and its board) reads the steps back without loading what the fixes run on.

- Closed sets are enums in memory (the fix's level, the step's outcome, the check's method and
  verdict), their values in the JSON, parsed where a step is read.
- The stage stays a string: ``harness fix FILE --pipeline`` takes any pipeline name, upstream's
  or a textual pipeline, so it is not a closed set (a port's are ``PortStage`` values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from harness.compiler import jsonfile
from harness.enums import ParsableEnum
from harness.execute.backend_names import BackendName
from harness.knowledge.fixes import FixLevel

from .base import Application, BlockerSeen
from .outcomes import StepOutcome


class Method(ParsableEnum):
    REFERENCE = "reference"    # the reference evaluator on the IR before and after
    EAGER = "eager"            # the module before and after, in eager PyTorch
    REFBACKEND = "refbackend"  # the lowered module on the RefBackend against the original
    IREE = "iree"              # the lowered module on IREE (harness fix --backend iree)

    @classmethod
    def on(cls, backend: BackendName) -> Method:
        """The check of a lowered module run on ``backend`` (a member of each backend's name)."""
        return cls.parse(backend.value)


class FixVerdict(ParsableEnum):
    SAME = "same-numbers"
    CHANGED = "numbers-changed"
    UNVERIFIED = "unverified"


@dataclass
class Verification:
    method: Method
    verdict: FixVerdict
    max_abs_diff: float = 0.0         # over every output (inf/nan too; strings only in JSON)
    detail: str = ""                  # why unverified, or the first output that differs
    seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return self.verdict is FixVerdict.CHANGED

    def render(self) -> str:
        how = {Method.REFERENCE: "the IR before and after, in eager PyTorch (reference evaluator)",
               Method.EAGER: "the module before and after, in eager PyTorch",
               Method.REFBACKEND: "the RefBackend against the original",
               Method.IREE: "IREE against the original"}[self.method]
        if self.verdict is FixVerdict.UNVERIFIED:
            return f"unverified ({how}): {self.detail}"
        text = f"{self.verdict.value}: {how}, max abs diff {self.max_abs_diff:.3g}"
        return f"{text}; {self.detail}" if self.detail else text

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method.value, "verdict": self.verdict.value,
                # JSON has no inf/nan: their strings
                "max_abs_diff": (self.max_abs_diff if math.isfinite(self.max_abs_diff)
                                 else str(self.max_abs_diff)),
                "detail": self.detail,
                "seconds": round(self.seconds, 3)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verification:
        return cls(Method.parse(data["method"]), FixVerdict.parse(data["verdict"]),
                   max_abs_diff=jsonfile.number(data.get("max_abs_diff", 0.0)),
                   detail=str(data.get("detail", "")),
                   seconds=jsonfile.number(data.get("seconds", 0.0)))


@dataclass
class FixStep:
    """One fix tried on one stage's input."""

    fix: str
    level: FixLevel
    answers: BlockerSeen
    stage: str                      # the stage whose input it rewrote (a pipeline, trace, import)
    outcome: StepOutcome
    input_path: str = ""            # the IR it rewrote
    output_path: str = ""           # the rewritten IR ("" when nothing changed)
    application: Application | None = None
    verification: Verification | None = None

    @property
    def kept(self) -> bool:
        return self.outcome is StepOutcome.KEPT

    def recorded(self) -> FixStep:
        """The step as a record holds it: its application without the fixed module and the
        undo (a record outlives the module it was made from)."""
        app = self.application
        return replace(self, application=None if app is None else replace(app, module=None, undo=None))

    def render(self) -> list[str]:
        head = {StepOutcome.KEPT: "applied", StepOutcome.ROLLED_BACK: "ROLLED BACK",
                StepOutcome.NOTHING_CHANGED: "not applied"}[self.outcome]
        lines = [f"{head}: {self.fix} ({self.level.value}) for {self.answers}"]
        if self.application is not None:
            lines.append(f"  changed: {self.application.summary()}")
        if self.verification is not None:
            lines.append(f"  numbers: {self.verification.render()}")
        if self.outcome is StepOutcome.ROLLED_BACK:
            lines.append("  the fix changed the numbers, so the run goes on without it "
                         f"(its output is kept for inspection: {self.output_path})")
        elif self.output_path:
            lines.append(f"  -> {self.output_path}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {"fix": self.fix, "level": self.level.value, "answers": self.answers.to_json(),
                "stage": self.stage, "outcome": self.outcome.value,
                "input_path": self.input_path, "output_path": self.output_path,
                "application": self.application.to_json() if self.application else None,
                "verification": self.verification.to_json() if self.verification else None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FixStep:
        """A step as :meth:`to_json` wrote it (every version so far: the shape has not changed
        since the first record); a missing or wrong field raises KeyError, TypeError or a
        HarnessError, which a record's reader turns into one paragraph naming the file."""
        application, verification = data.get("application"), data.get("verification")
        return cls(str(data["fix"]), FixLevel.parse(data["level"]),
                   BlockerSeen.from_json(data.get("answers") or {}), str(data.get("stage", "")),
                   StepOutcome.parse(data["outcome"]),
                   input_path=str(data.get("input_path", "")),
                   output_path=str(data.get("output_path", "")),
                   application=None if application is None else Application.from_json(application),
                   verification=None if verification is None else Verification.from_json(verification))
