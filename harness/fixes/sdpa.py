"""``sdpa-explicit-scale``: an explicit ``scale`` of ``aten.scaled_dot_product_attention`` folded
into the query, so the op runs with its default scale.

Why: torch-mlir 20261001 lowers the op to ``tm_tensor.attention {scale = s}``, and the code the
RefBackend makes of it computes with the default scale 1/sqrt(E) whatever s is
(lit_tests/upstream/sdpa-explicit-scale-miscompile.mlir: 1 op, off by 0.155). Stock OPT passes
scale=1.0 (it scales the query itself), so once it lowers its numbers are wrong. This fix answers
a miscompile, not a blocker: the driver applies it before the linalg stage to each op it
finds, and the numbers decide whether it stays.

Why the numbers stay: with scale=None the op uses 1/sqrt(E), so
``sdpa(q * (s * sqrt(E)), k, v, scale=None)`` is ``softmax(q @ k^T * s) @ v`` (a power of two
for OPT: 1.0 * sqrt(16) = 4, exact). Refused: a scale that is not a constant float, a query
whose last dim or float dtype the IR does not state. A site with scale None is left alone.
"""

from __future__ import annotations

import math

from torch_mlir import ir

from harness.diagnose.reduce.torch_types import tensor_info

from .base import Application, IRFix, RefusedSite, Site, location_text, walk

SDPA = "torch.aten.scaled_dot_product_attention"
_QUERY, _SCALE = 0, 6


class SdpaExplicitScale(IRFix):
    name = "sdpa-explicit-scale"
    miscompiles = (SDPA,)
    conditions = ("the scale is a constant float and the query states a float dtype and a static "
                  "last dim; a site with scale None is left alone")

    def rewrite(self, module: ir.Operation) -> Application:
        app = Application(self.name, self.level)
        with module.context:
            for op in walk(module):
                if op.operation.name != SDPA or len(op.operands) <= _SCALE:
                    continue
                scale_op = _defining(op.operands[_SCALE])
                if scale_op is not None and scale_op.operation.name == "torch.constant.none":
                    continue
                where = location_text(op)
                factor, reason = _factor(op, scale_op)
                if reason:
                    app.refused.append(RefusedSite(SDPA.removeprefix("torch."), where, reason))
                    continue
                _fold(op, factor)
                app.changed.append(Site(f"aten.scaled_dot_product_attention: scale folded into "
                                        f"the query (x{factor:g})", where))
        return app


def _defining(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return owner.operation if isinstance(owner, ir.OpView) else (
        owner if isinstance(owner, ir.Operation) else None)


def _factor(op: ir.Operation, scale_op: ir.Operation | None) -> tuple[float, str]:
    """s * sqrt(E), or why the site is refused."""
    if scale_op is None or scale_op.operation.name != "torch.constant.float":
        return 0.0, "the scale is not a torch.constant.float"
    scale = ir.FloatAttr(scale_op.attributes["value"]).value
    info = tensor_info(op.operands[_QUERY].type)
    if info is None or info.sizes is None or not info.sizes or info.sizes[-1] < 0:
        return 0.0, "the query's last dim is not static"
    if info.dtype is None or not isinstance(info.dtype.maybe_downcast(), (ir.F32Type, ir.F64Type,
                                                                         ir.F16Type, ir.BF16Type)):
        return 0.0, "the query's dtype is not a stated float"
    return scale * math.sqrt(info.sizes[-1]), ""


def _fold(op: ir.Operation, factor: float) -> None:
    query = op.operands[_QUERY]
    with ir.InsertionPoint(op), op.location:
        f64 = ir.F64Type.get()
        const = ir.Operation.create("torch.constant.float", results=[ir.Type.parse("!torch.float")],
                                    attributes={"value": ir.FloatAttr.get(f64, factor)})
        scaled = ir.Operation.create("torch.aten.mul.Scalar", results=[query.type],
                                     operands=[query, const.result])
        none = ir.Operation.create("torch.constant.none", results=[ir.Type.parse("!torch.none")])
    op.operands[_QUERY] = scaled.result
    op.operands[_SCALE] = none.result
