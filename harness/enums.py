"""Closed sets of strings as enums with a ``parse()`` that names the valid values.

A leaf module (like errors.py): every layer's option and outcome enums derive from it.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Self

from harness.errors import HarnessError, UsageError


class ParsableEnum(Enum):
    """A closed set of strings. Members are not strings: compare them with ``is`` (mypy's strict
    equality flags a member compared with its value), read ``.value`` or ``str()`` for the text,
    and ``parse`` a text, which names the valid values when given a wrong one."""

    @classmethod
    def _error(cls) -> type[HarnessError]:
        """What a wrong value raises (a method: an enum's plain attributes become members)."""
        return UsageError

    @classmethod
    def parse(cls, value: str | ParsableEnum) -> Self:
        if isinstance(value, cls):
            return value
        key = str(value).strip().lower().replace("_", "-")
        for member in cls:
            if key in (member.value, member.name.lower().replace("_", "-")):
                return member
        raise cls._error()(f"unknown {cls._what()} {value!r}; use one of "
                         + ", ".join(repr(m.value) for m in cls) + ".")

    @classmethod
    def parse_list(cls, text: str, flag: str) -> tuple[Self, ...]:
        """``flag``'s value: members separated by commas, in the order given, each once (a
        repeated one is dropped); none at all is refused, naming the valid values."""
        names = [n for n in (part.strip() for part in text.split(",")) if n]
        if not names:
            noun = flag.lstrip("-")
            raise cls._error()(f"{flag} {text!r} names no {noun}; give one or more of "
                               + ", ".join(m.value for m in cls) + ", separated by commas.")
        return tuple(dict.fromkeys(cls.parse(n) for n in names))

    @classmethod
    def _what(cls) -> str:
        return re.sub(r"(?<!^)(?=[A-Z])", " ", cls.__name__).lower()

    def __str__(self) -> str:
        return self.value
