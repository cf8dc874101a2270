"""A check's pipeline split where the torch level ends: the passes that bring a file to the torch
backend contract, and the ones that lower the contract to linalg-on-tensors.

Localizing a miscompile cuts functions at the torch backend contract: there every op is one
``torch.aten.*`` op the reference evaluator runs, every value a ``!torch.vtensor`` with a
rank and a dtype, and a cut program is something each target's lowering accepts. So the split is
at the target's lowering (``torch-backend-to-linalg-on-tensors-backend-pipeline``, or TOSA's or
StableHLO's, harness.compiler.targets): what comes before it runs once (with debug locations
kept), what comes from it on (the lowering, and TOSA's or StableHLO's way on to linalg) runs on
every cut program.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from harness.compiler import pipelines
from harness.compiler.targets import TARGETS
from harness.compiler.pipeline_text import PassRef, parse_pipeline
from harness.errors import PipelineConfigError

TO_TORCH = "torch-function-to-torch-backend-pipeline"
_BACKEND_LEGAL = "backend-legal-ops"


@dataclass(frozen=True)
class SplitPipeline:
    """``to_torch`` ("" when the input is at the contract already) then ``to_linalg``."""

    given: str                        # as the user named it
    to_torch_passes: tuple[PassRef, ...]
    to_linalg_passes: tuple[PassRef, ...]

    @property
    def to_torch(self) -> str:
        return join(self.to_torch_passes) if self.to_torch_passes else ""

    @property
    def to_linalg(self) -> str:
        return join(self.to_linalg_passes)

    def backend_legal_ops(self) -> tuple[str, ...]:
        """The ops the torch-level passes keep (``backend-legal-ops=aten.a,aten.b``)."""
        found: list[str] = []
        for p in self.to_torch_passes:
            for option in _options(p.options):
                name, _, value = option.partition("=")
                if name.strip() == _BACKEND_LEGAL:
                    found += [v.strip() for v in value.strip().strip("{}").split(",") if v.strip()]
        return tuple(dict.fromkeys(found))


def _options(text: str) -> list[str]:
    """``a=1 b={x,y} c`` -> its options; braces group a list value."""
    out, depth, current = [], 0, ""
    for ch in text:
        if ch == " " and depth == 0:
            if current:
                out.append(current)
            current = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        current += ch
    return out + ([current] if current else [])


def join(passes: Iterable[PassRef]) -> str:
    """A textual pipeline of ``passes`` (each nested as it was, under one builtin.module)."""
    parts = []
    for p in passes:
        anchors = p.anchors[1:] if p.anchors[:1] == ("builtin.module",) else p.anchors
        body = p.name + (f"{{{p.options}}}" if p.options else "")
        for anchor in reversed(anchors):
            body = f"{anchor}({body})"
        parts.append(body)
    return f"builtin.module({','.join(parts)})"


def split_pipeline(spec: str) -> SplitPipeline:
    """``spec`` (names chained with commas, as ``harness check`` takes them, or one textual
    pipeline) split at torch-to-linalg. Without that pipeline in it, all of ``spec`` counts as
    lowering from the contract."""
    from .check import pipeline_stages

    known = pipelines.default()
    passes: list[PassRef] = []
    for stage in pipeline_stages(spec):
        textual = known.resolve(stage)
        if textual.startswith("-"):
            raise PipelineConfigError(
                f"a numerics bisection needs a textual pipeline or pipeline names, not pass "
                f"flags ({stage!r}): e.g. --pipeline torchscript-to-torch,torch-to-linalg.")
        passes += parse_pipeline(textual)
    lowerings = _target_lowering_passes()
    at = next((i for i, p in enumerate(passes) if p.name in lowerings), 0)
    if not passes[at:]:
        raise PipelineConfigError(f"the pipeline {spec!r} has no passes to lower the torch "
                                  "backend contract to linalg; end it with torch-to-linalg.")
    return SplitPipeline(spec, tuple(passes[:at]), tuple(passes[at:]))


def _target_lowering_passes() -> frozenset[str]:
    """The registered pipelines that lower the torch backend contract to a target."""
    known = pipelines.default()
    return frozenset(known.get(path.lowering).pass_name for path in TARGETS.values())


def decompose_pipeline(keep: tuple[str, ...]) -> str:
    """The torch-level simplification and decomposition pipeline, keeping only ``keep``
    backend-legal: what decomposes the other ops of a file already at the contract."""
    if not keep:
        return f"builtin.module({TO_TORCH})"
    return f"builtin.module({TO_TORCH}{{{_BACKEND_LEGAL}={','.join(keep)}}})"
