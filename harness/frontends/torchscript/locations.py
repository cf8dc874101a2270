"""Source locations of TorchScript nodes as MLIR locations.

The JIT prints a node's source range as a trailing ``# file:line:col`` comment: for a traced
graph that is the Python line that recorded the op (e.g. ``modeling_opt.py:<line>:0``), for a
scripted one the exact token. The Python binding exposes no structured accessor, so the
comment on the node's first printed line is the source of truth. Nodes without one borrow a
neighbour's (``LocationFactory.plan``), so no op of a function body is ``loc(unknown)`` when
any node of its graph has a location.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


@dataclass(frozen=True)
class LocationPlan:
    """Where each node of one graph is, plus where its entry casts and its return go."""

    by_node: dict[torch._C.Node, ir.Location]
    entry: ir.Location
    exit: ir.Location


class LocationFactory:
    """Caches ``loc("file":line:col)`` per distinct position; unknown when there is none."""

    def __init__(self, context: ir.Context):
        self.context = context
        self._cache: dict[tuple[str, int, int], ir.Location] = {}
        self.unknown = ir.Location.unknown(context)

    def for_node(self, node: torch._C.Node) -> ir.Location:
        loc = self._file_loc(node_file_line_col(node))
        return self.unknown if loc is None else loc

    def _file_loc(self, flc: tuple[str, int, int] | None) -> ir.Location | None:
        if flc is None:
            return None
        loc = self._cache.get(flc)
        if loc is None:
            loc = ir.Location.file(flc[0], flc[1], flc[2], self.context)
            self._cache[flc] = loc
        return loc

    def plan(self, graph: torch._C.Graph) -> "LocationPlan":
        """Locations for every node of ``graph``, nested blocks included.

        A node the JIT recorded no source range for (GetAttr/CallMethod in traces, the
        constructs and pooled constants the compiler adds) takes the location of the next node
        in program order that has one, else of the previous one: such nodes mostly feed the op
        that follows them. Every op of a function then points at a Python line.
        """
        order: list[torch._C.Node] = []

        def walk(nodes) -> None:
            for node in nodes:
                order.append(node)
                for block in node.blocks():
                    walk(block.nodes())

        walk(graph.nodes())
        own = [self._file_loc(node_file_line_col(n)) for n in order]
        filled: list[ir.Location | None] = list(own)
        following: ir.Location | None = None
        for i in range(len(filled) - 1, -1, -1):
            if filled[i] is None:
                filled[i] = following
            following = filled[i]
        preceding: ir.Location | None = None
        for i, loc in enumerate(own):
            if loc is not None:
                preceding = loc
            elif filled[i] is None:
                filled[i] = preceding
        known = [loc for loc in own if loc is not None]
        return LocationPlan(
            by_node={n: self.unknown if loc is None else loc for n, loc in zip(order, filled)},
            entry=known[0] if known else self.unknown,
            exit=known[-1] if known else self.unknown,
        )

    @staticmethod
    def describe(node: torch._C.Node) -> str:
        flc = node_file_line_col(node)
        return f"{flc[0]}:{flc[1]}:{flc[2]}" if flc else ""
