"""``bitwise-and-or``: ``aten.__and__.Tensor`` -> ``aten.bitwise_and.Tensor`` (and ``__or__`` ->
``bitwise_or``) in the torch dialect.

Why: ``torch.jit.trace`` records Python's ``&`` on tensors as ``aten::__and__.Tensor``
(transformers' masking_utils.py:54, ``result & mask(...)``), and no conversion pass of
torch-mlir 20261001 lowers it; ``torch.export`` records the same expression as
``aten.bitwise_and.Tensor``, which ``convert-torch-to-linalg`` lowers (``arith.andi`` in a
``linalg.generic``). ``__or__.Tensor`` lowers already (canonicalize turns it into
``bitwise_or``); renaming it too costs nothing and leaves one spelling.

Why the numbers stay: ``Tensor.__and__`` is ATen's alias of ``bitwise_and`` (same broadcasting,
same type promotion, same result dtype), defined on bool and integer tensors only. So each site
is rewritten only when the IR states both operands' dtypes and they are bool or integer; a site
with a float operand or an unknown dtype (raw TorchScript's ``!torch.tensor``: apply the fix
after ``torchscript-to-torch``, where types are refined) is refused. Operands, attributes,
result type and location are kept; the op is the only thing that changes.
"""

from __future__ import annotations

from torch_mlir import ir

from harness.knowledge.fixes import FIXES
from harness.diagnose.reduce.torch_types import tensor_info

from .base import Application, IRFix, RefusedSite, Site, location_text, walk


class BitwiseAndOr(IRFix):
    name = "bitwise-and-or"
    ops = tuple(op for op, _ in FIXES[name].renames)  # the ops knowledge.fixes renames
    conditions = ("each site's operands state their dtypes and both are bool or integer "
                  "(a float or unknown dtype is refused: run torchscript-to-torch first)")

    def rewrite(self, module: ir.Operation) -> Application:
        renames = dict(self.known.renames)
        app = Application(self.name, self.level)
        with module.context:
            for op in walk(module):
                target = renames.get(op.operation.name)
                if target is None:
                    continue
                name, where = op.operation.name, location_text(op)
                reason = refusal(op)
                if reason:
                    app.refused.append(RefusedSite(op_name_short(name), where, reason))
                    continue
                replace_op(op, target)
                app.changed.append(Site(f"{op_name_short(name)} -> {op_name_short(target)}", where))
        return app


def refusal(op: ir.Operation) -> str:
    """Why ``op`` (``__and__``/``__or__`` of two tensors) must not become the bitwise op; ""
    when it may."""
    for i, operand in enumerate(op.operands):
        info = tensor_info(operand.type)
        if info is None:
            return f"operand {i} is {operand.type}, not a tensor"
        if info.dtype is None:
            return (f"operand {i} ({operand.type}) states no dtype, so bool or integer cannot be "
                    "checked: apply the fix to IR with refined types (after torchscript-to-torch)")
        if not isinstance(info.dtype.maybe_downcast(), ir.IntegerType):
            return (f"operand {i} is {info.dtype}: & and | equal bitwise_and/bitwise_or on bool "
                    "and integer tensors only")
    return ""


def replace_op(op: ir.Operation, name: str) -> ir.Operation:
    """``op`` replaced by an op named ``name`` with the same operands, attributes, result types
    and location; its uses follow."""
    with ir.InsertionPoint(op):
        new = ir.Operation.create(name, results=[r.type for r in op.results],
                                  operands=list(op.operands),
                                  attributes={a.name: a.attr for a in op.attributes},
                                  loc=op.location)
    for old, fresh in zip(op.results, new.results, strict=False):
        old.replace_all_uses_with(fresh)
    op.erase()
    return new


def op_name_short(name: str) -> str:
    """``torch.aten.__and__.Tensor`` -> ``aten.__and__.Tensor``."""
    return name.removeprefix("torch.")
