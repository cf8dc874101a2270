"""``aten::as_strided`` reads as gathers from their base, decided before import.

as_strided addresses storage, which value-semantic torch IR does not have, so torch-mlir's
backend contract marks the op illegal and lowers none of it: each frontend must take it out
before import (the wheel's FX importer does so on FakeTensor metadata). A TorchScript graph has
no such metadata, but it does not need it when the tensor as_strided reads comes from a function
argument of static shape through element-moving ops only (views, ``contiguous``, ``clone``):
the elements picked then depend on shapes alone. Running that chain and the as_strided in eager
PyTorch on a probe whose every element holds its own index in the argument gives the index of
each element read, and the op becomes ``aten.index.Tensor(argument, coordinates)`` with the
coordinates as constants.

Whatever the probe cannot decide stays as_strided, so the pipeline reports it as before: a
dynamic or unannotated shape, a base that is not an argument, an op outside the chain's set, a
write to any alias of the base (the gather would not see it), an as_strided eager refuses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from collections.abc import Iterable, Sequence

import torch

AS_STRIDED = "aten::as_strided"
# Element-moving ops whose schema declares no alias (a copy, or a view torch does not track):
# the elements still come from input 0.
_COPIES = frozenset({"aten::contiguous", "aten::clone", "aten::_unsafe_view"})
# Ops evaluated for a value the chain needs that is not one of its elements (sizes, a shape-only
# tensor such as expand_as's ``other``): their results never become gathered elements.
_SCALAR_OPS = frozenset({
    "aten::size", "aten::dim", "aten::numel", "aten::len", "aten::__getitem__",
    "aten::add", "aten::sub", "aten::mul", "aten::floordiv", "aten::neg",
    "prim::dtype", "prim::device", "prim::layout",
    "aten::empty", "aten::zeros", "aten::ones", "aten::empty_like", "aten::zeros_like",
    "aten::ones_like",
})


@dataclass(frozen=True)
class Gather:
    """An as_strided node's replacement: ``aten.index.Tensor(base, coords)``."""

    base: torch._C.Value
    coords: tuple[torch.Tensor, ...]  # int64, one per dimension of base, each of the result's shape


class _Undecided(Exception):
    """The probe cannot decide this as_strided: it is left as it is."""


@cache
def _schema(text: str) -> torch._C.FunctionSchema:
    return torch._C.parse_schema(text)


def _node_schema(node: torch._C.Node) -> torch._C.FunctionSchema | None:
    text = node.schema()
    return None if text == "(no schema)" else _schema(text)


def _alias_source(node: torch._C.Node) -> torch._C.Value | None:
    """The input a view's result shares storage with (from the schema's ``Tensor(a)``
    annotations), input 0 of a copy, None for any other op."""
    if node.kind() in _COPIES:
        return node.inputsAt(0)
    schema = _node_schema(node)
    if schema is None or len(schema.returns) != 1:
        return None
    out = schema.returns[0].alias_info
    if out is None or out.is_write:
        return None
    for arg, value in zip(schema.arguments, node.inputs(), strict=False):
        alias = arg.alias_info
        if alias is not None and not alias.is_write and alias.before_set == out.before_set:
            return value
    return None


def _written(graph: torch._C.Graph) -> set[int]:
    """Values some op of the graph (or of its nested blocks) writes in place."""
    written: set[int] = set()

    def visit(block_nodes: Iterable[torch._C.Node]) -> None:
        for node in block_nodes:
            schema = _node_schema(node)
            if schema is not None:
                for arg, value in zip(schema.arguments, node.inputs(), strict=False):
                    if arg.alias_info is not None and arg.alias_info.is_write:
                        written.add(value.unique())
            for block in node.blocks():
                visit(block.nodes())

    visit(graph.nodes())
    return written


def _aliases(base: torch._C.Value) -> set[int]:
    """``base`` and every value that views or copies it, transitively."""
    seen, todo = {base.unique()}, [base]
    while todo:
        value = todo.pop()
        for use in value.uses():
            user = use.user
            if user.outputsSize() != 1:  # copies count: the chain may read one
                continue
            source = _alias_source(user)
            if source is not None and source.unique() == value.unique() \
                    and user.output().unique() not in seen:
                seen.add(user.output().unique())
                todo.append(user.output())
    return seen


def _call(node: torch._C.Node, args: list) -> object:
    schema = _node_schema(node)
    if schema is None:
        raise _Undecided(node.kind())
    namespace, name = schema.name.split("::", 1)
    packet = getattr(getattr(torch.ops, namespace), name)
    overload = getattr(packet, schema.overload_name or "default")
    positional, keywords = [], {}
    for arg, value in zip(schema.arguments, args, strict=False):
        if arg.kwarg_only:
            keywords[arg.name] = value
        else:
            positional.append(value)
    try:
        return overload(*positional, **keywords)
    except (RuntimeError, TypeError, ValueError, IndexError) as e:
        raise _Undecided(str(e)) from None


class _Probe:
    """Evaluates, in eager PyTorch, what one as_strided reads."""

    def __init__(self, shapes: dict[int, tuple[int, ...]], base: torch._C.Value | None = None):
        self.shapes = shapes
        self.values: dict[int, object] = {}
        if base is not None:
            shape = shapes[base.unique()]
            self.values[base.unique()] = torch.arange(math.prod(shape), dtype=torch.int64).reshape(shape)

    def elements(self, value: torch._C.Value) -> object:
        """``value`` with each element replaced by its index in the base (a tensor, unless the
        view op returns something else)."""
        known = self.values.get(value.unique())
        if known is not None:
            return known
        node = value.node()
        source = _alias_source(node)
        if source is None or node.outputsSize() != 1:
            raise _Undecided(node.kind())
        args = [self.elements(v) if v.unique() == source.unique() else self.operand(v)
                for v in node.inputs()]
        result = _call(node, args)
        self.values[value.unique()] = result
        return result

    def operand(self, value: torch._C.Value) -> object:
        """A value the chain needs that is not one of its elements."""
        known = self.values.get(value.unique())
        if known is not None:
            return known
        node = value.node()
        kind = node.kind()
        result: object
        if kind == "prim::Constant":
            result = node.t("value") if node.hasAttribute("value") and node.kindOf("value") == "t" \
                else value.toIValue()
        elif kind in ("prim::ListConstruct", "prim::TupleConstruct"):
            items = [self.operand(v) for v in node.inputs()]
            result = items if kind == "prim::ListConstruct" else tuple(items)
        elif kind == "prim::Param":
            shape = self.shapes.get(value.unique())
            if shape is None:
                raise _Undecided("an argument of unknown shape")
            result = torch.zeros(shape)  # only its shape is read
        elif kind in _SCALAR_OPS and node.outputsSize() == 1:
            result = _call(node, [self.operand(v) for v in node.inputs()])
        elif value.type().isSubtypeOf(torch._C.TensorType.get()):
            result = self.elements(value)  # a view of the base read for its shape
        else:
            raise _Undecided(kind)
        self.values[value.unique()] = result
        return result


def _base_of(value: torch._C.Value) -> torch._C.Value:
    while value.node().kind() != "prim::Param":
        source = _alias_source(value.node())
        if source is None:
            raise _Undecided(value.node().kind())
        value = source
    return value


def plan_gathers(graph: torch._C.Graph,
                 arg_shapes: Sequence[tuple[int, ...] | None]) -> dict[torch._C.Node, Gather]:
    """The as_strided nodes of ``graph``'s top-level block that read a static-shaped argument
    through element-moving ops, each with its gather. ``arg_shapes`` holds each argument's
    annotated shape (None: unknown or not a tensor; a dimension of -1 is dynamic)."""
    nodes = [n for n in graph.nodes() if n.kind() == AS_STRIDED]
    if not nodes:
        return {}
    declared = {v.unique(): tuple(s)
                for v, s in zip(graph.inputs(), arg_shapes, strict=False) if s is not None}
    written = _written(graph)
    plan: dict[torch._C.Node, Gather] = {}
    for node in nodes:
        try:
            base = _base_of(node.inputsAt(0))
            shape = declared.get(base.unique())
            if shape is None or written & _aliases(base):
                continue
            if shape and shape[0] < 0 and node.inputsAt(0).unique() == base.unique():
                shape = _rows_read(node, shape, declared)
            # A gather needs a coordinate per dimension and something to index.
            if not shape or any(d <= 0 for d in shape):
                continue
            picked = _Probe({**declared, base.unique(): shape}, base).elements(node.output())
        except _Undecided:
            continue
        if isinstance(picked, torch.Tensor) and picked.dtype == torch.int64:
            plan[node] = Gather(base, _unravel(picked, shape))
    return plan


def _rows_read(node: torch._C.Node, shape: tuple[int, ...],
               declared: dict[int, tuple[int, ...]]) -> tuple[int, ...]:
    """An argument of dynamic leading size read directly: the rows the as_strided reaches are
    known from its sizes, strides and offset alone (eager refuses an input with fewer)."""
    rest = shape[1:]
    if any(d <= 0 for d in rest):
        raise _Undecided("dynamic inner dimensions")
    probe = _Probe(declared)
    _, size, stride, *tail = [probe.operand(v) if i else None
                              for i, v in enumerate(node.inputs())]
    offset = tail[0] if tail and tail[0] is not None else 0
    if not (isinstance(size, list | tuple) and isinstance(stride, list | tuple) and isinstance(offset, int)) \
            or not all(isinstance(x, int) for x in (*size, *stride)) or 0 in size:
        raise _Undecided("sizes or strides not constant")
    last = offset + sum((n - 1) * step for n, step in zip(size, stride, strict=False))
    return (last // math.prod(rest) + 1, *rest)


def _unravel(flat: torch.Tensor, shape: tuple[int, ...]) -> tuple[torch.Tensor, ...]:
    """Row-major indices into ``shape`` as one coordinate tensor per dimension."""
    coords = []
    rest = flat
    for size in reversed(shape):
        coords.append(torch.remainder(rest, size).contiguous())
        rest = torch.div(rest, size, rounding_mode="floor")
    return tuple(reversed(coords))
