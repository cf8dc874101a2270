"""What the harness knows about model idioms that break torch-mlir lowerings, and their fixes.

Plain data, no torch: ``harness explain`` (downstream of the runner) matches failures against
it, and the seed catalog (``harness.models.seed``, upstream) pairs each entry with the modules
that reproduce it. The first six are the 2022 walkthrough's failures; the rest were found
porting OPT here, at the pinned versions.
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
    ),
    KnownIdiom(
        "full-tensor-fill", "torch.full with a torch.tensor fill value",
        "'func.call' op operand type mismatch: expected operand type '!torch.float', but provided "
        "'!torch.number' (the shape function of aten.full)",
        "pass the fill value as a Python float (torch.full(shape, float('-inf'))), not as "
        "torch.tensor(...)",
        ops=("torch.aten.full",),
        messages=("@__torch_mlir_shape_fn.aten.full", "'torch_c.to_f64' op operand #0 must be Torch FloatType"),
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
    ),
    KnownIdiom(
        "mask-to-bool", "a float mask cast to bool",
        "unsupported byte, char or bool type for convertScalarToDtype 'f32'(scalar type) -> "
        "'i1'(dtype); failed to legalize operation 'torch.aten.to.dtype'",
        "compute the bool mask by comparison (mask == 0) instead of casting a float mask with "
        ".to(torch.bool)",
        ops=("torch.aten.to.dtype",),
        messages=("convertScalarToDtype", "'i1'(dtype)"),
    ),
    KnownIdiom(
        "view-traced-sizes", "view with sizes read from a tensor while tracing",
        "failed to legalize operation 'torch.aten.view' that was explicitly marked illegal",
        "read the sizes as Python ints (bsz, seq_len, _ = map(int, hidden.size())) so view gets "
        "constant sizes",
        ops=("torch.aten.view",),
        messages=("failed to legalize operation 'torch.aten.view'",),
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
    ),
    KnownIdiom(
        "bool-literal-mask", "a constant bool mask frozen into the trace",
        "",
        "the trace froze a bool tensor built from Python values (transformers' masking_utils "
        "builds its and_mask with new_ones(..., dtype=torch.bool)) into a torch.vtensor.literal of "
        "i1, which the linalg pipeline cannot lower; build the mask from the inputs by comparison "
        "(e.g. attention_mask == 0), or as an additive float bias as harness.models.opt_fixed."
        "FixedOPT does",
        ops=("torch.vtensor.literal",),
        messages=("dense<true> : tensor<i1>", "dense<false> : tensor<i1>"),
        seed=False,
    ),
)}


def matches(op: str, text: str, frames: str = "") -> list[KnownIdiom]:
    """Known idioms that a failure points at, strongest first; an op match alone counts."""
    scored = [(idiom.score(op, text, frames), idiom) for idiom in KNOWN.values()]
    return [idiom for points, idiom in sorted(scored, key=lambda s: -s[0]) if points > 0]
