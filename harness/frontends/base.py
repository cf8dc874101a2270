"""One interface for every frontend: a ``Program`` in, a verified torch-dialect module out.

"Import, verify, name, write" used to be written once per caller (port, emit, benchmarks);
it is written here once. A frontend also names the pipeline that takes its IR to the backend
contract, since the two differ (TorchScript object graphs vs FX functions).

A program is the part every frontend shares (the name, the eager module, the examples) and a
payload of the frontend's own class (``script.ScriptPayload``, ``fx.FxPayload``,
``onnx.OnnxPayload``): a new frontend adds its class, not fields every other frontend carries.
What a caller outside ``frontends/`` reads of a payload it reads through :class:`Payload`, so it
never asks which frontend made the program.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import torch
from torch_mlir import ir

from harness.enums import ParsableEnum
from harness.errors import UsageError

from .fx import FxPayload, reimport as fx_reimport
from .names import FrontendName
from .onnx import OnnxPayload
from .script import ScriptPayload

_Own = TypeVar("_Own")


@runtime_checkable
class Payload(Protocol):
    """A frontend's own program, as the frontend's module defines it. What others read of it
    they read here, each answer None where the program has no such thing (the port's trace
    checks read the script; its explanation of a missing buffer the export; the Python line
    behind an ONNX node the file)."""

    def script_module(self) -> torch.jit.ScriptModule | None:
        """The TorchScript module (traced or scripted) the program is."""
        ...

    def export_program(self) -> torch.export.ExportedProgram | None:
        """The ``torch.export`` program it is, or was converted from."""
        ...

    def program_file(self) -> Path | None:
        """The file the frontend imports (an .onnx file)."""
        ...

    def with_dynamic_axes(self, axes: tuple[tuple[int, ...], ...]) -> Payload:
        """The payload importing ``axes`` of each example as -1 (``--dynamic``, once the port
        found the program kept them); one whose program holds its own dynamic sizes (an
        export's) is returned as it is."""
        ...


@dataclass
class Program:
    """A model as the frontends take it: the eager module, its example inputs, and the
    frontend's own program (``payload``: a trace, an export, an .onnx file), or None when the
    frontend makes it from the eager module itself (FX exports it)."""

    name: str                                   # torch.debug_module_name of the IR
    eager: torch.nn.Module | None
    examples: tuple[torch.Tensor, ...]
    payload: Payload | None = None

    def own(self, kind: type[_Own]) -> _Own | None:
        """The payload when it is a ``kind``: how a frontend reads its own program (None: the
        program is another frontend's, or has none)."""
        return self.payload if isinstance(self.payload, kind) else None

    def script_module(self) -> torch.jit.ScriptModule | None:
        """The TorchScript module the program is (see :class:`Payload`)."""
        return self.payload.script_module() if self.payload is not None else None

    def export_program(self) -> torch.export.ExportedProgram | None:
        """The ``torch.export`` program it is or was converted from (see :class:`Payload`)."""
        return self.payload.export_program() if self.payload is not None else None

    def program_file(self) -> Path | None:
        """The file the frontend imports (see :class:`Payload`)."""
        return self.payload.program_file() if self.payload is not None else None

    def with_dynamic_axes(self, axes: tuple[tuple[int, ...], ...]) -> Program:
        """The program importing ``axes`` of each example as -1 (see :class:`Payload`)."""
        if self.payload is None:
            return self
        return replace(self, payload=self.payload.with_dynamic_axes(axes))


@dataclass
class Imported:
    module: ir.Module
    frontend: FrontendName
    seconds: float
    stats: object | None = None  # the TorchScript importer's ImportStats
    notes: list[str] = field(default_factory=list)


class ExportSettings(ParsableEnum):
    """How torch.export runs for a frontend's program.

    - ``DEFAULT``: torch.export's defaults, as upstream's fx_importer e2e config exports. Duck
      sizing gives sizes of equal example value one symbol, and a guard on a dynamic size
      refuses the export.
    - ``ONNX_CAPTURE``: as torch.onnx.export's own capture of a module runs torch.export (torch
      2.13 ``_capture_strategies``): ``backed_size_oblivious=True`` and
      ``prefer_deferred_runtime_asserts_over_guards=True``. Upstream's onnx e2e config hands the
      module to torch.onnx.export, so its programs are made so. With the defaults, 6 upstream
      e2e tests failed through the harness's ONNX path only (a convolution's sizes made one
      symbol and its output size 1; a guard the exporter's decomposition trips on); with these,
      all 6 pass. The FX frontend keeps the defaults: with these, its fx_importer meets the
      deferred asserts' ``sym_not`` on ``port gpt2 --dynamic batch,seq`` (docs/conformance.md).
    """

    DEFAULT = "default"
    ONNX_CAPTURE = "onnx-capture"


@dataclass(frozen=True)
class Conversion:
    """A frontend that starts from another one's program and converts it (ONNX: torch.onnx.export
    of the FX frontend's export), as a stage of its own."""

    source: FrontendName   # whose program it starts from
    stage: str             # the stage's name in the record (onnx-export)
    convert: Callable[[Program, Path], Program]  # the program, and the folder its files go in
    runner: Callable[[Program], Callable[[Sequence[torch.Tensor]], Sequence[torch.Tensor]]]
    check: Callable[[], None]  # the one-paragraph error when what it needs is not installed
    suffix: str = ""       # the file its conversion writes (.onnx): a model given as one is taken
    given: Callable[[Program, Path], Program] | None = None  # ... as it is, by this
    export: ExportSettings = ExportSettings.DEFAULT  # how the source's torch.export runs for it

    def takes(self, path: Path | None) -> bool:
        """Whether a model given as the file ``path`` is this frontend's own program."""
        return path is not None and bool(self.suffix) and path.suffix.lower() == self.suffix


@dataclass(frozen=True)
class MakeRequest:
    """What a frontend makes its program from: the eager model and its example inputs."""

    name: str
    eager: torch.nn.Module
    examples: tuple[torch.Tensor, ...]
    # the model driver's own tracer (its settings; notes on how it traced); None: the model has
    # none to offer (the frontend refuses it), unless ``retrace`` (a module --fix changed)
    trace: Callable[[], tuple[torch.jit.ScriptModule, list[str]]] | None = None
    retrace: bool = False
    # --dynamic: torch.export's dynamic_shapes (one Dim per named dimension); None: static
    dynamic_shapes: dict[str, Any] | tuple[Any, ...] | list[Any] | None = None
    # the export as torch.onnx.export's own capture makes it (ExportSettings.ONNX_CAPTURE): what
    # a conversion of the program asks for (Conversion.export); torch.export's defaults otherwise
    export: ExportSettings = ExportSettings.DEFAULT


@dataclass
class Made:
    """A frontend's program and how PyTorch runs it (to tell what the frontend froze or got
    wrong from what torch-mlir got wrong)."""

    program: Program
    run: Callable[[Sequence[torch.Tensor]], Any]
    notes: list[str] = field(default_factory=list)
    # whether another frontend that starts from the same source may take it (False: made in a
    # way only this frontend's settings allow, the ONNX capture's strict fallback)
    shareable: bool = True


@dataclass(frozen=True)
class Maker:
    """How a frontend makes its program from the model, a stage of the record of its own."""

    stage: str                      # the record's stage name (trace, export)
    make: Callable[[MakeRequest], Made]
    # the program reads sizes as Python ints (a trace): a --dynamic size may be frozen in it
    # silently, so the port checks it on the second input set before it asks for -1 bounds
    freezes_sizes: bool = False
    # the program refuses a dynamic size it cannot keep (torch.export's guards): its refusal
    # is a blocker that names the guard's Python line
    guards_sizes: bool = False


@dataclass(frozen=True)
class Frontend:
    name: FrontendName
    torch_pipeline: str  # pipelines.toml name that reaches the backend contract from this IR
    description: str
    run: Callable[[Program], tuple[ir.Module, object | None]]
    payload: type[Payload]  # its own program's class: what ``run`` reads of a Program
    conversion: Conversion | None = None  # made from another frontend's program (ONNX)
    maker: Maker | None = None  # how it makes its program (None: a conversion of another's)
    program_name: str = "program"  # what the port calls the program when it runs it in PyTorch
    # what a program that differs from eager by itself means, after "differs from eager by X
    # here": who got the values wrong
    program_blame: str = ": the frontend froze the difference in, not torch-mlir"
    # its raw import types the entry's arguments (TorchScript's types them by bounds, behind
    # the module argument: the signature is read only after the torch pipeline)
    typed_import: bool = True
    notes_heading: str = ""  # the port's notes on making the program, printed under it ("": not)
    # After its import failed with an error: the program it failed on, changed by ``rewrite``
    # (a program-level form of a module fix), as its own payload to import again instead of
    # making the program anew (FX: the failed import's decomposed program, not exported and
    # decomposed again: tiny BERT 3.6 s -> 0.04 s); None when it cannot (or has none).
    reimport: Callable[[BaseException, Callable[[Any], Any]], Payload | None] | None = None

    @property
    def source(self) -> FrontendName:
        """The frontend whose way of making the program (trace, export) this one starts with."""
        return self.conversion.source if self.conversion is not None else self.name

    def import_program(self, program: Program) -> Imported:
        start = time.monotonic()
        module, stats = self.run(program)
        module.operation.attributes["torch.debug_module_name"] = ir.StringAttr.get(
            program.name, module.context)
        return Imported(module, self.name, time.monotonic() - start, stats)


@dataclass(frozen=True)
class _Bound:
    """An argument's bound for the TorchScript annotator: a shape with -1 where dynamic."""

    shape: list[int]
    dtype: torch.dtype


def _torchscript(program: Program) -> tuple[ir.Module, object]:
    from .torchscript import ImportOptions, ModuleBuilder, forward_annotator

    own = program.own(ScriptPayload)
    if own is None:
        raise UsageError(f"the TorchScript frontend needs a traced or scripted module for "
                         f"'{program.name}'; trace it first (torch.jit.trace) or use --frontend fx.")
    builder = ModuleBuilder()
    examples: list[object] = list(program.examples)
    for i, axes in enumerate(own.dynamic_axes[:len(examples)]):
        if axes:  # the annotator reads .shape and .dtype: -1 is a dynamic size
            t = program.examples[i]
            examples[i] = _Bound([-1 if a in axes else d for a, d in enumerate(t.shape)], t.dtype)
    # dynamic: the trace's own value types carry the traced sizes; read none of them (upstream's
    # torch_mlir.compile(ignore_traced_shapes=True)), so only the annotated bounds type arguments
    stats = builder.import_module(own.module, forward_annotator(own.module, examples),
                                  ImportOptions(ignore_existing_tensor_shapes_and_dtypes=any(
                                      own.dynamic_axes)))
    builder.verify()
    return builder.module, stats


def _fx(program: Program) -> tuple[ir.Module, None]:
    from .fx import export_and_import

    own = program.own(FxPayload)
    source = own.exported if own is not None else program.eager
    if source is None:
        raise UsageError(f"the FX frontend needs the eager module of '{program.name}'.")
    return export_and_import(source, program.examples, name=program.name,
                             decomposed=own is not None and own.decomposed), None


def _onnx(program: Program) -> tuple[ir.Module, None]:
    from .onnx import import_file

    own = program.own(OnnxPayload)
    if own is None:
        raise UsageError(f"the ONNX frontend needs the .onnx file of '{program.name}' "
                         "(torch.onnx.export of its torch.export program).")
    return import_file(own.path), None


def _to_onnx(program: Program, folder: Path) -> Program:
    from .onnx import export

    own = program.own(FxPayload)
    if own is None:
        raise UsageError(f"the ONNX frontend exports '{program.name}' from its torch.export program.")
    path = export(own.exported, program.examples, folder / f"{program.name}.onnx", name=program.name)
    return replace(program, payload=OnnxPayload(path, own.exported))


def _onnx_runner(program: Program) -> Callable[[Sequence[torch.Tensor]], list[torch.Tensor]]:
    from .onnx import runner

    own = program.own(OnnxPayload)
    assert own is not None
    return runner(own.path)


def _onnx_check() -> None:
    from .onnx import check

    check()


def _trace(request: MakeRequest) -> Made:
    """TorchScript's program: the driver's trace, or (a module --fix changed) the module traced
    again as torch.jit.trace(strict=False, check_trace=False)."""
    if request.trace is not None and not request.retrace:
        script, notes = request.trace()
    elif request.retrace:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            script = torch.jit.trace(request.eager, request.examples, strict=False,
                                     check_trace=False)
        notes = ["The fixed module was traced again as torch.jit.trace(strict=False, "
                 "check_trace=False)."]
    else:
        raise ValueError(f"{request.name} has no trace: port it through --frontend fx")
    return Made(Program(request.name, request.eager, request.examples, ScriptPayload(script)),
                lambda tensors: script(*tensors), notes)


def _export(request: MakeRequest) -> Made:
    """FX's program: torch.export (non-strict), with --dynamic's shapes, under the settings the
    request asks for (:class:`ExportSettings`). As torch.onnx.export's capture, the ONNX
    frontend's tries ``strict=True`` where the non-strict export fails (torch 2.13's second
    capture strategy: TorchDynamo reads ``int(tensor)`` as a value the graph carries, where the
    non-strict trace guards on data it cannot see); the first error stands if that fails too."""
    capture = request.export is ExportSettings.ONNX_CAPTURE
    notes: list[str] = []

    def export(strict: bool) -> torch.export.ExportedProgram:
        with (warnings.catch_warnings(), torch.no_grad(),
              torch.fx.experimental._config.patch(backed_size_oblivious=capture)):  # type: ignore[attr-defined]
            warnings.simplefilter("ignore", FutureWarning)  # torch.export's own deprecations
            return torch.export.export(request.eager, request.examples, strict=strict,
                                       dynamic_shapes=request.dynamic_shapes,
                                       prefer_deferred_runtime_asserts_over_guards=capture)

    try:
        exported = export(strict=False)
    except Exception as error:  # torch.export's errors are many; the strict try decides
        if not capture:
            raise
        try:
            exported = export(strict=True)
        except Exception:
            raise error from None
        first = (str(error).strip().splitlines() or [""])[0][:200]
        notes.append(f"export: the non-strict torch.export failed ({type(error).__name__}: "
                     f"{first}); strict=True exported it, as torch.onnx.export's capture does next")
    return Made(Program(request.name, request.eager, request.examples, FxPayload(exported)),
                run_exported(exported), notes, shareable=not notes)


def run_exported(exported: torch.export.ExportedProgram) -> Callable[[Sequence[torch.Tensor]], Any]:
    """How PyTorch runs ``exported``: its module made once, at the first run (tiny BERT's
    ``module()``: 0.05 s, which each of the two input sets paid)."""
    made: list[torch.nn.Module] = []

    def run(tensors: Sequence[torch.Tensor]) -> Any:
        if not made:
            made.append(exported.module())
        return made[0](*tensors)

    return run


FRONTENDS: dict[FrontendName, Frontend] = {
    FrontendName.TORCHSCRIPT: Frontend(
        FrontendName.TORCHSCRIPT, "torchscript-to-torch",
        "torch.jit.trace -> the project's TorchScript importer", _torchscript, ScriptPayload,
        maker=Maker("trace", _trace, freezes_sizes=True), program_name="trace",
        program_blame=": the frontend froze the difference in (see the TracerWarnings), not "
                      "torch-mlir", typed_import=False, notes_heading="trace"),
    FrontendName.FX: Frontend(
        FrontendName.FX, "fx-to-torch", "torch.export -> the torch-mlir wheel's fx_importer", _fx,
        FxPayload, maker=Maker("export", _export, guards_sizes=True), program_name="exported program",
        program_blame=": the frontend froze the difference in (see the TracerWarnings), not "
                      "torch-mlir", reimport=fx_reimport),
    FrontendName.ONNX: Frontend(
        FrontendName.ONNX, "onnx-to-torch",
        "torch.export -> torch.onnx.export -> the torch-mlir wheel's onnx_importer", _onnx,
        OnnxPayload,
        Conversion(FrontendName.FX, "onnx-export", _to_onnx, _onnx_runner, _onnx_check, ".onnx",
                   lambda program, path: replace(program, payload=OnnxPayload(path)),
                   export=ExportSettings.ONNX_CAPTURE),
        program_name="ONNX file in onnxruntime",
        program_blame=", past the float64 rule: the ONNX exporter got it wrong, not torch-mlir"),
}


def frontend(name: str | FrontendName) -> Frontend:
    return FRONTENDS[FrontendName.parse(name)]


def frontends_taking(path: Path | None, asked: Sequence[FrontendName]) -> tuple[FrontendName, ...]:
    """The frontends a model runs through: those ``asked``, or for a model given as a program
    file (an .onnx file) the ones asked that take it, else every one that does."""
    if path is None:
        return tuple(asked)
    taking = [f.name for f in FRONTENDS.values() if f.conversion is not None and f.conversion.takes(path)]
    return tuple(f for f in asked if f in taking) or tuple(taking)
