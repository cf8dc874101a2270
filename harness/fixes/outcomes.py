"""How one fix tried on one stage ended: the ``outcome`` of each entry of a port record's
``fixes`` list. A module of its own (no torch, no bindings), so the sweep and its board read
it without loading what the fixes run on."""

from __future__ import annotations

from harness.enums import ParsableEnum


class StepOutcome(ParsableEnum):
    KEPT = "kept"
    ROLLED_BACK = "rolled-back"          # the numbers changed: the next run uses the IR before it
    NOTHING_CHANGED = "nothing-changed"  # every site was refused, or none was found
