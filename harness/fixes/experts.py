"""``moe-batched-experts``: a mixture-of-experts model's experts run by transformers'
``batched_mm`` implementation instead of its default, ``grouped_mm``, before trace or export.

Why: transformers 5.24 runs MoE experts through ``grouped_mm_experts_forward``, which sorts the
tokens by expert, counts them with ``aten.histc`` and multiplies each expert's rows with
``torch._grouped_mm``, or on CPU in float32 with its own custom op
``transformers::grouped_mm_fallback`` (a Python loop over experts, opaque to tracing). None of
them reaches torch-mlir or ONNX: torch.onnx.export has no translation of
``transformers.grouped_mm_fallback.default`` (hunyuan_v1_moe, kolibri1, dots3_note_text stop at
the export), torch-mlir has no lowering of ``aten.histc`` or ``aten._grouped_mm`` (the
TorchScript import keeps them as ``torch.operator``). ``batched_mm`` (the same registry's, what
transformers' own ONNX exporter picks for its CUDA fusions) gathers each token's selected
experts' weights and runs one batched matmul: static shapes, ops every frontend converts.

Why the numbers stay: both compute, for each token and each of its top-k experts, the expert's
projection of that token, weighted by the router's score, and sum them: the same products,
added in another order (float32 rounding). The change goes through the model's public
``set_experts_implementation`` and is undone with the implementation it had; a model without
it (no ``_can_set_experts_implementation``, or it says no) is refused. The port checks the
fixed module against the original in eager, then the lowered module against eager.
"""

from __future__ import annotations

import torch

from .base import Application, ModuleEvidence, ModuleFix, RefusedSite, Site

#: The registry's name of the implementation the fix picks (transformers.integrations.moe).
BATCHED = "batched_mm"


class MoeBatchedExperts(ModuleFix):
    name = "moe-batched-experts"
    ops = ('torch.operator "aten.histc"', 'torch.operator "aten._grouped_mm"',
           'torch.operator "transformers.grouped_mm_fallback"')
    messages = ("transformers.grouped_mm_fallback", "aten._grouped_mm", "aten.histc")
    conditions = ("the model says it can set its experts implementation "
                  "(_can_set_experts_implementation); undone after trace or export")

    def apply(self, module: torch.nn.Module, evidence: ModuleEvidence = ModuleEvidence()) -> Application:
        app = Application(self.name, self.level, module=module)
        models = [(prefix, sub) for prefix, sub in module.named_modules()
                  if callable(getattr(sub, "set_experts_implementation", None))]
        # the outermost model that can: it sets its own and its submodels' experts
        chosen = next(((p, m) for p, m in models if _can_set(m)), None)
        if chosen is None:
            where = models[0][0] if models else "(root)"
            app.refused.append(RefusedSite(
                "experts implementation", where,
                "the model cannot set its experts implementation (no MoE experts, or its "
                "_can_set_experts_implementation says no)"))
            return app
        prefix, model = chosen
        # the model's and each submodel's, as set_experts_implementation takes them back
        before = model.get_experts_implementation() if hasattr(model, "get_experts_implementation") else {}
        if before and all(v == BATCHED for v in before.values()):
            return app  # already batched: nothing to change
        model.set_experts_implementation(BATCHED)
        app.changed.append(Site(f"experts implementation {before.get('') or 'default'} -> {BATCHED}",
                                f"{type(model).__name__} {prefix or '(root)'}"))

        def undo() -> None:
            model.set_experts_implementation(before or {"": None})

        app.undo = undo
        return app


def _can_set(model: torch.nn.Module) -> bool:
    can = getattr(model, "_can_set_experts_implementation", None)
    try:
        return bool(can()) if callable(can) else False
    except Exception:  # a model whose check raises cannot tell: refused
        return False
