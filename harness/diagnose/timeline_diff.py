"""Two timelines (two builds, or two files) compared pass by pass: the first pass whose output
differs, with both rows' diffs. Rows are compared in run order by pass, op and the digest of the
module after the pass (``PassRow.digest``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.enums import ParsableEnum

from .timeline_record import PassRow, Timeline


class Difference(ParsableEnum):
    INPUT = "different-input"      # the two runs started from different modules (row 0)
    PASS = "different-pass"        # the two runs ran a different pass (or on another op) here
    OUTPUT = "different-output"    # the same pass, a different module after it
    STATE = "different-state"      # the same output, but one failed here
    ONLY_A = "only-in-a"           # B stopped earlier
    ONLY_B = "only-in-b"           # A stopped earlier


@dataclass(frozen=True)
class TimelineDifference:
    kind: Difference
    index: int                     # the row number, 1-based, in both runs (0: the input)
    a: PassRow | None
    b: PassRow | None
    a_folder: Path
    b_folder: Path

    def _side(self, label: str, row: PassRow | None, folder: Path) -> list[str]:
        if row is None:
            return [f"  {label}: no pass {self.index} (the run had stopped)"]
        lines = [f"  {label}: #{row.index} {row.pass_name} on {row.anchor} ({row.state.value})",
                 f"     page: {folder / 'index.html'}#pass-{row.index}"]
        if row.diff_file:
            lines.append(f"     diff: {folder / row.diff_file}")
        if row.ir_file:
            lines.append(f"     IR after: {folder / row.ir_file}")
        return lines

    def render(self) -> list[str]:
        if self.kind is Difference.INPUT:
            return ["the two timelines start from different input modules: "
                    f"{self.a_folder / 'input.mlir'} and {self.b_folder / 'input.mlir'}"]
        return [f"first difference at pass {self.index}: {self.kind.value}",
                *self._side("A", self.a, self.a_folder), *self._side("B", self.b, self.b_folder)]

    def to_json(self) -> dict:
        return {"kind": self.kind.value, "index": self.index,
                "a": self.a.to_json() if self.a else None, "b": self.b.to_json() if self.b else None,
                "a_folder": str(self.a_folder), "b_folder": str(self.b_folder)}


def first_difference(a: Timeline, b: Timeline, a_folder: Path, b_folder: Path) -> TimelineDifference | None:
    """The first row where the two runs differ; None when every row is the same."""
    if a.input_digest and b.input_digest and a.input_digest != b.input_digest:
        return TimelineDifference(Difference.INPUT, 0, None, None, a_folder, b_folder)
    for i in range(max(len(a.rows), len(b.rows))):
        ra = a.rows[i] if i < len(a.rows) else None
        rb = b.rows[i] if i < len(b.rows) else None
        if ra is None or rb is None:
            kind = Difference.ONLY_B if ra is None else Difference.ONLY_A
        elif (ra.pass_name, ra.anchor) != (rb.pass_name, rb.anchor):
            kind = Difference.PASS
        elif ra.digest != rb.digest:
            kind = Difference.OUTPUT
        elif ra.state is not rb.state:
            kind = Difference.STATE
        else:
            continue
        return TimelineDifference(kind, i + 1, ra, rb, a_folder, b_folder)
    return None
