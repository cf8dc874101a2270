"""A closed set of option strings (sizes, parts, variants, list depths) as an enum with parse()."""

from __future__ import annotations

from enum import Enum

from harness.errors import ModelOptionError


class Choice(str, Enum):
    """Base of the drivers' option enums: ``parse`` ignores case and names the valid values."""

    @classmethod
    def parse(cls, text: str):
        try:
            return cls(text.strip().lower())
        except ValueError:
            doc = (cls.__doc__ or "").strip().splitlines()[0].rstrip(".")
            raise ModelOptionError(
                f"unknown {cls.__name__.lower()} '{text}' ({doc}); choose one of: "
                f"{', '.join(c.value for c in cls)}."
            ) from None
