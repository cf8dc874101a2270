"""The drivers' option enums (sizes, parts, variants, list depths): a wrong value is a model
option error."""

from __future__ import annotations

from harness.enums import ParsableEnum
from harness.errors import HarnessError, ModelOptionError


class Choice(ParsableEnum):
    """Base of the drivers' option enums: ``parse`` ignores case and names the valid values."""

    @classmethod
    def _error(cls) -> type[HarnessError]:
        return ModelOptionError


class Variant(Choice):
    """Model variant: stock for every model, fixed for OPT alone (the project's FixedOPT)."""

    STOCK = "stock"  # the transformers model itself
    FIXED = "fixed"  # the project's static-structure rewrite (OPT only: FixedOPT)
