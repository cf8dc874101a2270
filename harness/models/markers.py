"""Where each seed idiom sits in ``seed.py``: the line a test expects a location to point at.

Read as text, without importing torch, so ``lit_tests/lit.cfg.py`` can turn the markers into
``%{seed-line:NAME}`` substitutions cheaply.
"""

from __future__ import annotations

import re
from pathlib import Path

#: The seed catalog's modules; each idiom's line there ends in a ``# seed-idiom: NAME`` comment.
SEED_SOURCE = Path(__file__).resolve().parent / "seed.py"
_MARKER = re.compile(r"#\s*seed-idiom:\s*(?P<name>[\w-]+)")


def marker_lines(path: str | Path = SEED_SOURCE) -> dict[str, tuple[str, int]]:
    """Idiom name -> (file, line) of its marker."""
    source = Path(path)
    found: dict[str, tuple[str, int]] = {}
    for n, line in enumerate(source.read_text().splitlines(), start=1):
        m = _MARKER.search(line)
        if m:
            found[m.group("name")] = (str(source), n)
    return found
