"""One model through one frontend, stage by stage, into a :class:`FrontendPort`.

TorchScript (the mission's path): trace -> the project's importer -> torchscript-to-torch.
FX: torch.export -> the wheel's fx_importer -> fx-to-torch. ONNX: FX's export ->
torch.onnx.export -> the wheel's onnx_importer -> onnx-to-torch. This module makes the program
and imports it; :mod:`.lowering` takes the import to each target and backend asked for. The
first failing stage ends the path and is diagnosed (:mod:`.diagnose`); every stage is timed and
shown as it runs.
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import replace
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Literal, NoReturn

import torch

from harness.compiler.mlir import WriteOptions, write_module
from harness.compiler.outcomes import Outcome
from harness.frontends.base import (ExportSettings, Frontend, MakeRequest, Payload, Program, frontend,
                                    run_exported)
from harness.frontends.names import FrontendName
from harness.models.dynamic import SpecializationLog, export_shapes

from harness.fixes.base import BlockerSeen, ModuleFix
from harness.fixes.catalog import by_name
from harness.fixes.steps import FixStep

from .diagnose import (
    STATE_MAPPING,
    exception_blocker,
    conversion_blocker,
    missing_buffers_explanation,
    timeout_blocker,
)
from .dynamic import export_blocker, import_blocker, trace_frozen
from .lowering import ImportForTargets, bytecode, for_backend, for_target, lower, target_folder
from .module_fixes import export_blockers, fix_module, trace_blockers, undo
from .options import PortOptions
from .progress import Progress, StageTimeout, time_limit
from .record import (
    Blocker,
    DynamicDims,
    FrontendPort,
    PortOutcome,
    PortStage,
    StageError,
    StageOutcome,
    StageRecord,
)
from .subject import Subject

class _Stopped(Exception):
    """A Python stage failed: the port of this frontend ends there (already recorded).
    ``exported`` and ``failure``: a failed import's export and its error, kept for ``--fix``:
    where a module fix can make its change on the program the import failed on, the frontend
    imports that again (:attr:`Frontend.reimport`) instead of making the fixed module's program;
    the export, which the importer did not touch, is what PyTorch runs to compare."""

    exported: torch.export.ExportedProgram | None = None
    failure: BaseException | None = None


def port_frontend(subject: Subject, name: FrontendName, folder: Path, options: PortOptions,
                  progress: Progress) -> FrontendPort:
    """``subject`` through frontend ``name`` to the first target of ``options.targets``."""
    return port_targets(subject, name, folder, replace(options, targets=options.targets[:1]),
                        progress)[0]


def port_targets(subject: Subject, name: FrontendName, folder: Path, options: PortOptions,
                 progress: Progress) -> list[FrontendPort]:
    """``subject`` through frontend ``name``, files in ``folder``: one port per target asked
    for (``options.targets``), which share the trace or export, the import and the torch
    backend contract (made once); never raises for a failure of the model or the compiler
    (those are the record's outcome)."""
    chosen = frontend(name)
    targets = options.targets[:1] if options.torch_only else options.targets
    backends = options.backends[:1] if options.torch_only or not options.numerics else options.backends
    base, folder = folder, target_folder(folder, targets[0])  # each target's beside the frontend's
    port = FrontendPort(frontend=name, outcome=PortOutcome.FAILS, folder=str(folder),
                        target=targets[0], backend=backends[0])
    label = f"[{subject.name} {port.path}]"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        try:
            program, run_program = _program(subject, name, port, options, progress, label)
            if options.fix:
                program, run_program = _fixed_trace(subject, name, program, run_program, port,
                                                    options, progress, label)
            ir_path = _import(subject, chosen, program, folder, port, options, progress, label)
        except _Stopped as stopped:
            if not options.fix:
                raise
            program, run_program, ir_path = _fixed_import(subject, chosen, folder, port, options,
                                                          progress, label, stopped)
    except _Stopped:  # every target and backend stops at the same Python stage
        firsts = [port, *(for_backend(port, b) for b in backends[1:])]
        return firsts + [for_target(p, t) for t in targets[1:] for p in firsts]
    imported = ImportForTargets(chosen, program, run_program, ir_path)
    before = copy.deepcopy(port)
    shared, ports = lower(subject, imported, port, options, progress, None)
    for target in targets[1:]:
        if shared is not None and not shared.ok:  # the torch backend contract failed: the same for all
            ports += [for_target(p, target) for p in ports if p.target is targets[0]]
            continue
        other = for_target(before, target)
        other.folder = str(target_folder(base, target))
        Path(other.folder).mkdir(parents=True, exist_ok=True)
        ports += lower(subject, imported, other, options, progress, shared)[1]
    return ports


def _program(subject: Subject, name: FrontendName, port: FrontendPort, options: PortOptions,
             progress: Progress, label: str,
             module: torch.nn.Module | None = None) -> tuple[Program, Callable | None]:
    """The program frontend ``name``'s importer takes, and how to run it outside torch-mlir
    (to tell a value the frontend froze or an exporter got wrong from one torch-mlir got wrong):
    its source's trace or export, then its own conversion when it has one (ONNX:
    torch.onnx.export, a stage of its own, run by onnxruntime)."""
    chosen = frontend(name)
    conversion = chosen.conversion
    if conversion is not None and conversion.given is not None and conversion.takes(subject.program_file):
        assert subject.program_file is not None
        program = conversion.given(Program(subject.name, None, subject.inputs.tensors),
                                   subject.program_file)
    else:
        program, run_program = _source_program(subject, chosen.source, port, options, progress,
                                               label, module,
                                               conversion.export if conversion is not None
                                               else ExportSettings.DEFAULT)
        if conversion is None:
            return program, run_program
        stage = PortStage.parse(conversion.stage)
        with _PythonStage(port, stage, options, progress, label,
                          blocker=lambda error: conversion_blocker(stage, error)):
            program = conversion.convert(program, Path(port.folder))
    runs = conversion.runner(program)
    return program, lambda inputs: runs(inputs.tensors)


def _source_program(subject: Subject, name: FrontendName, port: FrontendPort, options: PortOptions,
                    progress: Progress, label: str, module: torch.nn.Module | None = None,
                    export: ExportSettings = ExportSettings.DEFAULT) -> tuple[Program, Callable | None]:
    """The frontend's own program (its :class:`~harness.frontends.base.Maker`: a trace, an
    export), a stage of its own, and how to run it in PyTorch. ``module``: a module fixed by
    ``--fix``, made again instead of ``subject.eager``; ``export``: how a conversion of it wants
    torch.export run (ONNX: as torch.onnx.export's capture; each frontend's port makes its own
    program, so the FX port's export keeps torch.export's defaults)."""
    maker = frontend(name).maker
    assert maker is not None, f"{name.value} makes no program of its own"
    stage = PortStage.parse(maker.stage)
    eager = module or subject.eager
    guarded = subject.dynamic and maker.guards_sizes
    log = SpecializationLog() if guarded else None
    request = MakeRequest(subject.name, eager, subject.inputs.tensors, trace=subject.trace,
                          retrace=module is not None, export=export,
                          dynamic_shapes=export_shapes(subject.dynamic_axes, eager) if guarded else None)
    # The subject's own module, static: torch.export's settings change nothing there (no size
    # is symbolic), so the FX port's export is the ONNX port's too (tiny GPT-2: 1 s of ONNX's 10).
    key = (name.value, export.value if guarded else "static")
    shared = subject.made_programs.get(key) if module is None else None
    with (_PythonStage(port, stage, options, progress, label,
                       blocker=lambda error: export_blocker(error, log) if log else None),
          log or contextlib.nullcontext()):
        made = shared or maker.make(request)
    if module is None and made.shareable:
        subject.made_programs[key] = made
    if made is shared:
        port.notes.append(f"{maker.stage}: the {name.value} port's program of this model, "
                          "reused (static shapes: made once for every frontend that starts "
                          "from it)")
    port.notes += made.notes
    program = made.program
    script = program.script_module()
    if subject.dynamic and maker.freezes_sizes and script is not None:
        frozen = trace_frozen(script, subject)
        port.dynamic = DynamicDims(frozen=frozen)
        if frozen:
            port.notes.append("--dynamic: the trace froze a size (it fails or changes shape on "
                              "the second set), so every dimension stays static; frozen at "
                              + ", ".join(frozen[:3]))
        else:
            program = program.with_dynamic_axes(tuple(tuple(sorted(a))
                                                      for a in subject.dynamic_axes))
    return program, lambda inputs: made.run(inputs.tensors)


def _fixed_trace(subject: Subject, name: FrontendName, program: Program, run_program: Callable | None,
                 port: FrontendPort, options: PortOptions, progress: Progress,
                 label: str) -> tuple[Program, Callable | None]:
    """``--fix`` on the trace or the export: what no pass converts (``prim::PythonOp``, MoE
    experts' ``aten.histc`` and ``transformers.grouped_mm_fallback``) answered by a module fix
    (:mod:`.module_fixes`), and the fixed module traced or exported again. A program with
    none (or converted already: ONNX's file) is returned as it is."""
    script = program.script_module()
    exported = program.export_program() if script is None else None
    blockers = (trace_blockers(script) if script is not None
                else export_blockers(exported) if exported is not None else [])
    if not blockers:
        return program, run_program
    with progress.stage(f"{label} fix the module"):
        module, kept = fix_module(subject, blockers, port, script=script)
    if module is None:
        return program, run_program
    try:
        return _program(subject, name, port, options, progress, label, module)
    finally:
        undo(kept)


def _fixed_import(subject: Subject, chosen: Frontend, folder: Path, port: FrontendPort,
                  options: PortOptions, progress: Progress, label: str,
                  stopped: _Stopped) -> tuple[Program, Callable | None, Path]:
    """``--fix`` after a failed export or import: the module fix that answers its error
    (``persistent-buffers`` for "Could not find state mapping for buffer"), then export and
    import again. Raises :class:`_Stopped` (the first failure stands) when none answers.
    When persistent-buffers alone answers and the failed import's decomposed program is at
    hand (``stopped``), that program is imported again with its buffers persistent (the fixed
    module's export, without exporting and decomposing it again: tiny BERT 3.6 s -> 0.04 s)."""
    failed = port.stages[-1]
    first_export = next((s for s in port.stages if s.name == PortStage.EXPORT and s.ok), None)
    seen = [BlockerSeen(message=" ".join(filter(None, (b.message, b.explanation))),
                        stage=failed.name.value) for b in port.blockers]
    with progress.stage(f"{label} fix the module"):
        module, kept = fix_module(subject, seen, port)
    if module is None:
        raise _Stopped(failed.name)
    first = ", ".join(f"{s.name} {s.seconds:.2f} s{'' if s.ok else ' (failed)'}"
                      for s in port.stages)
    port.notes.append(f"Before --fix: {first}: {port.blockers[0].message[:200]}")
    port.stages, port.blockers, port.failed_stage = [], [], None
    reused = _reimported(chosen, stopped, kept) if first_export is not None else None
    try:
        if reused is None or first_export is None or stopped.exported is None:
            program, run_program = _program(subject, chosen.name, port, options, progress, label,
                                            module)
        else:
            port.stages.append(first_export)  # the export that stands: not run again
            port.notes.append(f"--fix: the program the import failed on was imported again with "
                              f"{kept[0].fix}'s change made on it (the same IR as the fixed "
                              "module's, which is not made again)")
            program = Program(subject.name, module, subject.inputs.tensors, reused)
            # the import replaces the program's placeholders: PyTorch runs the export (a
            # program-level fix changes what the program holds, not what forward computes)
            runs = run_exported(stopped.exported)
            run_program = lambda inputs: runs(inputs.tensors)  # noqa: E731
        ir_path = _import(subject, chosen, program, folder, port, options, progress, label)
    finally:
        undo(kept)
    return program, run_program, ir_path


def _reimported(chosen: Frontend, stopped: _Stopped, kept: list[FixStep]) -> Payload | None:
    """The frontend's payload to import again after ``--fix``: only when one module fix was kept
    and it makes its change on the program too, and the frontend can import the program its
    import failed on again (FX); None otherwise (the fixed module's program is made anew)."""
    if chosen.reimport is None or stopped.failure is None or stopped.exported is None or len(kept) != 1:
        return None
    fix = by_name(kept[0].fix)
    return chosen.reimport(stopped.failure, fix.on_export) if isinstance(fix, ModuleFix) else None


def _import(subject: Subject, chosen: Frontend, program: Program, folder: Path, port: FrontendPort,
            options: PortOptions, progress: Progress, label: str) -> Path:
    stage = PortStage.IMPORT
    as_bytecode = bytecode(subject, options)
    path = folder / f"{subject.name}.torch.{'mlirbc' if as_bytecode else 'mlir'}"
    explanation = ""
    failure: BaseException | None = None
    own = import_blocker if subject.dynamic else None  # a node only dynamic shapes make
    try:
        with _PythonStage(port, stage, options, progress, label, explain=lambda e: explanation,
                          blocker=own):
            try:
                with torch.no_grad():
                    imported = chosen.import_program(program)
            except Exception as error:
                exported, failure = program.export_program(), error
                if STATE_MAPPING in str(error.__cause__ or error) and exported is not None:
                    explanation = missing_buffers_explanation(exported)
                raise
            write_module(imported.module, path, WriteOptions(keep_weights=options.weights_kept,
                                                              bytecode=as_bytecode))
    except _Stopped as stopped:
        stopped.exported, stopped.failure = program.export_program(), failure
        raise
    port.stages[-1].output = str(path)
    return path


class _PythonStage:
    """A stage run in this process: timed, shown, bounded by ``--timeout``; an exception or a
    timeout records the stage as failed, with its blocker, and stops this frontend."""

    def __init__(self, port: FrontendPort, stage: PortStage, options: PortOptions, progress: Progress,
                 label: str, explain: Callable[[BaseException], str] | None = None,
                 blocker: Callable[[BaseException], Blocker | None] | None = None):
        self.port, self.stage, self.options = port, stage, options
        self.progress, self.label, self.explain = progress, label, explain
        self.blocker = blocker  # a blocker of its own for an error (None: the exception's)

    def __enter__(self) -> _PythonStage:
        self._step = self.progress.stage(f"{self.label} {self.stage}")
        self.step = self._step.__enter__()
        self._limit = time_limit(self.options.timeout_s)
        self._limit.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        self._limit.__exit__(None, None, None)
        if error is not None and not isinstance(error, (Exception, StageTimeout)):
            self._step.__exit__(kind, error, tb)
            return False  # KeyboardInterrupt and the like go on
        self.step.ok = error is None
        self._step.__exit__(None, None, None)
        if error is None:
            self.port.stages.append(StageRecord(self.stage, True, self.step.seconds))
            return False
        outcome: StageOutcome
        if isinstance(error, StageTimeout):
            blocker, outcome = timeout_blocker(self.stage, error.seconds), Outcome.TIMEOUT
        else:
            explanation = self.explain(error) if self.explain else ""
            own = self.blocker(error) if self.blocker else None
            blocker = own or exception_blocker(self.stage, error, explanation)
            outcome = StageError.IN_PYTHON
        _fail(self.port, self.stage, self.step.seconds, blocker, outcome)


def _fail(port: FrontendPort, stage: PortStage, seconds: float, blocker: Blocker,
          outcome: StageOutcome = StageError.IN_PYTHON) -> NoReturn:
    port.stages.append(StageRecord(stage, False, seconds, outcome, detail=blocker.message))
    port.failed_stage = stage
    port.blockers = [blocker]
    raise _Stopped(stage)
