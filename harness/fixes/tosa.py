"""The TOSA contract as a backend that checks the TOSA profiles takes it: torch-mlir's TOSA holds
f64 and i64 -> float casts, valid TOSA dialect and run by the RefBackend (through tosa-to-linalg),
which IREE's TOSA input refuses as outside every profile (``'tosa.cast' op is not
profile-aligned: element type 'f64' is not legal``; ``... did not align with any profile or
extension, got (i64,f32)``). Two upstream bugs, two fixes (and two bundles,
``reports/upstream/variance-f32-in-f64-outside-tosa-profiles/`` and
``reports/upstream/tosa-cast-i64-to-f32-outside-profiles/``):

- ``tosa-variance-f32``: ``calculateVariance`` (DecomposeComplexOps) upcasts a float32 variance
  to f64, met through the FX path in every LayerNorm. The f64 values become f32: the casts into
  and out of f64 turn into f32 -> f32 and are dropped, f64 constants and float attributes are
  remade in f32. Refused when a public function's argument or result is f64 (then the model
  itself computes in f64, not the decomposition).
- ``tosa-cast-via-i32``: TorchToTosa's ``tosaCastTensorToType`` lowers ``.float()`` of an int64
  tensor to one ``tosa.cast`` i64 -> float; it becomes i64 -> i32 -> float, each in a profile
  (and ``.long()`` of a float, float -> i64, becomes float -> i32 -> i64: T5's buckets). A
  constant operand with a value outside int32 is refused (it would wrap).

Each is checked by the port's numbers against eager on both input sets afterwards, as every fix.
"""

from __future__ import annotations

from torch_mlir import ir

from harness.compiler.targets import Target

from .base import Application, RefusedSite, Site, TargetFix, location_text, walk

#: IREE's words for a cast no profile has, from int64 or to it (``got (i64,f32)``, ``got (f32,i64)``).
_PROFILE = tuple(f"did not align with any profile or extension, got ({pair})" for pair in (
    "i64,f32", "i64,f16", "i64,bf16", "f32,i64", "f16,i64", "bf16,i64"))


def _element(type_: ir.Type) -> ir.Type | None:
    """A ranked tensor type's element type (None: not a ranked tensor)."""
    type_ = type_.maybe_downcast()
    return type_.element_type.maybe_downcast() if isinstance(type_, ir.RankedTensorType) else None


def _with_element(type_: ir.Type, element: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get(type_.maybe_downcast().shape, element)


def _is_f64(type_: ir.Type) -> bool:
    element = _element(type_)
    return isinstance(element, ir.F64Type)


def _is_float(type_: ir.Type) -> bool:
    element = _element(type_)
    return isinstance(element, (ir.F32Type, ir.F16Type, ir.BF16Type, ir.F64Type))


def _public_f64(module: ir.Operation) -> str:
    """The first public function whose signature has an f64 tensor ("" when none does)."""
    for op in walk(module):
        if op.name != "func.func":
            continue
        signature = op.attributes["function_type"].value.maybe_downcast()
        if any(_is_f64(t) for t in [*signature.inputs, *signature.results]):
            return str(op.attributes["sym_name"].value)
    return ""


class TosaVarianceF32(TargetFix):
    name = "tosa-variance-f32"
    target = Target.TOSA.value
    messages = ("op is not profile-aligned: element type 'f64' is not legal",)
    conditions = ("no public function takes or returns f64 (a model that computes in f64 itself "
                  "is refused, whole)")

    def rewrite(self, module: ir.Operation) -> Application:
        app = Application(self.name, self.level)
        with module.context, ir.Location.unknown():
            public = _public_f64(module)
            if public:
                app.refused.append(RefusedSite("f64 -> f32", public, "the function's own "
                                               "signature has f64: the model computes in f64"))
                return app
            f32 = ir.F32Type.get()
            for op in walk(module):
                changed = False
                for result in op.results:
                    if _is_f64(result.type):
                        result.set_type(_with_element(result.type, f32))
                        changed = True
                for name in [str(n) for n in op.attributes]:
                    remade = _f32_attribute(op.attributes[name], f32)
                    if remade is not None:
                        op.attributes[name] = remade
                        changed = True
                if changed:
                    app.changed.append(Site(f"{op.name} f64 -> f32", location_text(op)))
            _drop_identity_casts(module)
        return app


def _f32_attribute(attr: ir.Attribute, f32: ir.Type) -> ir.Attribute | None:
    """``attr`` remade in f32 when it is an f64 float or dense f64 elements (None otherwise)."""
    attr = attr.maybe_downcast()
    if isinstance(attr, ir.FloatAttr) and isinstance(attr.type.maybe_downcast(), ir.F64Type):
        return ir.FloatAttr.get(f32, attr.value)
    if isinstance(attr, ir.DenseFPElementsAttr) and _is_f64(attr.type):
        dense = attr
        target = _with_element(dense.type, f32)
        if dense.is_splat:
            value = ir.FloatAttr.get(f32, dense.get_splat_value().value)
            return ir.DenseElementsAttr.get_splat(target, value)
        import numpy as np

        return ir.DenseElementsAttr.get(np.asarray(dense, dtype=np.float64).astype(np.float32), type=target)
    return None


def _drop_identity_casts(module: ir.Operation) -> None:
    """Each ``tosa.cast`` whose operand already has its result type, replaced by its operand."""
    for op in walk(module):
        if op.name == "tosa.cast" and op.operands[0].type == op.results[0].type:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()


class TosaCastViaI32(TargetFix):
    name = "tosa-cast-via-i32"
    target = Target.TOSA.value
    messages = _PROFILE
    conditions = ("the cast's operand, when a constant, holds only int32 values (one past int32 "
                  "would wrap)")

    def rewrite(self, module: ir.Operation) -> Application:
        app = Application(self.name, self.level)
        with module.context, ir.Location.unknown():
            i32 = ir.IntegerType.get_signless(32)
            for op in walk(module):
                if op.name != "tosa.cast":
                    continue
                source, result = op.operands[0], op.results[0]
                where = location_text(op)
                if _is_i64(source.type) and _is_float(result.type):  # .float() of an int64 tensor
                    reason = _outside_int32(source)
                    if reason:
                        app.refused.append(RefusedSite("tosa.cast i64 -> float", where, reason))
                        continue
                    _narrow_operand(op, i32)
                    app.changed.append(Site(f"tosa.cast i64 -> {_element(result.type)} via i32", where))
                elif _is_float(source.type) and _is_i64(result.type):  # .long() of a float tensor
                    _widen_result(op, i32)
                    app.changed.append(Site(f"tosa.cast {_element(source.type)} -> i64 via i32", where))
        return app


def _narrow_operand(op: ir.Operation, i32: ir.Type) -> None:
    """``op``'s first operand (i64) given to it through a ``tosa.cast`` to i32."""
    source = op.operands[0]
    with ir.InsertionPoint(op), op.location:
        narrow = ir.Operation.create("tosa.cast", results=[_with_element(source.type, i32)],
                                     operands=[source])
    op.operands[0] = narrow.results[0]


def _widen_result(op: ir.Operation, i32: ir.Type) -> None:
    """``op``'s result (i64) made i32, and its users given it back as i64 through a ``tosa.cast``."""
    result = op.results[0]
    with ir.InsertionPoint.after(op), op.location:
        widen = ir.Operation.create("tosa.cast", results=[result.type], operands=[result])
    result.replace_all_uses_except(widen.results[0], widen)
    result.set_type(_with_element(result.type, i32))


def _is_i64(type_: ir.Type) -> bool:
    element = _element(type_)
    return isinstance(element, ir.IntegerType) and element.width == 64


def _outside_int32(value: ir.Value) -> str:
    """Why a constant ``value`` must not be narrowed to int32 ("" when it may, or is not one)."""
    owner = getattr(value.owner, "operation", None)  # an op's (a block argument's is a block)
    if owner is None or owner.name != "tosa.const":
        return ""
    dense = owner.attributes["values"].maybe_downcast()
    if not isinstance(dense, ir.DenseIntElementsAttr):
        return ""
    import numpy as np

    values = (np.array([dense.get_splat_value().value]) if dense.is_splat
              else np.asarray(dense, dtype=np.int64))
    outside = values[(values < -2**31) | (values >= 2**31)]
    if outside.size:
        return f"the constant holds {int(outside[0])}, outside int32: it would wrap"
    return ""


class TosaGatherViaI32(TargetFix):
    """``tosa.gather`` of int64 values (``torch.gather`` of an int64 buffer: BridgeTower's
    buffered ``token_type_ids``), which no TOSA profile has: the values narrowed to int32 for
    the gather and its result widened back, each cast in a profile (as ``tosa-cast-via-i32``'s)."""

    name = "tosa-gather-via-i32"
    target = Target.TOSA.value
    messages = ("did not align with any profile or extension, got (i64,i32,i64)",)
    conditions = ("the gathered values, when a constant, hold only int32 values (one past int32 "
                  "would wrap)")

    def rewrite(self, module: ir.Operation) -> Application:
        app = Application(self.name, self.level)
        with module.context, ir.Location.unknown():
            i32 = ir.IntegerType.get_signless(32)
            for op in walk(module):
                if op.name != "tosa.gather" or not _is_i64(op.operands[0].type):
                    continue
                values = op.operands[0]
                where = location_text(op)
                reason = _outside_int32(values)
                if reason:
                    app.refused.append(RefusedSite("tosa.gather of i64 values", where, reason))
                    continue
                _narrow_operand(op, i32)
                _widen_result(op, i32)
                app.changed.append(Site("tosa.gather i64 values via i32", where))
        return app
