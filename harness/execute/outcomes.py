"""How a ``harness check`` ended: a leaf without torch or numpy, so the sweep and its board read
check results back without loading either."""

from __future__ import annotations

from harness.enums import ParsableEnum
from harness.errors import HarnessError


class CheckOutcome(ParsableEnum):
    VERIFIED = "verified"
    NUMERICS_MISMATCH = "numerics-mismatch"
    FAILS = "fails"
    ERROR = "error"  # the check itself did not finish (a sweep records its timeout or exit)

    @classmethod
    def _error(cls) -> type[HarnessError]:
        return HarnessError  # read back from a record, not typed by the user
