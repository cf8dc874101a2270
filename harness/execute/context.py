"""An MLIR context of the wheel's bindings that parses every dialect the RefBackend meets.

The wheel registers all upstream dialects and torch-mlir's ``torch``/``torch_c`` for Python, but
not ``tm_tensor`` (the dialect of ``aten.cumsum``, ``sort``, ``scatter``... at the linalg
contract): ``ir.Module.parse`` fails with "Dialect `tm_tensor' not found". Its passes are
registered, though, and a pass loads the dialects it declares as dependent when it runs; running
``tm-tensor-bufferize`` once on an empty module is the one way the bindings offer to load it.
"""

from __future__ import annotations

from torch_mlir import ir, passmanager

from harness.compiler.mlir import new_context

_LOAD_TM_TENSOR = "builtin.module(func.func(tm-tensor-bufferize))"


def bindings_context(*, threading: bool = True) -> ir.Context:
    """A fresh context with torch registered and tm_tensor loaded."""
    context = new_context(threading=threading)
    with context:
        passmanager.PassManager.parse(_LOAD_TM_TENSOR).run(ir.Module.parse("module {}").operation)
    assert context.is_dialect_loaded("tm_tensor"), "running tm-tensor-bufferize did not load tm_tensor"
    return context
