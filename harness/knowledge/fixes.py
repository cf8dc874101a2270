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
)}


def renaming(op: str) -> tuple[KnownFix, str] | None:
    """The fix that replaces ``op`` by an equivalent op, and that op; None when none does."""
    for fix in FIXES.values():
        target = fix.rename_of(op)
        if target:
            return fix, target
    return None
