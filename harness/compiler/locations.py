"""MLIR locations as printed (``loc("file.py":12:5)``, call sites, fused and named locations):
the one parser of their file positions, and the one type they are read into.

A printed location nests its positions: ``callsite("a.py":3:1 at "b.py":9:2)`` is the op's own
line in ``a.py`` called from ``b.py``; a fused or named location wraps positions in order. The
file is an MLIR string literal, so a quote or a non-ASCII byte in a path arrives escaped
(``\\"``, ``\\C3\\A9``) and is decoded here. Reads text only: no bindings, no torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .text import unescape_mlir_string

# A quoted file (escapes allowed), a line, and a column when printed (MLIR always prints one in
# a FileLineColLoc; the optional column also reads the `"file":line` of hand-written text).
_FILE_POSITION = re.compile(r'"(?P<file>(?:[^"\\]|\\.)*)":(?P<line>\d+)(?::(?P<col>\d+))?')


@dataclass(frozen=True)
class SourceLocation:
    """One file position of an op's location."""

    file: str
    line: int
    col: int = 0

    @property
    def file_line(self) -> str:
        """``file:line``: how a record or a title names a Python line."""
        return f"{self.file}:{self.line}"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def file_locations(printed: str) -> list[SourceLocation]:
    """Every file position of a printed location, innermost first, as MLIR nests them."""
    return [SourceLocation(unescape_mlir_string(m["file"]), int(m["line"]), int(m["col"] or 0))
            for m in _FILE_POSITION.finditer(printed)]


def first_file_location(printed: str) -> SourceLocation | None:
    """The innermost file position (the op's own line), or None for a location without one
    (``loc(unknown)``, a bare name)."""
    m = _FILE_POSITION.search(printed)
    if m is None:
        return None
    return SourceLocation(unescape_mlir_string(m["file"]), int(m["line"]), int(m["col"] or 0))
