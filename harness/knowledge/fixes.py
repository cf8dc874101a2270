"""The named fixes the diagnoses point at: what each changes, at which level, and why it keeps
the model's meaning. Plain data: ``harness/fixes/`` implements them under these names, and
``harness explain``/``bisect``/``report`` name them. Measured at transformers 5.24, torch 2.13,
torch-mlir 20261001.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.enums import ParsableEnum


class FixLevel(ParsableEnum):
    """Where a fix works, earliest last."""

    TARGET_IR = "target-ir"          # a target's contract (TOSA), before a backend compiles it
    TORCH_IR = "torch-ir"            # the imported torch dialect, through the MLIR bindings
    TORCHSCRIPT = "torchscript"      # the TorchScript graph, before import
    MODULE = "nn-module"             # the nn.Module, before tracing or export


@dataclass(frozen=True)
class KnownFix:
    name: str
    level: FixLevel
    changes: str   # what it rewrites
    why: str       # why that preserves semantics, and when it does not apply
    # Torch IR fixes that swap one op for another: (op as the blocker reads, its replacement).
    # bisect and explain replay the replacement through the same passes to name the one that
    # lowers it.
    renames: tuple[tuple[str, str], ...] = ()

    def rename_of(self, op: str) -> str:
        return dict(self.renames).get(op, "")

    def describe(self) -> str:
        return f"{self.name} ({self.level.value}: {self.changes})"


FIXES: dict[str, KnownFix] = {f.name: f for f in (
    KnownFix(
        "bitwise-and-or", FixLevel.TORCH_IR,
        "aten.__and__.Tensor -> aten.bitwise_and.Tensor, aten.__or__.Tensor -> "
        "aten.bitwise_or.Tensor",
        "Python's & and | on tensors are the bitwise ops, with the same values on bool and "
        "integer tensors, the only dtypes they accept",
        renames=(("torch.aten.__and__.Tensor", "torch.aten.bitwise_and.Tensor"),
                 ("torch.aten.__or__.Tensor", "torch.aten.bitwise_or.Tensor")),
    ),
    KnownFix(
        "persistent-buffers", FixLevel.MODULE,
        "non-persistent buffers (register_buffer(..., persistent=False)) made persistent "
        "before torch.export",
        "persistence only decides whether state_dict() saves a buffer; forward reads the same "
        "tensor either way",
    ),
    KnownFix(
        "moe-batched-experts", FixLevel.MODULE,
        "a mixture-of-experts model's experts run by transformers' batched_mm implementation "
        "(gather each token's experts' weights, one batched matmul) instead of grouped_mm "
        "(aten.histc, aten._grouped_mm or the opaque transformers::grouped_mm_fallback op), "
        "through set_experts_implementation before trace or export",
        "both sum, for each token, its top-k experts' projections weighted by the router's "
        "scores: the same products added in another order; the model's own switch, undone "
        "after the program is made",
    ),
    KnownFix(
        "autograd-function-forward", FixLevel.MODULE,
        "a torch.autograd.Function (traced as one opaque prim::PythonOp, e.g. Bloom's GeLU) "
        "replaced before tracing by a module that calls its forward",
        "inference never runs backward, so the Function's forward is all it computes; not for "
        "training graphs",
    ),
    KnownFix(
        "sdpa-explicit-scale", FixLevel.TORCH_IR,
        "aten.scaled_dot_product_attention(q, ..., scale=s) -> "
        "aten.scaled_dot_product_attention(q * (s * sqrt(E)), ..., scale=None), E = q's last dim "
        "(a miscompile, not a blocker: torch-mlir 20261001 lowers it, and its code ignores s)",
        "scale=None means 1/sqrt(E), so softmax(q*s*sqrt(E) @ k^T / sqrt(E)) is softmax(q @ k^T "
        "* s); for float q with a static last dim and a constant scale only",
    ),
    KnownFix(
        "tosa-variance-f32", FixLevel.TARGET_IR,
        "the TOSA contract's f64 tensors (torch-mlir's calculateVariance computes a float32 "
        "variance in f64) made f32: their casts to and from f64 dropped, f64 constants and "
        "attributes made f32; for a backend that checks the TOSA profiles (IREE), which have no f64",
        "the model is float32 and so are its inputs and outputs; only the variance's "
        "intermediate precision changes, and the port's numbers against eager decide (both "
        "input sets); refused when a public function takes or returns f64 (the model's own f64)",
    ),
    KnownFix(
        "tosa-cast-via-i32", FixLevel.TARGET_IR,
        "tosa.cast i64 -> float (TorchToTosa's .float() of an int64 tensor: positions, rotary, "
        "relative buckets) split into tosa.cast i64 -> i32 -> float, and float -> i64 (.long(): "
        "T5's buckets) into float -> i32 -> i64, each in the TOSA profiles; for a backend that "
        "checks them (IREE)",
        "equal for every value within int32 (an int64 value past 2^31 wraps: a constant one is "
        "refused, the rest is left to the port's numbers against eager, both input sets)",
    ),
    KnownFix(
        "tosa-gather-via-i32", FixLevel.TARGET_IR,
        "tosa.gather of int64 values (torch.gather of an int64 buffer: BridgeTower's buffered "
        "token_type_ids), in no TOSA profile, made a gather of the values cast to i32, its result "
        "cast back to i64; for a backend that checks the profiles (IREE)",
        "a gather copies values, so narrowing before and widening after is exact for every value "
        "within int32 (a constant past it is refused; the rest is left to the port's numbers "
        "against eager, both input sets)",
    ),
)}


def renaming(op: str) -> tuple[KnownFix, str] | None:
    """The fix that replaces ``op`` by an equivalent op, and that op; None when none does."""
    for fix in FIXES.values():
        target = fix.rename_of(op)
        if target:
            return fix, target
    return None
