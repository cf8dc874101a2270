"""``compile`` with the signature of the old ``torch_mlir.compile``, on our importer.

Scripts written for the old API run with only the import changed::

    from harness import compat as torch_mlir
    module = torch_mlir.compile(model, example_args, output_type="linalg-on-tensors",
                                use_tracing=True)

Pipelines run in a ``torch-mlir-opt`` subprocess, so a compiler crash is an exception here,
not a dead interpreter. A failure raises ``PipelineFailure`` holding the diagnostics and the
exact command that reproduces it on the saved input.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import warnings
from pathlib import Path
from collections.abc import Sequence

import torch
from torch_mlir import ir

from harness.compiler import pipelines as pipelines_module
from harness.compiler.irfile import unique_dir
from harness.compiler.mlir import WriteOptions, write_module
from harness.compiler.runner import repro_command
from harness.compiler.pipelines import Pipeline
from harness.compiler.stages import StageHooks, StageOptions, StageResult, run_stages
from harness.compiler.targets import TARGETS, Target
from harness.enums import ParsableEnum
from harness.errors import HarnessError, InputFileError, PipelineFailure, UsageError

from .torchscript import ImportOptions, ModuleBuilder, forward_annotator

__all__ = ["OutputType", "TensorPlaceholder", "compile", "import_torchscript", "load_output_dialects"]

# Models whose weights exceed this are handed to torch-mlir-opt as bytecode (compact, exact)
# rather than text with hex-encoded blobs.
TEXT_INPUT_MAX_WEIGHT_BYTES = 16 * 1024 * 1024


class OutputType(ParsableEnum):
    RAW = "raw"
    TORCH = "torch"
    LINALG_ON_TENSORS = "linalg-on-tensors"
    TOSA = "tosa"
    STABLEHLO = "stablehlo"

    @classmethod
    def _error(cls) -> type[HarnessError]:
        return HarnessError  # as the old torch_mlir.compile raised it

    @classmethod
    def get(cls, spec: str | OutputType) -> OutputType:
        """The old API's name for ``parse``."""
        return cls.parse(spec)


class TensorPlaceholder:
    """A formal argument of known shape (-1 = dynamic) and dtype, instead of an example tensor."""

    def __init__(self, shape: Sequence[int], dtype: torch.dtype):
        self.shape = list(shape)
        self.dtype = dtype

    @staticmethod
    def like(tensor: torch.Tensor, dynamic_axes: Sequence[int] | None = None) -> TensorPlaceholder:
        dynamic = set(dynamic_axes or ())
        return TensorPlaceholder([-1 if i in dynamic else d for i, d in enumerate(tensor.shape)],
                                 tensor.dtype)


_DESCRIPTIONS = {
    "torchscript-to-torch": "Lowering TorchScript IR -> Torch Backend IR",
    TARGETS[Target.LINALG].lowering: "Lowering Torch Backend IR -> Linalg-on-Tensors Backend IR",
    TARGETS[Target.TOSA].lowering: "Lowering Torch Backend IR -> TOSA Backend IR",
    TARGETS[Target.STABLEHLO].lowering: "Lowering Torch Backend IR -> StableHLO Backend IR",
}


def _example_list(example_args: object) -> list:
    if isinstance(example_args, (torch.Tensor, TensorPlaceholder)):
        return [example_args]
    if isinstance(example_args, (list, tuple)):
        return list(example_args)
    raise UsageError(
        f"example_args must be a tensor, a TensorPlaceholder or a list/tuple of them, got "
        f"{type(example_args).__name__}."
    )


def _script(model: object, examples: list, use_tracing: bool) -> torch.jit.ScriptModule:
    if isinstance(model, torch.jit.ScriptModule):
        return model
    if not isinstance(model, torch.nn.Module):
        raise UsageError(
            f"compile expects a torch.nn.Module or torch.jit.ScriptModule, got {type(model).__name__}."
        )
    if use_tracing:
        if any(isinstance(e, TensorPlaceholder) for e in examples):
            raise UsageError(
                "use_tracing=True needs example tensors, not TensorPlaceholders: tracing runs the "
                "model. Pass real tensors of the shapes you want."
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=torch.jit.TracerWarning)
            return torch.jit.trace(model, tuple(examples), strict=False)
    return torch.jit.script(model)


def import_torchscript(model: torch.nn.Module,
                       example_args: torch.Tensor | TensorPlaceholder
                       | Sequence[torch.Tensor | TensorPlaceholder], *, use_tracing: bool = False,
                       ignore_traced_shapes: bool = False) -> ModuleBuilder:
    """Script or trace, then import with ``forward`` exported and its arguments annotated."""
    examples = _example_list(example_args)
    scripted = _script(model, examples, use_tracing)
    builder = ModuleBuilder()
    builder.import_module(scripted._c, forward_annotator(scripted, examples),
                          ImportOptions(ignore_existing_tensor_shapes_and_dtypes=ignore_traced_shapes))
    builder.verify()
    builder.module.operation.attributes["torch.debug_module_name"] = ir.StringAttr.get(
        getattr(scripted, "original_name", type(model).__name__), builder.context)
    return builder


def load_output_dialects(context: ir.Context, pipeline: str) -> None:
    """Loads into ``context`` every dialect the passes of ``pipeline`` may emit.

    The pipeline ran in a subprocess, so its output names dialects the caller's context has
    never seen. ``tm_tensor`` (torch-mlir's own: sort, scatter, topk, ...) cannot be
    registered from Python in the pinned wheel, and a context that allows unregistered dialects
    would hand the RefBackend opaque ops that its ``tm-tensor-bufferize`` does not match. A pass
    manager loads the dependent dialects of its passes when it runs, so running the same
    pipeline over an empty module makes them real, registered dialects of ``context``.
    """
    from torch_mlir import passmanager

    with context, ir.Location.unknown(context):
        empty = ir.Module.create()
        try:
            passmanager.PassManager.parse(pipeline).run(empty.operation)
        except ir.MLIRError:
            # Some pipelines refuse an empty module after loading their dialects (stablehlo's
            # needs a func); the dialects are loaded by then, which is all this is for.
            pass


def _save_failing_input(source: ModuleBuilder | Path, out_dir: str | os.PathLike,
                        module_name: str, stage: str, keep_weights: bool, opt: str | None) -> Path:
    """The failing stage's input in the user's folder: text, weights elided unless kept (the
    tools handle elided weights; a failure to legalize does not depend on their values)."""
    from harness.compiler.mlir import read_module

    folder = unique_dir(f"{module_name}-", parent=out_dir)
    text = folder / f"{module_name}.{stage}.input.mlir"
    if isinstance(source, ModuleBuilder):
        module: ir.Module | ir.Operation = source.module
        if keep_weights:
            write_module(module, text.with_suffix(".mlirbc"), WriteOptions(keep_weights=True, bytecode=True))
    else:
        read = read_module(source, opt=opt)
        if read is None:  # not readable by these bindings: keep the exact bytecode only
            exact = folder / f"{module_name}.{stage}.input.mlirbc"
            shutil.copyfile(source, exact)
            return exact
        module = read[1]
        if keep_weights:
            shutil.copyfile(source, text.with_suffix(".mlirbc"))
    return write_module(module, text, WriteOptions(keep_weights=keep_weights))


def _next_steps(saved: Path, pipeline: str, binary: str, opt: str | None) -> list[str]:
    """The harness commands for the saved input, ready to paste (with the binary that ran)."""
    head = [sys.executable, "-m", "harness"]
    given = ["--opt", os.path.abspath(opt)] if opt else []
    common = [str(saved), "--pipeline", pipeline, *given]
    return [shlex.join([*head, "explain", *common]),
            shlex.join([*head, "bisect", *common]),
            shlex.join([*head, "reduce", *common, "-o", str(saved.parent / "reduced.mlir")]),
            shlex.join([*head, "report", *common, "--out", str(saved.parent / "report")])]


def compile(  # noqa: PLR0913 - the old API's name and parameters
    model: torch.nn.Module,
    example_args: torch.Tensor | TensorPlaceholder | Sequence[torch.Tensor | TensorPlaceholder],
    output_type: str | OutputType = OutputType.TORCH,
    use_tracing: bool = False,
    ignore_traced_shapes: bool = False,
    backend_legal_ops: Sequence[str] | None = None,
    extra_library: str | os.PathLike | None = None,
    verbose: bool = False,
    opt: str | None = None,
    out_dir: str | os.PathLike = "harness-out",
    keep_weights: bool = False,
) -> ir.Module:
    """Imports ``model`` and lowers it to ``output_type``; returns the MLIR module.

    On a failure, the failing stage's input is saved as text under a unique folder of
    ``out_dir`` (weights elided unless ``keep_weights``, which also keeps the exact bytecode),
    and ``PipelineFailure`` names the harness commands that dig into it."""
    kind = OutputType.get(output_type)
    builder = import_torchscript(model, example_args, use_tracing=use_tracing,
                                 ignore_traced_shapes=ignore_traced_shapes)
    if kind is OutputType.RAW:
        return builder.module
    per_stage = _stage_options(backend_legal_ops, extra_library)
    pipelines = pipelines_module.default()
    stages = pipelines.for_output_type(kind.value)
    name = builder.module.operation.attributes["torch.debug_module_name"]
    module_name = ir.StringAttr(name).value if name is not None else "Module"
    workdir = unique_dir(f"harness-{module_name}-")
    try:  # the stages' files: removed however the run ends (an error, Ctrl-C)
        weights = builder.last_import.tensor_bytes
        as_bytecode = weights > TEXT_INPUT_MAX_WEIGHT_BYTES
        current = workdir / (f"{module_name}.mlirbc" if as_bytecode else f"{module_name}.mlir")
        write_module(builder.module, current, WriteOptions(keep_weights=True, bytecode=as_bytecode))
        context = builder.context

        def starting(name: str) -> None:
            if verbose:
                print(f"harness: running {name} in {workdir}", file=sys.stderr)

        results = run_stages(current, [stage.name for stage in stages], workdir, stem=module_name,
                             options=StageOptions(opt=opt, debug_info=False, bytecode=True,
                                                  options=per_stage),
                             hooks=StageHooks(starting=starting))
        failed = results[-1]
        if not failed.ok:
            saved = _save_failing_input(builder if len(results) == 1 else Path(failed.input_path),
                                        out_dir, module_name, stages[len(results) - 1].name,
                                        keep_weights, opt)
            raise _failure(failed, stages[len(results) - 1], saved, opt)
        current = Path(failed.output_path)
        if kind is OutputType.STABLEHLO:
            from torch_mlir._mlir_libs import _stablehlo

            _stablehlo.register_dialect(context)
        load_output_dialects(context, stages[-1].textual())
        return ir.Module.parse(current.read_bytes(), context)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _stage_options(backend_legal_ops: Sequence[str] | None,
                   extra_library: str | os.PathLike | None) -> dict[str, dict[str, object]]:
    """The old API's two options as pass options of torchscript-to-torch; a bad library path
    is refused here."""
    per_stage: dict[str, dict[str, object]] = {}
    if backend_legal_ops:
        per_stage.setdefault("torchscript-to-torch", {})["backend-legal-ops"] = list(backend_legal_ops)
    if extra_library is None:
        return per_stage
    if not isinstance(extra_library, (str, os.PathLike)):
        raise UsageError(
            "extra_library must be the path of an MLIR file of shape/dtype functions (the "
            "pipeline's extra-library option); generate it once and pass its path."
        )
    if not Path(extra_library).is_file():
        raise InputFileError(f"extra_library file {extra_library} does not exist. Check the path.")
    per_stage.setdefault("torchscript-to-torch", {})["extra-library"] = os.fspath(
        Path(extra_library).resolve())
    return per_stage


def _failure(failed: StageResult, stage: Pipeline, saved: Path, opt: str | None) -> PipelineFailure:
    """The error for a failed stage: what it was doing, torch-mlir-opt's words, the command that
    runs it again on the saved input, and the harness commands that dig into it."""
    record = failed.record
    detail = record.stderr.strip() or f"torch-mlir-opt exited with {record.outcome.value}"
    if record.signal:
        detail = f"torch-mlir-opt crashed with {record.signal}.\n" + detail
    return PipelineFailure(_DESCRIPTIONS.get(stage.name, f"Running {stage.pass_name}"), detail,
                           repro_command(failed.pipeline, saved, record.binary), str(saved),
                           next_steps=_next_steps(saved, failed.pipeline, record.binary, opt))
