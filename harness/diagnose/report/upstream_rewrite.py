"""A miscompile whose culprit is an upstream MLIR pass, shown without torch-mlir's code.

The numbers of a miscompile bundle need an execution, which ``repro.py`` does with torch-mlir's
RefBackend (its ``refback-*`` passes and the wheel's ExecutionEngine). When the pass whose
removal makes them right is upstream MLIR's (``linalg-fuse-elementwise-ops``), the RefBackend's
passes up to and including it are often all upstream MLIR's too: run on ``reduced.linalg.mlir``
(plain linalg, tensor and arith) they give the rewritten IR an MLIR maintainer reads, with a
pass-pipeline string ``mlir-opt --pass-pipeline`` takes as it is. The bundle runs that string
through the wheel's MLIR Python bindings (no ``mlir-opt`` ships with the wheel), keeps the
result as ``reduced.upstream.mlir`` and says which part of the check needs the RefBackend.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from harness.compiler import pipelines
from harness.compiler.pipeline_text import parse_pipeline
from harness.compiler.runner import RunOptions
from harness.execute.levels import join
from harness.execute.lowering import run_bindings_pipeline

UPSTREAM_FILE = "reduced.upstream.mlir"
# The RefBackend's lowering from linalg: its passes are the ones the numerics blame leaves out.
REFBACKEND_PIPELINE = "linalg-to-llvm"
# Passes of torch-mlir's own (the RefBackend's and TMTensor's), which upstream MLIR does not have.
TORCH_MLIR_PASS_PREFIXES = ("torch-", "refback-", "tm-tensor-", "convert-torch-")


@dataclass(frozen=True)
class UpstreamRewrite:
    pipeline: str      # the RefBackend's passes up to and including the culprit, textual
    ok: bool           # it ran through the bindings and wrote UPSTREAM_FILE
    detail: str = ""   # what went wrong when not ok

    def to_json(self) -> dict:
        return {"pipeline": self.pipeline, "ok": self.ok, "detail": self.detail, "file": UPSTREAM_FILE}


def upstream_prefix(culprit: str, refbackend: str = "") -> str:
    """The RefBackend's passes up to and including ``culprit``, as one textual pipeline, when
    every one of them is upstream MLIR's; "" when the culprit is not among them or a pass of
    torch-mlir's comes first (the rewrite then cannot be shown with upstream tools alone)."""
    passes = parse_pipeline(refbackend or pipelines.default().resolve(REFBACKEND_PIPELINE))
    at = next((i for i, p in enumerate(passes) if p.name == culprit), None)
    if at is None or culprit.startswith(TORCH_MLIR_PASS_PREFIXES):
        return ""
    prefix = passes[:at + 1]
    if any(p.name.startswith(TORCH_MLIR_PASS_PREFIXES) for p in prefix):
        return ""
    return join(prefix)


def upstream_rewrite(linalg: Path, culprit: str, out: Path, timeout_s: float) -> UpstreamRewrite | None:
    """``upstream_prefix(culprit)`` run on ``linalg`` through the MLIR Python bindings, written
    to ``out``; None when there is no such prefix."""
    pipeline = upstream_prefix(culprit)
    if not pipeline:
        return None
    record = run_bindings_pipeline(linalg, pipeline, options=RunOptions(timeout_s=timeout_s,
                                                                        output_path=os.fspath(out)))
    if not record.ok or not out.is_file():
        out.unlink(missing_ok=True)
        return UpstreamRewrite(pipeline, False, str(record.signature))
    return UpstreamRewrite(pipeline, True)
