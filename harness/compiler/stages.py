"""Pipelines run one after another, each in its own torch-mlir-opt process on the previous
stage's file, stopping at the first failure: the stage loop every flow shares (port, compile).

Each stage's output is a file next to its input, so a failure leaves the exact input of the
failing stage on disk for the tools (explain, bisect, reduce, report).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import pipelines as pipelines_module
from .mlir import read_module
from .records import RunRecord
from .runner import DEFAULT_TIMEOUT_S, RunOptions, run_pipeline


@dataclass
class StageResult:
    name: str          # the pipelines.toml name
    pipeline: str      # the textual pipeline that ran
    output_path: str
    record: RunRecord
    contract: str = ""  # what the pipeline promises its output is (pipelines.toml ``output``)

    @property
    def ok(self) -> bool:
        return self.record.ok


@dataclass(frozen=True)
class StageOptions:
    opt: str | None = None                    # torch-mlir-opt (None: $TORCH_MLIR_OPT, the wheel's)
    timeout_s: float = DEFAULT_TIMEOUT_S      # per stage
    debug_info: bool = True                   # keep locations, so a failure names the Python line
    bytecode: bool = False                    # write stage outputs as bytecode (large weights)
    options: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # per stage name


def run_stages(input_path: str | os.PathLike, stages: Sequence[str], out_dir: str | os.PathLike,
               *, stem: str, options: StageOptions = StageOptions(),
               progress: Callable[[StageResult], None] | None = None,
               starting: Callable[[str], None] | None = None) -> list[StageResult]:
    """Runs ``stages`` (pipelines.toml names) in order on ``input_path``; stops at the first
    failure. Outputs are ``OUT_DIR/STEM.N.STAGE.mlir`` (``.mlirbc`` with ``bytecode``).
    ``starting(name)`` and ``progress(result)`` are called around each stage."""
    defined = pipelines_module.default()
    current = Path(input_path)
    results: list[StageResult] = []
    for i, name in enumerate(stages):
        pipeline = defined.get(name)
        textual = pipeline.textual(options.options.get(name))
        out = Path(out_dir) / f"{stem}.{i + 1}.{name}.{'mlirbc' if options.bytecode else 'mlir'}"
        extra = ("--mlir-print-debuginfo",) if options.debug_info else ()
        if starting is not None:
            starting(name)
        record = run_pipeline(current, textual, opt=options.opt, options=RunOptions(
            timeout_s=options.timeout_s, output_path=str(out), emit_bytecode=options.bytecode,
            extra_args=extra))
        result = StageResult(name, textual, str(out), record, pipeline.output)
        results.append(result)
        if progress is not None:
            progress(result)
        if not record.ok:
            break
        current = out
    return results


@dataclass(frozen=True)
class FunctionSignature:
    name: str
    inputs: tuple[str, ...]
    results: tuple[str, ...]

    def __str__(self) -> str:
        return (f"func.func @{self.name}({', '.join(f'%arg{i}: {t}' for i, t in enumerate(self.inputs))})"
                f" -> {self._results()}")

    def _results(self) -> str:
        return self.results[0] if len(self.results) == 1 else f"({', '.join(self.results)})"


def public_functions(path: str | os.PathLike, *, opt: str | None = None) -> list[FunctionSignature]:
    """The public ``func.func`` signatures of an IR file, read through the MLIR bindings."""
    from torch_mlir import ir

    parsed = read_module(path, opt=opt)
    if parsed is None:
        return []
    context, module = parsed
    found = []
    with context:
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name != "func.func":
                continue
            attrs = op.operation.attributes
            if "sym_visibility" in attrs and ir.StringAttr(attrs["sym_visibility"]).value == "private":
                continue
            ftype = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
            found.append(FunctionSignature(ir.StringAttr(attrs["sym_name"]).value,
                                           tuple(str(t) for t in ftype.inputs),
                                           tuple(str(t) for t in ftype.results)))
    return found
