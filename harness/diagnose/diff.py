"""``harness diff``: the same targets on two torch-mlir-opt builds, and what changed.

A target is an IR file with its pipeline, a record (its input and pipeline, run again), or one
test of a lit suite (lit runs the suite once per build with ``--param opt=``). Each target gets
one :class:`Side` per build, read from a ``RunRecord`` (or lit's result code), and the pair is
classified into one :class:`Change`. Unchanged targets are counted, changed ones listed.

The JSON written for the board (``DiffResult.to_json``), format ``harness.diff/1``::

    {"schema": "harness.diff/1",
     "a": BUILD, "b": BUILD,            # harness.compiler.builds.Build.to_json(): name, kind,
                                        #   path, distribution, version, llvm_version, ...
     "summary": {"targets": N, "unchanged": N, "changes": {CHANGE: N, ...},
                 "time_ratio_geomean": X | null},   # B's time / A's, over targets timed on both
     "entries": [{"target": {"kind": "ir" | "lit", "id": STR, "input": STR, "pipeline": STR},
                  "change": CHANGE,                 # a Change value
                  "time_ratio": X | null,
                  "a": SIDE, "b": SIDE}, ...]}      # every target, changed or not
    SIDE = {"outcome": STR,    # an Outcome value, or a lit result code (PASS, FAIL, XFAIL, ...)
            "ok": BOOL, "crashed": BOOL, "signature": STR, "elapsed_s": X,
            "record": RUNRECORD | null}             # RunRecord.to_json() for ir targets
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Sequence

from harness.compiler import jsonfile
from harness import defaults
from harness.compiler.builds import Build
from harness.compiler.outcomes import ParsableEnum
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions, run_pipeline
from harness.errors import UsageError

from . import diff_targets
from .diff_targets import DiffTarget, TargetKind

DIFF_SCHEMA = "harness.diff/1"


class Change(ParsableEnum):
    """How a target's result on B differs from A's, most telling first when several apply."""

    CRASH_APPEARED = "crash-appeared"      # B crashes (or asserts, or hangs), A did not
    CRASH_GONE = "crash-gone"              # A crashed, B does not
    BROKE = "pass->fail"                   # A passed, B fails
    FIXED = "fail->pass"                   # A failed, B passes
    SIGNATURE = "signature-changed"        # both fail (or both pass a lit test) differently
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Side:
    """One target's result on one build."""

    outcome: str            # an Outcome value, or a lit result code
    ok: bool
    crashed: bool
    signature: str          # str(Signature): equal strings mean the same failure
    elapsed_s: float
    record: RunRecord | None = None

    @classmethod
    def of_record(cls, record: RunRecord) -> Side:
        return cls(outcome=record.outcome.value, ok=record.ok, crashed=record.outcome.is_crash,
                   signature=str(record.signature), elapsed_s=record.elapsed_s, record=record)

    def to_json(self) -> dict:
        return {"outcome": self.outcome, "ok": self.ok, "crashed": self.crashed,
                "signature": self.signature, "elapsed_s": round(self.elapsed_s, 4),
                "record": self.record.to_json() if self.record is not None else None}

    @classmethod
    def from_json(cls, d: dict) -> Side:
        record = RunRecord.from_json(d["record"]) if d.get("record") else None
        return cls(outcome=d["outcome"], ok=d["ok"], crashed=d["crashed"],
                   signature=d["signature"], elapsed_s=d["elapsed_s"], record=record)


def classify_change(a: Side, b: Side) -> Change:
    if b.crashed and not a.crashed:
        return Change.CRASH_APPEARED
    if a.crashed and not b.crashed:
        return Change.CRASH_GONE
    if a.ok and not b.ok:
        return Change.BROKE
    if b.ok and not a.ok:
        return Change.FIXED
    return Change.UNCHANGED if a.signature == b.signature else Change.SIGNATURE


@dataclass(frozen=True)
class DiffEntry:
    target: DiffTarget
    a: Side
    b: Side

    @property
    def change(self) -> Change:
        return classify_change(self.a, self.b)

    @property
    def time_ratio(self) -> float | None:
        """B's time over A's; None when either is not timed."""
        if self.a.elapsed_s <= 0 or self.b.elapsed_s <= 0:
            return None
        return self.b.elapsed_s / self.a.elapsed_s

    def to_json(self) -> dict:
        ratio = self.time_ratio
        return {"target": self.target.to_json(), "change": self.change.value,
                "time_ratio": round(ratio, 4) if ratio is not None else None,
                "a": self.a.to_json(), "b": self.b.to_json()}

    @classmethod
    def from_json(cls, d: dict) -> DiffEntry:
        return cls(DiffTarget.from_json(d["target"]), Side.from_json(d["a"]), Side.from_json(d["b"]))


@dataclass
class DiffResult:
    a: Build
    b: Build
    entries: list[DiffEntry] = field(default_factory=list)

    @property
    def changed(self) -> list[DiffEntry]:
        return [e for e in self.entries if e.change is not Change.UNCHANGED]

    def counts(self) -> dict[str, int]:
        """Changed targets per Change value, in Change order, only the kinds that occur."""
        found = {c.value: 0 for c in Change if c is not Change.UNCHANGED}
        for entry in self.changed:
            found[entry.change.value] += 1
        return {k: v for k, v in found.items() if v}

    def time_ratio_geomean(self) -> float | None:
        ratios = [r for r in (e.time_ratio for e in self.entries) if r is not None]
        if not ratios:
            return None
        return math.exp(sum(math.log(r) for r in ratios) / len(ratios))

    def to_json(self) -> dict:
        geo = self.time_ratio_geomean()
        return {
            "schema": DIFF_SCHEMA,
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "summary": {"targets": len(self.entries),
                        "unchanged": len(self.entries) - len(self.changed),
                        "changes": self.counts(),
                        "time_ratio_geomean": round(geo, 4) if geo is not None else None},
            "entries": [e.to_json() for e in self.entries],
        }

    @classmethod
    def from_json(cls, d: dict) -> DiffResult:
        if d.get("schema") != DIFF_SCHEMA:
            raise UsageError(f"not a {DIFF_SCHEMA} file (schema {d.get('schema')!r}); write it "
                             "with this harness's 'harness diff ... -o FILE'.")
        return cls(Build.from_json(d["a"]), Build.from_json(d["b"]),
                   [DiffEntry.from_json(e) for e in d["entries"]])

    def render(self, *, detail_lines: int = 2) -> list[str]:
        lines = [f"A: {self.a.describe()}", f"B: {self.b.describe()}"]
        changed = self.changed
        lines.append(f"{len(self.entries)} target{'s' if len(self.entries) != 1 else ''}: "
                     f"{len(changed)} changed, {len(self.entries) - len(changed)} unchanged")
        for entry in changed:
            lines.append(f"  {entry.change.value:18s} {entry.target.label}")
            lines.append(f"      A: {_side_line(entry.a)}")
            lines.append(f"      B: {_side_line(entry.b)}")
            ratio = entry.time_ratio
            if ratio is not None:
                lines.append(f"      time B/A {ratio:.2f}x ({entry.a.elapsed_s:.2f} s -> "
                             f"{entry.b.elapsed_s:.2f} s)")
        geo = self.time_ratio_geomean()
        if geo is not None:
            timed = sum(1 for e in self.entries if e.time_ratio is not None)
            lines.append(f"time B/A: {geo:.2f}x (geometric mean over {timed} target"
                         f"{'s' if timed != 1 else ''})")
        return lines


def _side_line(side: Side) -> str:
    if side.record is None:  # a lit result code
        return side.outcome
    return side.signature if not side.ok else "success"


# ---------------------------------------------------------------------------------------------
# Running

@dataclass(frozen=True)
class DiffOptions:
    timeout_s: float = defaults.TIMEOUT_S   # per torch-mlir-opt run
    lit_args: tuple[str, ...] = ()         # extra lit arguments for lit targets (e.g. --filter)
    progress: Callable[[str], None] | None = None


def diff_builds(a: Build, b: Build, targets: Sequence[DiffTarget],
                options: DiffOptions = DiffOptions()) -> DiffResult:
    """Runs every target on build ``a`` then ``b`` (one after the other, so times compare)."""
    say = options.progress or (lambda _line: None)
    result = DiffResult(a, b)
    run_options = RunOptions(timeout_s=options.timeout_s)
    for target in targets:
        if target.kind is TargetKind.IR:
            say(f"{target.label}: A, then B")
            sides = [Side.of_record(run_pipeline(target.input, target.pipeline, opt=build.path,
                                                 options=run_options)) for build in (a, b)]
            result.entries.append(DiffEntry(target, sides[0], sides[1]))
        else:
            result.entries += _diff_lit(a, b, target, options, say)
    return result


def _diff_lit(a: Build, b: Build, suite: DiffTarget, options: DiffOptions,
              say: Callable[[str], None]) -> list[DiffEntry]:
    results = []
    for label, build in (("A", a), ("B", b)):
        say(f"lit {suite.input} on {label} ({build.name or build.path})")
        results.append(lit_sides(diff_targets.run_lit(suite.input, build.path, options.lit_args)))
    entries = []
    for name in sorted(set(results[0]) | set(results[1])):
        sides = [r.get(name) or _lit_side("MISSING", 0.0) for r in results]
        entries.append(DiffEntry(DiffTarget(TargetKind.LIT, name, input=suite.input), *sides))
    return entries


_LIT_OK = {"PASS", "XFAIL", "UNSUPPORTED", "EXCLUDED", "SKIPPED"}


def _lit_side(code: str, elapsed: float) -> Side:
    return Side(outcome=code, ok=code in _LIT_OK, crashed=False, signature=code, elapsed_s=elapsed)


def lit_sides(results_json: dict) -> dict[str, Side]:
    """Test name -> Side, from lit's ``-o FILE`` JSON."""
    return {t["name"]: _lit_side(t["code"], float(t.get("elapsed") or 0.0))
            for t in results_json.get("tests", [])}


def write_json(result: DiffResult, path: str | os.PathLike) -> Path:
    from harness.compiler.irfile import write_atomically

    return write_atomically(path, jsonfile.dumps(result.to_json(), indent=2) + "\n",
                            hint="Choose a writable -o path for the diff.")
