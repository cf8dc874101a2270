"""The board's cells: one per model variant, frontend and build, with a status that orders
outcomes from worst to best, so a baseline comparison can say better or worse (between two
sweeps, or between two builds of one sweep)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from harness.enums import ParsableEnum
from harness.frontends.names import FrontendName
from harness.execute.outcomes import CheckOutcome
from harness.models.modality import Modality
from harness.port.record import Blocker, DynamicDims, FrontendPort, PortOutcome, PortStage

from .records import UNSUPPORTED, ModelResult, SweepDir, check_outcome


class Status(ParsableEnum):
    """A cell's status, worst first (the order is the rank a baseline compares)."""

    CRASHED = "crashed"                       # the port process crashed, hung or wrote nothing
    UNSUPPORTED = "unsupported"               # the harness cannot drive the model (its reason)
    FAILS = "fails"                           # stopped at a stage
    MISCOMPILE = "miscompile"                 # lowered; the op-level check's numbers differ
    NUMERICS_MISMATCH = "numerics-mismatch"   # lowered; differs from eager (frontend or torch-mlir)
    PARTIAL = "partial"                       # lowered; matches eager, but part of the model never ran
    LOWERED = "lowered"                       # lowered; numbers not checked
    VERIFIED = "verified"                     # lowered; matches eager (and the op-level check)

    @property
    def rank(self) -> int:
        return list(Status).index(self)

    @property
    def ok(self) -> bool:
        return self in (Status.LOWERED, Status.VERIFIED)


@dataclass
class Cell:
    """One frontend of one model variant."""

    model: str
    variant: str                                              # the variant's name (gpt2, opt-fixed)
    frontend: FrontendName | str                              # "-" for a model that left no record
    status: Status
    reached: PortStage | None = None
    failed_stage: PortStage | None = None
    blockers: list[Blocker] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)          # the fixes applied (port --fix)
    max_abs_diff: float | None = None                         # the worst of the input sets
    stage_seconds: dict[str, float] = field(default_factory=dict)
    check: dict[str, Any] | None = None                      # harness check --json, if run
    folder: str = ""
    report_command: str = ""
    detail: str = ""                                          # a crash's reason
    culprit: str = ""                                         # the one op that computes wrong
    build: str = ""                                           # --builds: the build that ran
    modality: Modality = Modality.UNKNOWN                     # what the traced inputs carry
    dynamic: DynamicDims | None = None                        # port --dynamic: what stayed dynamic

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.model, self.variant, str(self.frontend))


@dataclass
class Row:
    """One model variant on one build: its cells by frontend."""

    model: str
    variant: str
    cells: dict[str, Cell] = field(default_factory=dict)
    build: str = ""
    modality: Modality = Modality.UNKNOWN


def _worst_diff(port: FrontendPort) -> float | None:
    """The largest difference of the input sets; nan counts as the largest. A set whose run
    crashed has no difference (its nan says it did not run, not that it differs)."""
    values = [n.max_abs_diff for n in port.numerics if n.verdict is not PortOutcome.FAILS]
    if not values:
        return None
    return next((v for v in values if math.isnan(v)), max(values))


def _applied(port: FrontendPort) -> list[str]:
    """The fixes kept (``harness.fixes.loop``: each fix tried is kept or rolled back)."""
    return [f.fix for f in port.fixes if f.kept]


def _status(port: FrontendPort, check: dict[str, Any] | None) -> Status:
    if port.outcome is PortOutcome.FAILS:
        return Status.FAILS
    if check is not None and check_outcome(check) is CheckOutcome.NUMERICS_MISMATCH:
        return Status.MISCOMPILE
    return Status.parse(port.outcome.value)


def cells_of(result: ModelResult) -> list[Row]:
    if result.record is None:
        failure = result.failure
        if failure is not None and failure.reason is UNSUPPORTED:
            status, detail = Status.UNSUPPORTED, failure.detail
        else:
            status = Status.CRASHED
            detail = f"{failure.reason}: {failure.detail}" if failure else "no record"
        cell = Cell(result.model, result.model, "-", status, detail=detail, build=result.build)
        return [Row(result.model, result.model, {"-": cell}, build=result.build)]
    rows = []
    modality = result.record.modality
    for variant in result.record.variants:
        row = Row(result.model, variant.name, build=result.build, modality=modality)
        for port in variant.ports:
            check = result.checks.get((variant.name, port.path))
            report = next((c for c in port.commands if " report " in f" {c} "), "")
            row.cells[port.path] = Cell(
                result.model, variant.name, port.path, _status(port, check),
                reached=port.reached, failed_stage=port.failed_stage, blockers=list(port.blockers),
                fixes=_applied(port), max_abs_diff=_worst_diff(port),
                stage_seconds=port.stage_seconds(), check=check, folder=port.folder,
                report_command=report,
                culprit=next((n.culprit for n in port.numerics if n.culprit), ""),
                build=result.build, modality=modality, dynamic=port.dynamic)
        rows.append(row)
    return rows


def rows_of(sweep: SweepDir) -> list[Row]:
    return [row for result in sweep.models for row in cells_of(result)]


def frontends_of(rows: list[Row]) -> list[str]:
    """The table's columns: TorchScript first (the mission's path), then FX, then the rest."""
    seen = {f for r in rows for f in r.cells if f != "-"}
    order = [FrontendName.TORCHSCRIPT.value, FrontendName.FX.value]
    return [f for f in order if f in seen] + sorted(seen - set(order))


@dataclass
class CellChange:
    key: tuple[str, str, str]
    before: Status | None
    after: Status | None
    build: str = ""        # the build whose cell changed ("" without --builds)
    was: str = ""          # between builds: the baseline build the cell is compared with

    @property
    def direction(self) -> str:
        if self.before is None:
            return "new"
        if self.after is None:
            return "gone"
        return "better" if self.after.rank > self.before.rank else "worse"


def columns_of(rows: list[Row]) -> set[str]:
    """The ports a sweep asked for: a column per frontend, target and backend (``fx-tosa-iree``),
    without the crashed models' "-"."""
    return {c for r in rows for c in r.cells if c != "-"}


def compare(old: list[Row], new: list[Row]) -> list[CellChange]:
    """What changed between two sweeps, cell by cell and build by build (a crashed model
    counts for each of the other sweep's frontends of it). An old sweep of one build (no
    ``--builds``) is the baseline of each build of a new ``--builds`` sweep. Only the columns
    both sweeps have are compared: a column one sweep did not ask for (another --target,
    --backend or --frontend) is no model getting better or worse (a TOSA sweep against a linalg
    one gave each old linalg cell as "gone" and each TOSA cell as "new"); the board names those
    columns instead (:func:`columns_of`)."""
    shared = columns_of(old) & columns_of(new) | {"-"}
    def flat(rows: list[Row], build: str | None = None) -> dict[tuple[tuple[str, str, str], str], Status]:
        return {(c.key, c.build if build is None else build): c.status
                for r in rows for c in r.cells.values()}

    builds = {r.build for r in new}
    if {r.build for r in old} <= {""} and "" not in builds:
        before = {k: v for b in builds for k, v in flat(old, b).items()}
    else:
        before = flat(old)
    after = flat(new)
    changes = []
    for key, build in sorted(set(before) | set(after)):
        b, a = before.get((key, build)), after.get((key, build))
        if b != a and key[2] in shared:
            changes.append(CellChange(key, b, a, build))
    return changes


def compare_builds(rows: list[Row], baseline: str) -> list[CellChange]:
    """``--baseline build:NAME``: every other build's cells against build NAME's, in one sweep."""
    def flat(build: str) -> dict[tuple[str, str, str], Status]:
        return {c.key: c.status for r in rows if r.build == build for c in r.cells.values()}

    base = flat(baseline)
    changes = []
    for build in dict.fromkeys(r.build for r in rows if r.build != baseline):
        other = flat(build)
        for key in sorted(set(base) | set(other)):
            b, a = base.get(key), other.get(key)
            if b != a:
                changes.append(CellChange(key, b, a, build, was=baseline))
    return changes
