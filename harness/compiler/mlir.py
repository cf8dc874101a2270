"""The MLIR bindings as the compiler side uses them: one way to make a context, parse, walk and
print, shared by the IR writer and the tools (reduce, report).

The bindings load numpy (~0.3 s), so importers of this module pay that once; modules that only
sometimes need IR import it lazily.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from torch_mlir import ir
from torch_mlir.dialects import torch as torch_dialect

#: The first bytes of an MLIR bytecode file.
BYTECODE_MAGIC = b"ML\xefR"

# Resources longer than this many characters are left out of the printed file: the literal keeps
# its `dense_resource<NAME>` and the blob is dropped (torch-mlir-opt still parses and lowers it).
ELIDE_RESOURCES_OVER_CHARS = 64


@dataclass(frozen=True)
class PrintOptions:
    debug_info: bool = True  # print loc(...) attributes
    elide_weights: bool = False  # leave resources over ELIDE_RESOURCES_OVER_CHARS out

    def kwargs(self) -> dict:
        return {"enable_debug_info": self.debug_info,
                "large_resource_limit": ELIDE_RESOURCES_OVER_CHARS if self.elide_weights else None,
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


def print_op(op: ir.Operation, options: PrintOptions = PrintOptions(), file=None) -> str | None:
    """``op`` as text into ``file``, or returned as a string when no file is given."""
    if file is not None:
        op.print(file=file, **options.kwargs())
        return None
    buf = io.StringIO()
    op.print(file=buf, **options.kwargs())
    return buf.getvalue()


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
