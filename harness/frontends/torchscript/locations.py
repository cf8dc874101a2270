"""Source locations of TorchScript nodes as MLIR locations.

A node's ``sourceRange()`` is the source of truth, in one of two forms:

- **scripted**: the token's range (``File "m.py", line 8`` plus the source around it); the JIT
  prints its column as the node's trailing ``# m.py:8:15`` comment. The callers are the
  ``prim::CallMethod``/``prim::CallFunction`` nodes, which carry their own ranges, so
  torch-mlir's inliner builds the "called from" chain.
- **traced**: the Python call stack the tracer recorded for the op, innermost frame first
  (``modeling_opt.py(412): forward`` ... ``torch/jit/_trace.py(...)``). The op's location is
  that whole chain, ``callsite(op at caller at ...)``, minus ``nn.Module.__call__``'s dispatch
  frames and the tracer's own frames and everything outside them. Trace call nodes record no
  range and get ``loc(unknown)``, which MLIR's inliner leaves out of the chain: the callee's ops
  already hold their callers.

Ops with a schema name their innermost frame ``loc("aten::add"("m.py":8:15))``, as upstream's
importer did; the name sits inside the chain so diagnostics still print "called from" notes.
Nodes without a range (constants the compiler pooled, traced ``prim::GetAttr``) borrow a
neighbour's location (``LocationFactory.plan``), so no op of a function body is
``loc(unknown)`` when any node of its graph has a location.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import cast
from dataclasses import dataclass, field
from functools import lru_cache

import torch
from torch_mlir import ir

from harness.compiler.locations import SourceLocation

_TRAILING_LOC = re.compile(r"#\s+(?P<file>.+?):(?P<line>\d+):(?P<col>\d+)\s*$")
_SCRIPT_RANGE = re.compile(r'\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
_TRACE_FRAME = re.compile(r"^(?P<file>.+)\((?P<line>\d+)\): (?P<function>.*)$")

# Frames of nn.Module.__call__'s dispatch (_wrapped_call_impl, _call_impl, _slow_forward): the
# call is already the caller's frame, so these only lengthen the chain.
_MODULE_DISPATCH_SUFFIX = "/torch/nn/modules/module.py"
# The tracer's own frames; they and every frame outside them (the script that called
# torch.jit.trace) are not part of the model.
_TRACER_DIR = "/torch/jit/"

# Node kinds that call a method or function. In a trace they record no range: their callees'
# ops hold the whole stack, so they must stay loc(unknown) rather than borrow a neighbour's.
CALL_KINDS = frozenset({"prim::CallMethod", "prim::CallFunction"})


def _scripted_frame(node: torch._C.Node, text: str) -> SourceLocation | None:
    head = str(node).split("\n", 1)[0]
    m = _TRAILING_LOC.search(head)
    if m:
        return SourceLocation(m.group("file"), int(m.group("line")), int(m.group("col")))
    m = _SCRIPT_RANGE.match(text)
    return SourceLocation(m.group("file"), int(m.group("line"))) if m else None


@lru_cache(maxsize=4096)
def traced_frames(text: str) -> tuple[SourceLocation, ...]:
    """The model's frames of a tracer-recorded stack, innermost first (cached: the ops of one
    source line share one stack text)."""
    frames: list[SourceLocation] = []
    for line in text.splitlines():
        m = _TRACE_FRAME.match(line.strip())
        if not m:
            continue
        file = m.group("file")
        if _TRACER_DIR in file.replace("\\", "/"):
            break
        if file.replace("\\", "/").endswith(_MODULE_DISPATCH_SUFFIX):
            continue
        frames.append(SourceLocation(file, int(m.group("line"))))
    return tuple(frames)


def node_frames(node: torch._C.Node) -> tuple[SourceLocation, ...]:
    """The node's source frames, innermost first; empty when it has no source range."""
    try:
        text = cast(str, node.sourceRange())  # the binding returns the text (the .pyi: a SourceRange)
    except RuntimeError:
        return ()
    if not text:
        return ()
    if text.lstrip().startswith("File "):
        frame = _scripted_frame(node, text)
        return (frame,) if frame else ()
    return traced_frames(text)


@dataclass(frozen=True)
class LocationPlan:
    """Where each node of one graph is, plus where its entry casts and its return go."""

    by_node: dict[torch._C.Node, ir.Location]
    entry: ir.Location
    exit: ir.Location
    # For call nodes kept unknown: the borrowed location, for the casts around the call.
    near: dict[torch._C.Node, ir.Location] = field(default_factory=dict)


class LocationFactory:
    """Builds and caches locations per distinct frame chain (and op name)."""

    def __init__(self, context: ir.Context):
        self.context = context
        self.unknown = ir.Location.unknown(context)
        self._files: dict[SourceLocation, ir.Location] = {}
        self._chains: dict[tuple, ir.Location] = {}

    def _file(self, frame: SourceLocation) -> ir.Location:
        loc = self._files.get(frame)
        if loc is None:
            loc = ir.Location.file(frame.file, frame.line, frame.col, self.context)
            self._files[frame] = loc
        return loc

    def chain(self, frames: tuple[SourceLocation, ...], name: str | None = None) -> ir.Location | None:
        """``callsite(name(innermost) at ... at outermost)``; None for no frames."""
        if not frames:
            return None
        key = (frames, name)
        loc = self._chains.get(key)
        if loc is None:
            loc = self._file(frames[0])
            if name:
                loc = ir.Location.name(name, childLoc=loc, context=self.context)
            callers = [self._file(f) for f in frames[1:]]
            if callers:
                caller = callers[-1]
                for c in reversed(callers[:-1]):
                    caller = ir.Location.callsite(c, [caller], context=self.context)
                loc = ir.Location.callsite(loc, [caller], context=self.context)
            self._chains[key] = loc
        return loc

    def for_node(self, node: torch._C.Node) -> ir.Location:
        loc = self.chain(node_frames(node), _op_name(node))
        return self.unknown if loc is None else loc

    def plan(self, graph: torch._C.Graph) -> LocationPlan:
        """Locations for every node of ``graph``, nested blocks included.

        A node the JIT recorded no source range for (GetAttr in traces, the constructs and
        pooled constants the compiler adds) takes the location of the next node in program
        order that has one, else of the previous one: such nodes mostly feed the op that
        follows them. Call nodes without a range stay unknown (see the module docstring).
        """
        order: list[torch._C.Node] = []

        def walk(nodes: Iterable[torch._C.Node]) -> None:
            for node in nodes:
                order.append(node)
                for block in node.blocks():
                    walk(block.nodes())

        walk(graph.nodes())
        frames = [node_frames(n) for n in order]
        names = [_op_name(n) for n in order]
        own = [self.chain(f, name) for f, name in zip(frames, names, strict=False)]
        # Borrowers take a neighbour's frames without its op name.
        borrowable = [loc if loc is None or name is None else self.chain(f)
                      for f, name, loc in zip(frames, names, own, strict=False)]
        filled: list[ir.Location | None] = list(own)
        following: ir.Location | None = None
        for i in range(len(filled) - 1, -1, -1):
            if filled[i] is None:
                filled[i] = following
            else:
                following = borrowable[i]
        preceding: ir.Location | None = None
        for i, loc in enumerate(own):
            if loc is not None:
                preceding = borrowable[i]
            elif filled[i] is None:
                filled[i] = preceding
        near: dict[torch._C.Node, ir.Location] = {}
        for i, node in enumerate(order):
            if own[i] is None and node.kind() in CALL_KINDS:
                if filled[i] is not None:
                    near[node] = filled[i]
                filled[i] = None
        known = [loc for loc in borrowable if loc is not None]
        return LocationPlan(
            by_node={n: self.unknown if loc is None else loc for n, loc in zip(order, filled, strict=False)},
            entry=known[0] if known else self.unknown,
            exit=known[-1] if known else self.unknown,
            near=near,
        )

    @staticmethod
    def describe(node: torch._C.Node) -> str:
        frames = node_frames(node)
        return str(frames[0]) if frames else ""


def _op_name(node: torch._C.Node) -> str | None:
    """The operator name upstream's importer put on a node's location (``aten::add``)."""
    kind = node.kind()
    return None if kind in _NO_NAME_PRIMS else kind


# Structural prim nodes have no operator schema; upstream named only schema-carrying nodes.
_NO_NAME_PRIMS = frozenset({
    "prim::Constant", "prim::GetAttr", "prim::SetAttr", "prim::CallMethod", "prim::CallFunction",
    "prim::If", "prim::Loop", "prim::ListConstruct", "prim::ListUnpack", "prim::TupleConstruct",
    "prim::TupleUnpack", "prim::DictConstruct", "prim::CreateObject", "prim::Enter", "prim::Exit",
    "prim::Store", "prim::Load", "prim::Uninitialized", "prim::RaiseException",
})
