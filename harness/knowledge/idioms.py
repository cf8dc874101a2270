"""What the harness knows about model idioms that break torch-mlir lowerings, and their fixes.

Plain data, no torch: ``harness explain`` (downstream of the runner) matches failures against
it, and the seed catalog (``harness.models.seed``, upstream) pairs each entry with the modules
that reproduce it. The first six are the 2022 walkthrough's failures (``now`` says what the
pinned torch-mlir does with each today); the rest were found porting Hugging Face models here,
at the pinned versions, and name the fix (``harness.knowledge.fixes``) that answers
them.

An idiom is matched on the blocker (the op whose conversion failed, ``harness.diagnose.blockers``),
not only on the op a diagnostic names: stock OPT's error names a ``torch.vtensor.literal`` of
i1 that lowers alone; the op that does not is its user ``aten.__and__.Tensor``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownIdiom:
    name: str
    title: str
    seen_2022: str  # what the walkthrough's torch-mlir printed ("" when found later)
    hint: str  # the surgical fix, as explain prints it
    ops: tuple[str, ...] = ()  # ops whose failure may point at this idiom
    messages: tuple[str, ...] = ()  # diagnostic fragments that point at it (stronger than ops)
    frames: tuple[str, ...] = ()  # crash frame fragments that point at it
    seed: bool = True  # one of the walkthrough's six (has a module in the seed catalog)
    fix: str = ""  # the harness fix that answers it (a name of harness.knowledge.fixes.FIXES)
    now: str = ""  # seed idioms: what the pinned torch-mlir does with the idiom today
    fails_today: bool = True  # seed idioms: whether the traced idiom still fails to lower

    def score(self, op: str, text: str, frames: str = "") -> int:
        """How strongly a failure (its op, its diagnostic text, its crash frames) matches."""
        points = 3 * sum(1 for m in self.messages if m in text)
        points += 3 * sum(1 for f in self.frames if f in frames)
        points += sum(1 for o in self.ops if op == o)
        return points


KNOWN: dict[str, KnownIdiom] = {i.name: i for i in (
    KnownIdiom(
        "arange-traced-size", "torch.arange over a size read while tracing",
        "'func.call' op operand type mismatch: expected operand type '!torch.float', but provided "
        "'!torch.number' (the shape function of aten.arange)",
        "the size is traced as a tensor: wrap it in int(...) (torch.arange(int(mask.size(-1)))) so "
        "it becomes a constant of the trace",
        ops=("torch.aten.arange",),
        messages=("@__torch_mlir_shape_fn.aten.arange",),
        now="torch-reify-shape-calculations converts the !torch.number end",
        fails_today=False,
    ),
    KnownIdiom(
        "full-tensor-fill", "torch.full with a torch.tensor fill value",
        "'func.call' op operand type mismatch: expected operand type '!torch.float', but provided "
        "'!torch.number' (the shape function of aten.full)",
        "pass the fill value as a Python float (torch.full(shape, float('-inf'))), not as "
        "torch.tensor(...)",
        ops=("torch.aten.full",),
        messages=("@__torch_mlir_shape_fn.aten.full",
                  "'torch_c.to_f64' op operand #0 must be Torch FloatType"),
        now="the -inf fill becomes a constant",
        fails_today=False,
    ),
    KnownIdiom(
        "mask-to-dtype-device", "mask.to(dtype).to(device) round trips",
        "failed to legalize operation 'torch.aten.to.dtype_layout' that was explicitly marked "
        "illegal, located at the .to(inputs_embeds.device) line (which the walkthrough took for "
        "the wrong line: the trace records .to(device) as aten.to.dtype_layout)",
        "create the tensor with the dtype it needs (dtype=... on torch.full/zeros/ones) and drop "
        ".to(dtype) and .to(device): on the CPU they are no-ops that the trace keeps",
        ops=("torch.aten.to.dtype_layout", "torch.aten.to.device", "torch.aten._to_copy"),
        messages=("'torch.aten.to.dtype_layout'", "'torch.aten.to.device'"),
        now="the torchscript pipeline folds the no-op casts away",
        fails_today=False,
    ),
    KnownIdiom(
        "mask-to-bool", "a float mask cast to bool",
        "unsupported byte, char or bool type for convertScalarToDtype 'f32'(scalar type) -> "
        "'i1'(dtype); failed to legalize operation 'torch.aten.to.dtype'",
        "compute the bool mask by comparison (mask == 0) instead of casting a float mask with "
        ".to(torch.bool)",
        ops=("torch.aten.to.dtype",),
        messages=("convertScalarToDtype", "'i1'(dtype)"),
        now="the f32 -> i1 cast becomes a compare with zero",
        fails_today=False,
    ),
    KnownIdiom(
        "view-traced-sizes", "view with sizes read from a tensor while tracing",
        "failed to legalize operation 'torch.aten.view' that was explicitly marked illegal",
        "read the sizes as Python ints (bsz, seq_len, _ = map(int, hidden.size())) so view gets "
        "constant sizes",
        ops=("torch.aten.view",),
        messages=("failed to legalize operation 'torch.aten.view'",),
        now="the traced sizes fold to constants",
        fails_today=False,
    ),
    KnownIdiom(
        "tuple-of-views", "a cache returned as nested tuples of contiguous views",
        "a segfault in ConvertAtenViewOp (Assertion `isa<U>()' in Type::cast<RankedTensorType> in "
        "debug builds): torch-maximize-value-semantics left the views in a "
        "torch.prim.TupleConstruct as non-value !torch.tensor",
        "do not return the per-layer (key, value) cache: return one tensor, so every view stays "
        "inside the function and gets value semantics (use_cache=False, or a rewrite with static "
        "structure such as harness.models.opt_fixed.FixedOPT)",
        ops=("torch.prim.TupleConstruct", "torch.copy.to_tensor"),
        messages=("non-value tensor type", "MaximizeValueSemantics"),
        frames=("ConvertAtenViewOp",),
        now="traced, the torchscript pipeline stops at the backend contract "
            "(non-value tensor type); through FX it lowers",
    ),
    KnownIdiom(
        "bool-and-mask", "& (or |) of bool mask tensors: transformers' masking_utils, "
        "`result & mask(...)`",
        "",
        "the trace records Python's & on tensors as aten.__and__.Tensor, which has no lowering "
        "to linalg at the pinned torch-mlir (FX records the same expression as "
        "aten.bitwise_and.Tensor, which lowers); transformers' and_mask starts from "
        "new_ones((), dtype=torch.bool), so the error names that bool literal, which only stays "
        "because its user was not converted. Fix 'bitwise-and-or' renames the op in the torch "
        "IR; in your own code write torch.logical_and / torch.bitwise_and",
        ops=("torch.aten.__and__.Tensor", "torch.aten.__or__.Tensor"),
        messages=("'torch.aten.__and__.Tensor'", "'torch.aten.__or__.Tensor'"),
        seed=False,
        fix="bitwise-and-or",
    ),
    KnownIdiom(
        "non-persistent-buffers", "buffers registered with persistent=False, exported with "
        "torch.export",
        "",
        "the FX importer looks buffers up in the exported program's state and finds no entry "
        "for a non-persistent one (rotary inv_freq, position_ids, ...); fix "
        "'persistent-buffers' makes them persistent before export (the values do not change)",
        messages=("Could not find state mapping for buffer",),
        seed=False,
        fix="persistent-buffers",
    ),
    KnownIdiom(
        "moe-grouped-experts", "mixture-of-experts layers run by transformers' default "
        "grouped_mm experts",
        "",
        "transformers runs MoE experts by sorting tokens per expert (aten.histc) and a grouped "
        "matmul (aten._grouped_mm, or on CPU in float32 its own opaque custom op "
        "transformers::grouped_mm_fallback): torch-mlir lowers none of them and torch.onnx.export "
        "has no translation of the custom op; fix 'moe-batched-experts' switches the model to "
        "transformers' batched_mm experts (set_experts_implementation('batched_mm')), which "
        "gather each token's experts' weights for one batched matmul",
        ops=('torch.operator "aten.histc"', 'torch.operator "aten._grouped_mm"',
             'torch.operator "torch.aten.histc"', 'torch.operator "torch.transformers.grouped_mm_fallback"'),
        messages=("transformers.grouped_mm_fallback", "aten._grouped_mm", "aten.histc"),
        seed=False,
        fix="moe-batched-experts",
    ),
    KnownIdiom(
        "autograd-function", "a torch.autograd.Function in the forward (Bloom's GeLU)",
        "",
        "tracing records the Function as one opaque prim::PythonOp, which the torchscript "
        "pipeline cannot lower (its location points into torch/autograd/function.py, not the "
        "model's line); fix 'autograd-function-forward' calls the Function's forward instead "
        "before tracing",
        ops=('torch.operator "prim.PythonOp"',),
        messages=("prim::PythonOp", "prim.PythonOp"),
        seed=False,
        fix="autograd-function-forward",
    ),
    KnownIdiom(
        "tosa-variance-f64", "f64 TOSA for a float32 variance, outside every TOSA profile, refused "
        "by IREE's TOSA input",
        "",
        "not the model's: torch-mlir's calculateVariance (DecomposeComplexOps.cpp) computes a "
        "float32 variance in f64 on purpose (since 2022), for every backend, and FX's layer norm "
        "becomes var_mean.correction through torch-mlir's own DEFAULT_DECOMPOSITIONS (its "
        "native_layer_norm entry); no TOSA profile has f64 and the TOSA pipeline never validates. "
        "IREE validates and refuses it; the RefBackend (through tosa-to-linalg) takes it. The "
        "bundle: reports/upstream/variance-f32-in-f64-outside-tosa-profiles/. On "
        "IREE use --fix (tosa-variance-f32: the f64 made f32, checked against eager), --target "
        "linalg or stablehlo, or --frontend onnx (its LayerNormalization and ReduceMean ops do "
        "not reach calculateVariance; its MeanVarianceNormalization does)",
        messages=("is not profile-aligned: element type 'f64' is not legal",),
        seed=False, fix="tosa-variance-f32",
    ),
    KnownIdiom(
        "tosa-cast-i64-f32", "tosa.cast i64 -> f32, outside every TOSA profile, refused by IREE's "
        "TOSA input",
        "",
        "not the model's: TorchToTosa's tosaCastTensorToType lowers aten.to.dtype of an int64 "
        "tensor (.float(): positions, rotary, relative buckets) to one tosa.cast i64 -> f32, in "
        "no TOSA profile or extension (its checkValidityOfCast is commented out and the TOSA "
        "pipeline never validates). IREE validates and refuses it; the RefBackend (through "
        "tosa-to-linalg) takes it. The bundle: "
        "reports/upstream/tosa-cast-i64-to-f32-outside-profiles/. On IREE use --fix "
        "(tosa-cast-via-i32: i64 -> i32 -> f32, checked against eager), --target linalg or "
        "stablehlo",
        messages=("did not align with any profile or extension, got (i64,f32)",),
        seed=False, fix="tosa-cast-via-i32",
    ),
    KnownIdiom(
        "tosa-gather-i64", "tosa.gather of int64 values, outside every TOSA profile, refused by "
        "IREE's TOSA input",
        "",
        "torch.gather (or an index) of an int64 tensor (BridgeTower's buffered token_type_ids) "
        "lowers through TorchToTosa to a tosa.gather whose values stay i64, which no TOSA "
        "profile has; IREE validates and refuses it, the RefBackend (tosa-to-linalg) takes it. "
        "On IREE use --fix (tosa-gather-via-i32: the values gathered as i32, checked against "
        "eager), --target linalg or stablehlo",
        messages=("did not align with any profile or extension, got (i64,i32,i64)",),
        seed=False, fix="tosa-gather-via-i32",
    ),
)}


def matches(op: str, text: str, frames: str = "") -> list[KnownIdiom]:
    """Known idioms that a failure points at, strongest first; an op match alone counts."""
    scored = [(idiom.score(op, text, frames), idiom) for idiom in KNOWN.values()]
    return [idiom for points, idiom in sorted(scored, key=lambda s: -s[0]) if points > 0]
