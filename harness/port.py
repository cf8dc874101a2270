"""Porting one TorchScript module: import, write the IR, run the stages, summarize.

This is the data path end to end for a driver (``harness opt``): the importer writes
``<name>.torch.mlir``; each pipeline stage runs in a torch-mlir-opt subprocess on the previous
stage's file, with debug locations printed so a failure still names the Python line.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import torch

from .compiler import pipelines as pipelines_module
from .compiler.irfile import WriteOptions, write_module
from .compiler.records import Diagnostic, RunRecord
from .compiler.runner import RunOptions, repro_command, run_pipeline
from .frontends.torchscript import ImportStats, ModuleBuilder, forward_annotator
from .tools.source import excerpt

_LOC = re.compile(r"\s*loc\((?:[^()]|\([^()]*\))*\)")


@dataclass
class StageResult:
    name: str
    pipeline: str
    output_path: str
    record: RunRecord

    @property
    def ok(self) -> bool:
        return self.record.ok


@dataclass
class PortResult:
    ir_path: str
    import_seconds: float
    import_stats: ImportStats
    stages: list[StageResult] = field(default_factory=list)
    keep_weights: bool = False

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.stages)

    def failed_stage(self) -> StageResult | None:
        return next((s for s in self.stages if not s.ok), None)

    def final_signature(self) -> str:
        """The public function's signature in the last stage's output, e.g. the linalg one."""
        if not self.stages or not self.ok:
            return ""
        text = Path(self.stages[-1].output_path).read_text(errors="replace")
        m = re.search(r"^\s*func\.func @(?!__)[\w.]+\(.*?(?=\{$)", text, re.M)
        return _LOC.sub("", m.group(0)).strip() if m else ""


def port(module: torch.jit.ScriptModule, examples: Sequence[torch.Tensor], out_dir: Path, *,
         stem: str, stages: Sequence[str] = ("torchscript-to-torch", "torch-to-linalg"),
         keep_weights: bool = False, opt: str | None = None, timeout_s: float = 1800.0,
         debug_module_name: str | None = None) -> PortResult:
    start = time.monotonic()
    builder = ModuleBuilder()
    stats = builder.import_module(module, forward_annotator(module, examples))
    builder.verify()
    if debug_module_name:
        from torch_mlir import ir

        builder.module.operation.attributes["torch.debug_module_name"] = ir.StringAttr.get(
            debug_module_name, builder.context)
    ir_path = write_module(builder.module, out_dir / f"{stem}.torch.mlir",
                           WriteOptions(keep_weights=keep_weights))
    result = PortResult(str(ir_path), time.monotonic() - start, stats, keep_weights=keep_weights)
    current = ir_path
    pipelines = pipelines_module.default()
    for i, name in enumerate(stages):
        textual = pipelines.get(name).textual()
        out = out_dir / f"{stem}.{i + 1}.{name}.mlir"
        record = run_pipeline(current, textual, opt=opt, options=RunOptions(
            timeout_s=timeout_s, output_path=str(out), extra_args=("--mlir-print-debuginfo",)))
        result.stages.append(StageResult(name, textual, str(out), record))
        if not record.ok:
            break
        current = out
    return result


def source_excerpt(diag: Diagnostic, context: int = 2) -> list[str]:
    """The Python lines around a diagnostic's location, when the file is readable."""
    return excerpt(diag.file, diag.line, context)


def render(result: PortResult) -> list[str]:
    """The human summary the CLI prints."""
    st = result.import_stats
    weights = "weights kept" if result.keep_weights else "weights elided"
    lines = [
        f"imported: {st.nodes} TorchScript nodes of {len(st.node_kinds)} kinds, "
        f"{st.class_types} class types, {st.tensor_bytes / 2**20:.1f} MiB of tensors "
        f"in {result.import_seconds:.2f} s",
        f"  -> {result.ir_path} ({weights}, debug locations on)",
    ]
    for stage in result.stages:
        rec = stage.record
        if stage.ok:
            lines.append(f"{stage.name}: ok in {rec.elapsed_s:.2f} s -> {stage.output_path}")
            continue
        lines.append(f"{stage.name}: FAILED ({rec.outcome.value}{', ' + rec.signal if rec.signal else ''}) "
                     f"after {rec.elapsed_s:.2f} s")
        diag = rec.first_error()
        if diag is not None:
            lines.append(f"  {diag.location}: error: {diag.message}")
            lines += ["  " + s for s in source_excerpt(diag)]
        elif rec.stderr.strip():
            lines += ["  " + s for s in rec.stderr.strip().splitlines()[:8]]
        lines.append(f"  reproduce: {repro_command(stage.pipeline, rec.input_path)}")
    sig = result.final_signature()
    if sig:
        lines.append(f"lowered to linalg-on-tensors: {sig}")
    return lines
