"""Pipelines run one after another, each in its own torch-mlir-opt process on the previous
stage's file, stopping at the first failure: the one stage loop every flow shares (port,
``compile``, ``harness fix``), which each extends through :class:`StageHooks`.

Each stage's output is a file next to its input, so a failure leaves the exact input of the
failing stage on disk for the tools (explain, bisect, reduce, report).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness import defaults

from . import pipelines as pipelines_module
from .mlir import read_module
from .records import RunRecord
from .runner import RunOptions, run_pipeline

if TYPE_CHECKING:
    from torch_mlir import ir


@dataclass
class StageResult:
    name: str          # the pipelines.toml name (or the textual pipeline, as the caller gave it)
    pipeline: str      # the textual pipeline that ran
    output_path: str
    record: RunRecord
    contract: str = ""  # what the pipeline promises its output is (pipelines.toml ``output``)
    input_path: str = ""  # the file the stage ran on (a fix may have put another in place)

    @property
    def ok(self) -> bool:
        return self.record.ok


@dataclass(frozen=True)
class StageOptions:
    opt: str | None = None                    # torch-mlir-opt (None: $TORCH_MLIR_OPT, the wheel's)
    timeout_s: float = defaults.TIMEOUT_S      # per stage
    memory_limit_mb: int = defaults.MEMORY_LIMIT_MB  # address space per stage (0: no limit)
    debug_info: bool = True                   # keep locations, so a failure names the Python line
    bytecode: bool = False                    # write stage outputs as bytecode (large weights)
    options: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # per stage name


#: How one stage runs: (input, the stage as named, its textual pipeline, output, run options).
StageRunner = Callable[[Path, str, str, Path, RunOptions], RunRecord]


def _torch_mlir_opt(opt: str | None) -> StageRunner:
    def run(input_path: Path, _name: str, textual: str, out: Path, options: RunOptions) -> RunRecord:
        return run_pipeline(input_path, textual, opt=opt, options=options)
    return run


@dataclass(frozen=True)
class StageHooks:
    """What a flow adds to the loop, each optional (xDSL's pass-pipeline callbacks, for stages).

    - ``starting(name)``: before each run of a stage (progress lines);
    - ``finished(result)``: after each run, a retry's too;
    - ``before(index, name, input) -> input``: another input for a stage before it first runs
      (a known miscompile's fix pre-empts the lowering);
    - ``failed(index, result) -> input | None``: a new input to run the failed stage again on
      (``--fix``), or None to stop there;
    - ``run``: how a stage runs (default: torch-mlir-opt; the RefBackend's stages take the
      bindings tool for the passes torch-mlir-opt does not register).
    """

    starting: Callable[[str], None] | None = None
    finished: Callable[[StageResult], None] | None = None
    before: Callable[[int, str, Path], Path] | None = None
    failed: Callable[[int, StageResult], Path | None] | None = None
    run: StageRunner | None = None


def stage_file_name(stem: str, index: int, name: str, *, bytecode: bool = False) -> str:
    """``STEM.N.STAGE.mlir`` (N from 1); a textual pipeline's STAGE is ``pipeline``."""
    slug = name if re.fullmatch(r"[\w.-]+", name) else "pipeline"
    return f"{stem}.{index + 1}.{slug}.{'mlirbc' if bytecode else 'mlir'}"


def run_stages(input_path: str | os.PathLike, stages: Sequence[str], out_dir: str | os.PathLike,
               *, stem: str, options: StageOptions = StageOptions(),
               hooks: StageHooks = StageHooks(), start: int = 0) -> list[StageResult]:
    """Runs ``stages`` (pipelines.toml names, upstream names or textual pipelines) in order on
    ``input_path``, each on the previous one's output; stops at the first failure ``hooks.failed``
    does not answer with a new input. Outputs are ``OUT_DIR/STEM.N.STAGE.mlir`` (``.mlirbc``
    with ``bytecode``), N counting from ``start`` + 1 (stages that go on from an earlier run's
    output). The result holds each stage's last run, in order."""
    defined = pipelines_module.default()
    run = hooks.run or _torch_mlir_opt(options.opt)
    current = Path(input_path)
    results: list[StageResult] = []
    extra = ("--mlir-print-debuginfo",) if options.debug_info else ()
    for i, name in enumerate(stages):
        if pipelines_module.is_textual(name):
            textual, contract = defined.resolve(name, options.options.get(name)), ""
        else:
            pipeline = defined.get(name)
            textual, contract = pipeline.textual(options.options.get(name)), pipeline.output
        out = Path(out_dir) / stage_file_name(stem, start + i, name, bytecode=options.bytecode)
        if hooks.before is not None:
            current = hooks.before(i, name, current)
        while True:
            if hooks.starting is not None:
                hooks.starting(name)
            record = run(current, name, textual, out, RunOptions(
                timeout_s=options.timeout_s, output_path=str(out), emit_bytecode=options.bytecode,
                extra_args=extra, memory_limit_mb=options.memory_limit_mb or None))
            result = StageResult(name, textual, str(out), record, contract, str(current))
            if hooks.finished is not None:
                hooks.finished(result)
            retry = None if record.ok or hooks.failed is None else hooks.failed(i, result)
            if retry is None:
                break
            current = Path(retry)
        results.append(result)
        if not record.ok:
            break
        current = out
    return results


@dataclass(frozen=True)
class FunctionSignature:
    name: str
    inputs: tuple[str, ...]
    results: tuple[str, ...]
    dynamic: tuple[tuple[int, int], ...] = ()  # (argument, axis) of each ``?`` size of a ranked input

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
                                           tuple(str(t) for t in ftype.results),
                                           _dynamic_sizes(ftype.inputs)))
    return found


def _dynamic_sizes(types: Sequence[ir.Type]) -> tuple[tuple[int, int], ...]:
    """(argument, axis) of each dynamic size of the ranked builtin tensors among ``types`` (a
    ``!torch.vtensor`` is not a builtin shaped type: its ``?`` are read from its text)."""
    from torch_mlir import ir

    found: list[tuple[int, int]] = []
    for i, t in enumerate(types):
        if isinstance(t, ir.RankedTensorType):
            ranked = t
            found += [(i, a) for a in range(ranked.rank) if ranked.is_dynamic_dim(a)]
        elif str(t).startswith("!torch.vtensor<["):
            sizes = str(t)[len("!torch.vtensor<["):].split("]", 1)[0]
            found += [(i, a) for a, d in enumerate(sizes.split(",")) if d.strip() == "?"]
    return tuple(found)
