"""The MLIR bindings as the compiler side uses them: one way to make a context, parse, walk and
print, shared by the IR writer and the tools (reduce, report).

The bindings load numpy (~0.3 s), so importers of this module pay that once; modules that only
sometimes need IR import it lazily.
"""

from __future__ import annotations

import functools
import io
import math
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, overload

from torch_mlir import ir
from torch_mlir.dialects import torch as torch_dialect

from .irfile import write_atomically

#: The first bytes of an MLIR bytecode file.
BYTECODE_MAGIC = b"ML\xefR"

# Resources longer than this many characters are left out of the printed file: the literal keeps
# its `dense_resource<NAME>` and the blob is dropped (torch-mlir-opt still parses and lowers it).
ELIDE_RESOURCES_OVER_CHARS = 64

# Inline ``dense<...>`` literals of more elements than this print as ``dense_resource<__elided__>``
# with ``PrintOptions.elide_literals`` (a bug report's input.mlir).
ELIDE_LITERALS_OVER_ELEMENTS = 16

# What the printer writes at the end of a module whose blobs were all elided.
_EMPTY_RESOURCE_SECTION = "{-#\n\n#-}\n"


@dataclass(frozen=True)
class PrintOptions:
    debug_info: bool = True  # print loc(...) attributes
    elide_weights: bool = False  # leave resources over ELIDE_RESOURCES_OVER_CHARS out
    elide_literals: bool = False  # and inline literals over ELIDE_LITERALS_OVER_ELEMENTS

    def kwargs(self) -> dict:
        return {"enable_debug_info": self.debug_info,
                "large_resource_limit": ELIDE_RESOURCES_OVER_CHARS if self.elide_weights else None,
                "large_elements_limit": ELIDE_LITERALS_OVER_ELEMENTS if self.elide_literals else None,
                "assume_verified": True}


def new_context(*, threading: bool = True) -> ir.Context:
    """A context with the torch dialect registered. ``threading=False`` for contexts a forked
    child may use: it then finds no thread pool half-gone."""
    context = ir.Context()
    torch_dialect.register_dialect(context)
    if not threading:
        context.enable_multithreading(False)
    return context


def is_bytecode(data: bytes) -> bool:
    return data.startswith(BYTECODE_MAGIC)


def parse_ir(text: str | bytes) -> tuple[ir.Context, ir.Operation] | None:
    """The module (detached) in a context of its own, or None when the bindings cannot parse or
    verify it. A fresh context because parsing into one that holds a resource of the same name
    renames the new one (``weight`` -> ``weight_1``), and weights keep their names."""
    context = new_context(threading=False)
    try:
        with context:
            module = ir.Module.parse(text)
            return context, module.operation.clone()
    except ir.MLIRError:
        return None


@overload
def print_op(op: ir.Operation, options: PrintOptions = ..., file: None = None) -> str: ...
@overload
def print_op(op: ir.Operation, options: PrintOptions = ..., *, file: IO[str]) -> None: ...
@overload
def print_op(op: ir.Operation, options: PrintOptions, file: IO[str]) -> None: ...


def print_op(op: ir.Operation, options: PrintOptions = PrintOptions(),
             file: IO[str] | None = None) -> str | None:
    """``op`` as text into ``file``, or returned as a string when no file is given.

    With weights elided this costs what the graph costs, not what the weights do:
    MLIR's printer hexes every blob into a string before it compares the string with
    ``large_resource_limit``; only a limit of 0 skips that. So the module is printed with
    limit 0 (every blob elided), and the blobs that could fit the real limit, found by their
    types, get their section from MLIR itself, printed from a module that holds only them.
    The text is the same as one ``print`` with the limit (tests compare them byte for byte).
    """
    if options.elide_weights:
        return _print_elided(op, options, file)
    return _print(op, options.kwargs(), file)


def _print(op: ir.Operation, kwargs: dict, file: IO[str] | None) -> str | None:
    if file is not None:
        op.print(file=file, **kwargs)
        return None
    return _print_text(op, kwargs)


def _print_text(op: ir.Operation, kwargs: dict) -> str:
    buf = io.StringIO()
    op.print(file=buf, **kwargs)
    return buf.getvalue()


def _print_elided(op: ir.Operation, options: PrintOptions, file: IO[str] | None) -> str | None:
    kwargs = options.kwargs()
    limit = kwargs["large_resource_limit"]
    candidates = resources_that_may_print(op, limit)
    if not candidates:  # every blob is over the limit: limit 0 prints the same, unhexed
        return _print(op, {**kwargs, "large_resource_limit": 0}, file)
    text = _print_text(op, {**kwargs, "large_resource_limit": 0})
    section = _resource_section(op.context, candidates, limit)
    if section is not None:
        if not text.endswith(_EMPTY_RESOURCE_SECTION):
            return _print(op, kwargs, file)  # a form this splice does not know: MLIR's own way
        text = text[:-len(_EMPTY_RESOURCE_SECTION)] + section
    if file is None:
        return text
    file.write(text)
    return None


def _resource_section(context: ir.Context, resources: list[ir.Attribute], limit: int) -> str | None:
    """The ``{-# dialect_resources ... #-}`` section MLIR prints for ``resources`` at ``limit``
    (None when no blob fits), from a module whose only content is an array of them. Resources
    are context-wide, so it names and hexes them as the real module's print would."""
    with context:
        holder = ir.Module.create(loc=ir.Location.unknown())
        holder.operation.attributes["resources"] = ir.ArrayAttr.get(resources)
        text = _print_text(holder.operation, {"large_resource_limit": limit, "assume_verified": True})
    start = text.find("\n{-#\n")
    section = text[start + 1:] if start >= 0 else None
    return None if section in (None, _EMPTY_RESOURCE_SECTION) else section


@functools.cache
def _dense_resource_typeid() -> ir.TypeID:
    """TypeIDs are per process, not per context: one probe in a throwaway context serves all."""
    import numpy as np

    with ir.Context(), ir.Location.unknown():
        probe = ir.DenseResourceElementsAttr.get_from_buffer(
            np.zeros(0, np.int8), "probe", ir.RankedTensorType.get([0], ir.IntegerType.get_signless(8)))
        return ir.Attribute(probe).typeid


def resources_that_may_print(op: ir.Operation, limit: int) -> list[ir.Attribute]:
    """The ``dense_resource`` attributes of ``op`` and the ops it holds (also inside array and
    dictionary attributes), in the order the printer meets them, whose blob could print in
    ``limit`` characters. A blob prints as ``0x``, 8 hex digits and 2 per byte, so one of more
    bytes than ``limit`` never fits; the bytes are read off the type, never off the blob."""
    resource = _dense_resource_typeid()
    array, dictionary = ir.ArrayAttr.static_typeid, ir.DictAttr.static_typeid
    found: list[ir.Attribute] = []

    def visit(attr: ir.Attribute) -> None:
        typeid = attr.typeid
        if typeid == resource:
            if _min_bytes(attr.type) <= limit:
                found.append(attr)
        elif typeid == array:
            for element in ir.ArrayAttr(attr):
                visit(element)
        elif typeid == dictionary:
            entries = ir.DictAttr(attr)
            for i in range(len(entries)):
                visit(entries[i].attr)

    def visit_op(child: ir.Operation) -> ir.WalkResult:
        attributes = child.attributes
        for i in range(len(attributes)):
            visit(attributes[i].attr)
        return ir.WalkResult.ADVANCE

    op.walk(visit_op, ir.WalkOrder.PRE_ORDER)
    return found


def _min_bytes(type_: ir.Type) -> int:
    """The fewest bytes a blob of this shaped type can hold (0 when the type does not say)."""
    shaped = ir.ShapedType(type_)
    if not shaped.has_static_shape:
        return 0
    element = shaped.element_type.maybe_downcast()
    lanes = 1
    if isinstance(element, ir.ComplexType):
        element, lanes = element.element_type.maybe_downcast(), 2
    width = 64 if isinstance(element, ir.IndexType) else getattr(element, "width", None)
    if not isinstance(width, int):
        return 0
    return math.prod(shaped.shape) * width * lanes // 8


def children(op: ir.Operation) -> Iterator[ir.Operation]:
    """The ops directly nested in ``op``'s regions."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                yield child.operation


def count_ops(module: ir.Operation) -> int:
    """Every op in the module but the module itself."""
    stack, count = list(children(module)), 0
    while stack:
        op = stack.pop()
        count += 1
        stack.extend(children(op))
    return count


def read_module(path: str | os.PathLike, *, opt: str | None = None) -> tuple[ir.Context, ir.Operation] | None:
    """An IR file's module, also when it holds ops of dialects the bindings cannot register
    (``tm_tensor`` is not exposed to Python in the wheel): then torch-mlir-opt reprints the file
    in the generic form, which a context that allows unregistered dialects parses. None when
    neither parses."""
    data = Path(path).read_bytes()
    parsed = parse_ir(data)
    if parsed is not None:
        return parsed
    from .runner import RunOptions, run_pipeline

    with tempfile.TemporaryDirectory(prefix="harness-generic-") as tmp:
        generic = Path(tmp) / "generic.mlir"
        record = run_pipeline(path, "builtin.module()", opt=opt, options=RunOptions(
            output_path=str(generic), extra_args=("--mlir-print-op-generic", "--mlir-print-debuginfo")))
        if not record.ok:
            return None
        context = new_context(threading=False)
        context.allow_unregistered_dialects = True
        try:
            with context:
                return context, ir.Module.parse(generic.read_text()).operation.clone()
        except ir.MLIRError:
            return None


@dataclass(frozen=True)
class WriteOptions:
    keep_weights: bool = False
    debug_info: bool = True
    bytecode: bool = False


def write_module(module: ir.Module | ir.Operation, path: str | os.PathLike,
                 options: WriteOptions = WriteOptions()) -> Path:
    """The module as text (weights elided unless kept) or bytecode, written atomically."""
    op = module.operation if isinstance(module, ir.Module) else module
    printing = PrintOptions(debug_info=options.debug_info, elide_weights=not options.keep_weights)

    def write(f: IO) -> None:
        if options.bytecode:
            op.write_bytecode(f)
        else:
            print_op(op, printing, file=f)

    return write_atomically(path, write, binary=options.bytecode)
