"""The harness's paths as upstream e2e ``TestConfig``s: the worker side of tools/onnx_conformance.py.

Why a file of its own: the tool runs upstream's e2e suite through more than one of the harness's
paths (the FX or the ONNX frontend, then the linalg, TOSA or StableHLO target), and what each
path does to one test (make the program, import it, run the pipelines.toml stages, compile and
call it on the harness's RefBackend) is apart from how the tool extracts upstream, schedules
workers and compares results.

Every step is the harness's own code: the frontends' makers, conversions and imports
(harness.frontends.base), the stages a target's row names (``target_path(target).stages``, run by
``harness.compiler.stages.run_stages`` with ``harness.execute.lowering.run_stage``, as
harness/port/lowering.py runs them), and the RefBackend (harness.execute.backends). Nothing here
imports upstream's framework before :func:`make_config` is called in a worker, where the
extracted e2e package is importable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Upstream's onnx config gives each dynamic dimension this example size (torch.export
#: specializes a size of 1); the harness's export gets the same examples.
DYNAMIC_EXAMPLE = 2


class HarnessStageError(Exception):
    """A stage of the harness's path failed; the message starts with ``[stage]`` so the record
    names where (upstream's framework keeps only the exception's text)."""

    def __init__(self, stage: str, message: str):
        super().__init__(f"[{stage}] {message}")
        self.stage = stage


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0][:300] if text else ''}"


@dataclass
class Artifact:
    compiled: Any      # harness.execute.backend.Compiled
    folder: Path
    user_outputs: int | None = None  # how many results the test sees, the last ones (None: all)


@dataclass(frozen=True)
class HarnessPath:
    """One of the harness's paths: a frontend (``fx``, ``onnx``) and a target (``linalg``,
    ``tosa``, ``stablehlo``), each by its harness name."""

    frontend: str
    target: str


# ------------------------------------------------------------------------------------------------
# Making and importing the program
# ------------------------------------------------------------------------------------------------


def import_fx(module: Any, inputs: Sequence[Any], folder: Path, stem: str) -> tuple[Path, int]:
    """The FX frontend's program of ``module`` on ``inputs`` and its import: the torch IR file,
    and how many of the program's results are the user's (the last ones).

    Upstream's fx_importer configs export each trace item's own inputs, static; so does this
    (one program per call). The export is the FX frontend's maker (torch.export, non-strict,
    torch.export's defaults), the import its ``import_program`` (the wheel's fx_importer after
    its decomposition table). A program that mutates a buffer or an input returns the new
    values too, ahead of the user's outputs (torch.export's order), and the decomposition can
    make a mutation of an ``out=`` op (``torch.arange(..., out=x)``: the export has one output,
    the import two). Upstream's config keeps the user outputs (``OutputKind.USER_OUTPUT``);
    the run here keeps as many results, from the end."""
    import torch
    from torch.export.graph_signature import OutputKind

    from harness.compiler.mlir import WriteOptions, write_module
    from harness.frontends.base import MakeRequest, frontend
    from harness.frontends.fx import FxPayload
    from harness.frontends.names import FrontendName

    for value in inputs:
        if not isinstance(value, torch.Tensor):
            raise HarnessStageError("export", f"a {type(value).__name__} argument: the harness's "
                                    "paths take tensors only")
    fx = frontend(FrontendName.FX)
    assert fx.maker is not None
    try:
        made = fx.maker.make(MakeRequest(stem, module, tuple(inputs)))
    except Exception as error:
        raise HarnessStageError(fx.maker.stage, first_line(error)) from error
    own = made.program.own(FxPayload)
    assert own is not None
    user = sum(s.kind == OutputKind.USER_OUTPUT for s in own.exported.graph_signature.output_specs)
    try:
        with torch.no_grad():
            imported = fx.import_program(made.program)
        path = write_module(imported.module, folder / f"{stem}.torch.mlir", WriteOptions(keep_weights=True))
    except Exception as error:
        raise HarnessStageError("import", first_line(error)) from error
    return path, user


def import_onnx(module: Any, placeholders: Sequence[Any], folder: Path, stem: str,
                default_export: bool = False) -> Path:
    """The export, the ONNX conversion and the import (in this process): the torch IR file.

    Examples are made as upstream's onnx config makes them (zeros; a -1 size is ``Dim.AUTO``
    with example size 2). The export runs as the ONNX frontend asks (``Conversion.export``: as
    torch.onnx.export's own capture of a module runs torch.export). ``default_export`` (a
    diagnostic): torch.export's defaults instead, the harness's ONNX export before it took the
    capture's settings, which share one symbol between sizes of equal example value (duck
    sizing): with every dynamic size exported at 2, a convolution's input and kernel sizes
    become one symbol and its output size a constant 1."""
    import torch
    from torch.export import Dim

    from harness.compiler.mlir import WriteOptions, write_module
    from harness.frontends.base import ExportSettings, MakeRequest, frontend
    from harness.frontends.names import FrontendName

    examples, dynamic = [], []
    for ph in placeholders:
        examples.append(torch.zeros([d if d >= 0 else DYNAMIC_EXAMPLE for d in ph.shape], dtype=ph.dtype))
        dynamic.append({i: Dim.AUTO for i, d in enumerate(ph.shape) if d < 0} or None)
    onnx_frontend = frontend(FrontendName.ONNX)
    conversion = onnx_frontend.conversion
    maker = frontend(FrontendName.FX).maker
    assert conversion is not None and maker is not None
    try:
        made = maker.make(MakeRequest(
            stem, module, tuple(examples), dynamic_shapes=tuple(dynamic) if any(dynamic) else None,
            export=ExportSettings.DEFAULT if default_export else conversion.export))
    except Exception as error:
        raise HarnessStageError(maker.stage, first_line(error)) from error
    try:
        program = conversion.convert(made.program, folder)
    except Exception as error:
        raise HarnessStageError(conversion.stage, first_line(error)) from error
    try:
        with torch.no_grad():
            imported = onnx_frontend.import_program(program)
        return write_module(imported.module, folder / f"{stem}.torch.mlir", WriteOptions(keep_weights=True))
    except Exception as error:
        raise HarnessStageError("import", first_line(error)) from error


# ------------------------------------------------------------------------------------------------
# The stages and the RefBackend
# ------------------------------------------------------------------------------------------------


def lower(torch_ir: Path, path: HarnessPath, folder: Path, stem: str, timeout_s: float,
          user_outputs: int | None = None) -> Artifact:
    """The imported torch IR through the frontend's pipeline to the backend contract and the
    target's stages (``target_path(target).stages``: its lowering, then for TOSA and StableHLO
    its way on to linalg), each a child process as the port runs them, then the RefBackend's
    compile to LLVM. A failed stage is a :class:`HarnessStageError` naming it."""
    from harness.compiler.runner import RunOptions
    from harness.compiler.stages import StageHooks, StageOptions, run_stages
    from harness.compiler.targets import target_path
    from harness.execute.backend import BackendOptions, Lowered
    from harness.execute.backend_names import BackendName
    from harness.execute.backends import backend
    from harness.execute.lowering import run_stage
    from harness.frontends.base import frontend

    def run(input_path: Path, stage: str, _textual: str, out: Path, options: RunOptions) -> Any:
        return run_stage(input_path, stage, output_path=out, options=options)

    target = target_path(path.target)
    stages = (frontend(path.frontend).torch_pipeline, *target.stages)
    results = run_stages(torch_ir, stages, folder, stem=stem,
                         options=StageOptions(timeout_s=timeout_s), hooks=StageHooks(run=run))
    failed = next((r for r in results if not r.ok), None)
    if failed is not None:
        raise HarnessStageError(failed.name, record_line(failed.record))
    linalg = Path(results[-1].output_path)
    lowered = Lowered(target.target, contract_ir=Path(results[0].output_path),
                      target_ir=Path(results[1].output_path), linalg=linalg, stem=stem)
    refbackend = backend(BackendName.REFBACKEND)
    try:
        compiled = refbackend.compile(lowered, folder, BackendOptions(timeout_s=timeout_s))
    except Exception as error:  # a signature the RefBackend refuses
        raise HarnessStageError(refbackend.stage, first_line(error)) from error
    if not compiled.record.ok:
        raise HarnessStageError(refbackend.stage, record_line(compiled.record))
    return Artifact(compiled, folder, user_outputs)


def record_line(record: Any) -> str:
    """A failed run's outcome and first error (a RunRecord's)."""
    first = record.first_error()
    return f"{record.outcome.value}: {first.message if first else record.signature}"[:400]


def run_refbackend(artifact: Artifact, inputs: Sequence[Any], index: int, timeout_s: float) -> Any:
    """One call of the compiled module on the harness's RefBackend (in a child process): its
    outputs (the user's) as torch tensors, one or a tuple, as upstream's RefBackend returns them."""
    import numpy as np
    import torch

    from harness.execute.backend import BackendOptions
    from harness.execute.backend_names import BackendName
    from harness.execute.backends import backend

    arrays = []
    for value in inputs:
        if not isinstance(value, torch.Tensor):
            raise HarnessStageError("execution", f"a {type(value).__name__} argument: the harness's "
                                    "paths take tensors only")
        arrays.append(value.detach().numpy())
    work = artifact.folder / f"execution-{index}"
    work.mkdir(parents=True, exist_ok=True)
    refbackend = backend(BackendName.REFBACKEND)
    [result] = refbackend.run_sets(artifact.compiled, [arrays], [work], BackendOptions(timeout_s=timeout_s))
    if not result.ok:
        text = (result.error or result.signal or result.stderr or "failed").strip()
        raise HarnessStageError("execution", text.splitlines()[0][:400] if text else "failed")
    # np.array, not np.ascontiguousarray: that one makes a 0-d result 1-d
    outputs = tuple(torch.from_numpy(np.array(o, order="C")) for o in result.outputs)
    if artifact.user_outputs is not None:  # the mutations' new values come first
        outputs = outputs[len(outputs) - artifact.user_outputs:]
    return outputs[0] if len(outputs) == 1 else outputs


# ------------------------------------------------------------------------------------------------
# As upstream's TestConfig
# ------------------------------------------------------------------------------------------------


def make_config(path: HarnessPath, folder: Path, timeout_s: float, default_export: bool = False) -> Any:
    """``path`` as a subclass of upstream's TestConfig (defined once upstream's framework is
    importable): upstream's framework runs it as it runs its own configs.

    ONNX: ``compile`` makes, converts, imports and lowers once, on examples of the annotated
    shapes (as upstream's onnx configs do); ``run`` calls that on each trace item. FX: as
    upstream's fx_importer configs, ``compile`` keeps the module and ``run`` exports, imports,
    lowers and calls it on each trace item's own inputs."""
    from torch_mlir_e2e_test.framework import TestConfig, TraceItem
    from torch_mlir_e2e_test.utils import convert_annotations_to_placeholders

    class HarnessConfig(TestConfig):
        """The harness's ``path``: :func:`import_fx` or :func:`import_onnx`, then :func:`lower`
        and :func:`run_refbackend`."""

        def __init__(self) -> None:
            super().__init__()
            self.test = "test"

        def compile(self, program: Any, verbose: bool = False) -> Any:
            if path.frontend == "fx":
                return program
            work = folder / self.test
            work.mkdir(parents=True, exist_ok=True)
            placeholders = convert_annotations_to_placeholders(program.forward)
            torch_ir = import_onnx(program, placeholders, work, "forward", default_export)
            return lower(torch_ir, path, work, "forward", timeout_s)

        def run(self, artifact: Any, trace: Any) -> Any:
            items = []
            for i, item in enumerate(trace):
                compiled = artifact
                if path.frontend == "fx":
                    work = folder / self.test / f"call-{i}"
                    work.mkdir(parents=True, exist_ok=True)
                    torch_ir, user = import_fx(artifact, item.inputs, work, "forward")
                    compiled = lower(torch_ir, path, work, "forward", timeout_s, user)
                items.append(TraceItem(symbol=item.symbol, inputs=item.inputs,
                                       output=run_refbackend(compiled, item.inputs, i, timeout_s)))
            return items

    return HarnessConfig()
