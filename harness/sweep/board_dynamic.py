"""The board's dynamic column group (``sweep --dynamic``): per frontend, the input axes still
``?`` in the linalg signature, those that became static, and the line that froze a size."""

from __future__ import annotations

import html

from .status import Cell, Row


def has_dynamic(rows: list[Row]) -> bool:
    return any(c.dynamic is not None for r in rows for c in r.cells.values())


def head(frontends: list[str]) -> str:
    """The group's header cells (one per frontend)."""
    return "".join(f'<th class="dynamic">dynamic: {html.escape(str(f))}</th>' for f in frontends)


def cell(found: Cell | None) -> str:
    """``?`` axes in linalg (verified at two shapes or not is the port's own cell), the static
    ones, and the frozen line; empty for a port without --dynamic."""
    dims = found.dynamic if found is not None else None
    if dims is None:
        return '<td class="dynamic"></td>'
    parts = []
    if dims.linalg:
        parts.append("? " + ", ".join(dims.linalg))
    if dims.static:
        parts.append("static " + ", ".join(dims.static))
    if dims.frozen:
        parts.append("frozen at " + ", ".join(f.rsplit("/", 1)[-1] for f in dims.frozen[:2]))
    if not parts:
        parts.append("not reached")
    return '<td class="dynamic small">' + "<br>".join(html.escape(p) for p in parts) + "</td>"
