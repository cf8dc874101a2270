"""Strict JSON for everything the harness writes and reads back as its own (records, results,
bundles' record.json, the sweep's files).

Python's ``json`` writes a float infinity or NaN as the bare words ``Infinity``/``NaN``, which
are not JSON: a browser's ``JSON.parse``, ``jq`` and most other readers refuse the whole file.
Numbers here can be infinite or NaN (a difference against a reference that overflowed, a ratio
over zero), so :func:`dumps` writes them as the strings ``"inf"``, ``"-inf"`` and ``"nan"`` (the
port record's encoding since schema 1.0; :func:`number` reads them back), and :func:`loads`
refuses the bare words, so a file some other writer made non-standard is an error where it is
read, not a surprise in another tool.
"""

from __future__ import annotations

import json
import math
from enum import Enum
from typing import Any

#: A non-finite float as the text it is written as.
NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _text_of(value: float) -> str:
    return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"


def _walk(data: Any, *, texts: bool) -> Any:
    """``data`` with every enum member (at any depth, keys too) replaced by its value and, when
    ``texts``, every non-finite float by its text."""
    if isinstance(data, Enum):
        return _walk(data.value, texts=texts)
    if texts and isinstance(data, float) and not math.isfinite(data):
        return _text_of(data)
    if isinstance(data, dict):
        return {(key.value if isinstance(key, Enum) else key): _walk(value, texts=texts)
                for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_walk(value, texts=texts) for value in data]
    return data


def plain(data: Any) -> Any:
    """``data`` with every enum member (at any depth) replaced by its value: what a record's
    ``to_json`` returns is JSON's own types, whoever serializes it (the closed sets are plain
    enums, which ``json`` refuses)."""
    return _walk(data, texts=False)


def encode(data: Any) -> Any:
    """``data`` as :func:`plain` makes it, and every non-finite float replaced by its text."""
    return _walk(data, texts=True)


def dumps(data: Any, *, indent: int | None = None) -> str:
    """Standard JSON: non-finite floats as text; anything else JSON cannot hold raises."""
    return json.dumps(encode(data), indent=indent, allow_nan=False)


def _refuse(word: str) -> float:
    raise json.JSONDecodeError(f"'{word}' is not JSON (this project writes non-finite numbers "
                               "as \"inf\", \"-inf\" and \"nan\")", word, 0)


def loads(text: str | bytes) -> Any:
    """Parse standard JSON only: ``Infinity``, ``-Infinity`` and ``NaN`` raise
    :class:`json.JSONDecodeError`, as malformed text does."""
    return json.loads(text, parse_constant=_refuse)


def number(value: float | int | str) -> float:
    """A number as :func:`dumps` wrote it (``"inf"`` etc. back to floats)."""
    if isinstance(value, str):
        if value in NON_FINITE:
            return NON_FINITE[value]
        raise ValueError(f"{value!r} is not a number")
    return float(value)
