"""What every fix is: a name, the blockers it answers, the level it works at, and one rewrite.

A fix answers a blocker the diagnosis found (``tools.blockers``: the op whose conversion
failed, not an operand left over because of it) or an error a Python stage raised (export,
import). It changes as little as it can, checks the condition under which its rewrite keeps
the model's meaning at every site, and refuses a site where it cannot tell: a refusal is
recorded, never silently skipped. Whether the numbers really stayed the same is not the fix's
word: the drivers (:mod:`.driver`, :mod:`.modules`) verify after each fix and roll it back.

Levels (``knowledge.fixes.FixLevel``): an :class:`IRFix` edits the torch dialect through the
MLIR bindings, in place; a :class:`ModuleFix` changes an ``nn.Module`` before tracing or
export and can be undone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from harness.compiler.locations import first_file_location
from harness.knowledge.fixes import FIXES, FixLevel, KnownFix

if TYPE_CHECKING:
    import torch
    from torch_mlir import ir


@dataclass(frozen=True)
class BlockerSeen:
    """A blocker as a port or ``harness fix`` met it: the op whose conversion failed, or the
    message of an error (a Python stage's exception, a pass's diagnostic)."""

    op: str = ""          # torch.aten.__and__.Tensor (as tools.blockers names it)
    message: str = ""     # "Could not find state mapping for buffer", ...
    stage: str = ""       # torch-to-linalg, export, import, ...

    def __str__(self) -> str:
        what = self.op or (self.message.splitlines() or ["?"])[0][:160]
        return f"{what} ({self.stage})" if self.stage else what

    def to_json(self) -> dict:
        return {"op": self.op, "message": self.message, "stage": self.stage}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BlockerSeen:
        return cls(op=str(data.get("op", "")), message=str(data.get("message", "")),
                   stage=str(data.get("stage", "")))


@dataclass
class Site:
    """One place a fix changed."""

    what: str        # torch.aten.__and__.Tensor -> torch.aten.bitwise_and.Tensor; a buffer's name
    location: str    # the op's location, or the module path

    def to_json(self) -> dict:
        return {"what": self.what, "location": self.location}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Site:
        return cls(str(data["what"]), str(data.get("location", "")))


@dataclass
class RefusedSite:
    """A place the fix would change but will not: its condition does not hold (or cannot be
    checked) there."""

    what: str
    location: str
    reason: str

    def render(self) -> str:
        return f"{self.what} at {self.location}: {self.reason}"

    def to_json(self) -> dict:
        return {"what": self.what, "location": self.location, "reason": self.reason}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RefusedSite:
        return cls(str(data["what"]), str(data.get("location", "")), str(data.get("reason", "")))


@dataclass
class Application:
    """What one fix did to one module or IR file."""

    fix: str
    level: FixLevel
    changed: list[Site] = field(default_factory=list)
    refused: list[RefusedSite] = field(default_factory=list)
    # Module fixes: the module to trace or export now, and how to put the original back.
    module: Any = None
    undo: Callable[[], None] | None = None

    @property
    def applied(self) -> bool:
        return bool(self.changed)

    def summary(self) -> str:
        """``aten.__and__.Tensor -> aten.bitwise_and.Tensor (x2, first at masking_utils.py:54)``"""
        kinds: dict[str, list[Site]] = {}
        for site in self.changed:
            kinds.setdefault(site.what, []).append(site)
        parts = []
        for what, sites in kinds.items():
            where = sites[0].location.rsplit("/", 1)[-1]
            count = f"x{len(sites)}, first " if len(sites) > 1 else ""
            parts.append(f"{what} ({count}at {where})" if where else what)
        text = "; ".join(parts) if parts else "nothing changed"
        if self.refused:
            text += f"; refused {len(self.refused)}: {self.refused[0].render()}"
        return text

    def to_json(self) -> dict:
        return {"fix": self.fix, "level": self.level.value,
                "changed": [s.to_json() for s in self.changed],
                "refused": [r.to_json() for r in self.refused]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Application:
        """As :meth:`to_json` wrote it: the sites, not the module or the undo (a record's)."""
        return cls(str(data["fix"]), FixLevel.parse(data["level"]),
                   changed=[Site.from_json(c) for c in data.get("changed", [])],
                   refused=[RefusedSite.from_json(r) for r in data.get("refused", [])])


class Fix(ABC):
    """One named fix: the catalog holds one instance of each (see :mod:`.catalog`)."""

    name: ClassVar[str]                     # as in knowledge.fixes.FIXES
    level: ClassVar[FixLevel]
    ops: ClassVar[tuple[str, ...]] = ()     # blocker ops it answers (tools.blockers names)
    messages: ClassVar[tuple[str, ...]] = ()  # error texts it answers (substrings)
    miscompiles: ClassVar[tuple[str, ...]] = ()  # ops that lower to wrong numbers without it
    conditions: ClassVar[str] = ""          # where it refuses a site (checked at each one)

    @property
    def known(self) -> KnownFix:
        """What the diagnoses say about it (changes, why, the renames they replay)."""
        return FIXES[self.name]

    def answers(self, blocker: BlockerSeen) -> bool:
        if blocker.op and blocker.op in self.ops:
            return True
        return bool(blocker.message) and any(m in blocker.message for m in self.messages)

    def describe(self) -> str:
        return self.known.describe()

    def signatures(self) -> list[str]:
        """The blockers it answers, as ``harness fix --list`` prints them."""
        return ([f"op {op}" for op in self.ops] + [f"error containing {m!r}" for m in self.messages]
                + [f"op {op} (lowers, with wrong numbers)" for op in self.miscompiles])

    def render(self) -> list[str]:
        """``harness fix --list``: name, level, blockers, change, why the numbers stay."""
        known = self.known
        return [f"{self.name} ({self.level.value})",
                f"  answers: {'; '.join(self.signatures())}",
                f"  changes: {known.changes}",
                f"  why the numbers stay: {known.why}",
                f"  conditions: {self.conditions}"]

    def to_json(self) -> dict:
        return {"name": self.name, "level": self.level.value, "ops": list(self.ops),
                "messages": list(self.messages),
                "miscompiles": list(self.miscompiles), "changes": self.known.changes,
                "why": self.known.why, "conditions": self.conditions,
                "renames": [list(r) for r in self.known.renames]}


class IRFix(Fix):
    """A rewrite of the torch dialect through the MLIR bindings."""

    level = FixLevel.TORCH_IR

    @abstractmethod
    def rewrite(self, module: ir.Operation) -> Application:
        """Rewrites ``module`` in place (inside its context) and says where and what it
        refused."""


class TargetFix(Fix):
    """A rewrite of a target's contract (TOSA) through the MLIR bindings, before a backend
    compiles it: torch-mlir's output is valid for its target but outside what a backend takes
    (IREE checks the TOSA profiles; the RefBackend, through tosa-to-linalg, does not). It
    answers the backend compile's error; the port checks the numbers afterwards."""

    level = FixLevel.TARGET_IR
    target: ClassVar[str] = ""              # the Target (its value) whose contract it rewrites

    @abstractmethod
    def rewrite(self, module: ir.Operation) -> Application:
        """Rewrites ``module`` in place (inside its context) and says where and what it
        refused."""


@dataclass(frozen=True)
class ModuleEvidence:
    """What a module fix may look at besides the module: the trace that showed the blocker
    (TorchScript) and the example inputs."""

    script: Any = None                      # torch.jit.ScriptModule, when traced
    examples: tuple = ()


class ModuleFix(Fix):
    """A change to an ``nn.Module`` before tracing or export; undone by ``Application.undo``."""

    level = FixLevel.MODULE

    def on_export(self, exported: torch.export.ExportedProgram) -> torch.export.ExportedProgram | None:
        """The same change made on an exported program, where it can be made there (None: it
        cannot, or it changes nothing): a frontend whose import failed may then import its
        program again, changed, instead of making the fixed module's program anew."""
        return None

    @abstractmethod
    def apply(self, module: torch.nn.Module, evidence: ModuleEvidence = ModuleEvidence()) -> Application:
        """The module to trace or export now (``Application.module``), and ``undo``."""


def walk(op: ir.Operation) -> Iterator[ir.Operation]:
    """Every op nested in ``op`` (collected first: safe to edit while going)."""
    found: list = []
    stack = [op]
    while stack:
        current = stack.pop()
        for region in current.regions:
            for block in region.blocks:
                children = [child.operation for child in block.operations]
                found += children
                stack += reversed(children)
    return iter(found)


def location_text(op: ir.Operation) -> str:
    """The op's innermost ``FILE:LINE`` (a call site's first frame), or its location as MLIR
    prints it when it names no file."""
    text = str(op.location)
    found = first_file_location(text)
    return found.file_line if found is not None else text[:200]
