"""Source locations of TorchScript nodes as MLIR locations.

The JIT prints a node's source range as a trailing ``# file:line:col`` comment: for a traced
graph that is the Python line that recorded the op (e.g. ``modeling_opt.py:<line>:0``), for a
scripted one the exact token. The Python binding exposes no structured accessor, so the
comment on the node's first printed line is the source of truth.
"""

from __future__ import annotations

import re

import torch
from torch_mlir import ir

_TRAILING_LOC = re.compile(r"#\s+(?P<file>.+?):(?P<line>\d+):(?P<col>\d+)\s*$")
_SCRIPT_RANGE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def node_file_line_col(node: torch._C.Node) -> tuple[str, int, int] | None:
    head = str(node).split("\n", 1)[0]
    m = _TRAILING_LOC.search(head)
    if m:
        return m.group("file"), int(m.group("line")), int(m.group("col"))
    try:
        text = node.sourceRange()
    except RuntimeError:
        return None
    m = _SCRIPT_RANGE.search(text or "")
    if m:
        return m.group("file"), int(m.group("line")), 0
    return None


class LocationFactory:
    """Caches ``loc("file":line:col)`` per distinct position; unknown when there is none."""

    def __init__(self, context: ir.Context):
        self.context = context
        self._cache: dict[tuple[str, int, int], ir.Location] = {}
        self.unknown = ir.Location.unknown(context)

    def for_node(self, node: torch._C.Node) -> ir.Location:
        flc = node_file_line_col(node)
        if flc is None:
            return self.unknown
        loc = self._cache.get(flc)
        if loc is None:
            loc = ir.Location.file(flc[0], flc[1], flc[2], self.context)
            self._cache[flc] = loc
        return loc

    @staticmethod
    def describe(node: torch._C.Node) -> str:
        flc = node_file_line_col(node)
        return f"{flc[0]}:{flc[1]}:{flc[2]}" if flc else ""
