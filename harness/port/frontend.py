"""One model through one frontend, stage by stage, into a :class:`FrontendPort`.

TorchScript (the mission's path): trace -> the project's importer -> torchscript-to-torch.
FX: torch.export -> the wheel's fx_importer -> fx-to-torch. Then each target asked for
(harness.compiler.targets: linalg, TOSA, StableHLO) from that one torch backend contract, on to
linalg-on-tensors, and the RefBackend against eager (:mod:`.verify`). The first failing stage
ends the path and is diagnosed (:mod:`.diagnose`); every stage is timed and shown as it runs.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from dataclasses import dataclass, replace
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import torch

from harness.compiler.mlir import WriteOptions, write_module
from harness.compiler.outcomes import Outcome
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions
from harness.compiler.targets import DEFAULT_TARGETS, LINALG_LOWERING, Target, target_path
from harness.execute.backend_names import BackendName
from harness.execute.backends import backend
from harness.execute.lowering import Driver, driver_for, run_stage
from harness.compiler.stages import (
    StageHooks,
    StageOptions,
    StageResult,
    public_functions,
    run_stages,
)
from harness.frontends.base import Frontend, Program, frontend
from harness.frontends.fx import ImportFailed
from harness.frontends.names import FrontendName
from harness.models.dynamic import SpecializationLog, export_shapes

from harness.fixes.base import BlockerSeen
from harness.fixes.buffers import PersistentBuffers, persistent_in_program

from .diagnose import (
    STATE_MAPPING,
    exception_blocker,
    missing_buffers_explanation,
    pipeline_blockers,
    pipeline_commands,
    reproduce_command,
    timeout_blocker,
    with_trace_stacks,
)
from .dynamic import dynamic_dims, export_blocker, import_blocker, trace_frozen
from .module_fixes import fix_module, trace_blockers, undo
from .verify import NumericsRun, PortedIR, Where, check_numerics
from .options import TEXT_WEIGHTS_LIMIT_MB, PortOptions
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

if TYPE_CHECKING:
    from harness.fixes.loop import PriorRun
    from harness.models.hf_inputs import InputSet

class _Stopped(Exception):
    """A Python stage failed: the port of this frontend ends there (already recorded).
    ``exported`` and ``decomposed``: the failed FX import's program and its decomposition, kept
    where persistent-buffers answers the failure (the fix then imports the decomposition again
    instead of exporting the fixed module; the export, which the importer did not touch, is
    what PyTorch runs to compare)."""

    exported: torch.export.ExportedProgram | None = None
    decomposed: torch.export.ExportedProgram | None = None


def _ported_ir(ir_path: Path, torch_pipeline: str, lowering: tuple[str, ...], target: Target,
               results: list[StageResult]) -> PortedIR:
    """What the numbers check reads; where a torch-IR fix put another contract in place before
    the target's lowering, the numbers' diagnosis reads that contract (what lowered), not the
    import."""
    ir = PortedIR(torch_ir=ir_path, torch_pipeline=torch_pipeline, lowering=lowering,
                  contract_ir=Path(results[0].output_path), target_ir=Path(results[1].output_path),
                  linalg=Path(results[-1].output_path), target=target)
    lowered_from = results[1].input_path  # what the target's lowering (its first stage) took
    if lowered_from and lowered_from != results[0].output_path:
        ir = replace(ir, torch_ir=Path(lowered_from), torch_pipeline="")
    return ir


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
    folder = _target_folder(folder, targets[0])
    port = FrontendPort(frontend=name, outcome=PortOutcome.FAILS, folder=str(folder),
                        target=targets[0], backend=backends[0])
    label = f"[{subject.name} {port.path}]"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        try:
            program, run_program = _program(subject, name, port, options, progress, label)
            if options.fix:
                program, run_program = _fixed_trace(subject, program, run_program, port,
                                                    options, progress, label)
            ir_path = _import(subject, chosen, program, folder, port, options, progress, label)
        except _Stopped as stopped:
            if not options.fix:
                raise
            program, run_program, ir_path = _fixed_import(subject, chosen, folder, port, options,
                                                          progress, label, stopped)
    except _Stopped:  # every target and backend stops at the same Python stage
        firsts = [port, *(_for_backend(port, b) for b in backends[1:])]
        return firsts + [_for_target(p, t) for t in targets[1:] for p in firsts]
    imported = _Imported(chosen, program, run_program, ir_path)
    before = copy.deepcopy(port)
    shared, ports = _lower(subject, imported, port, options, progress, None)
    for target in targets[1:]:
        if shared is not None and not shared.ok:  # the torch backend contract failed: the same for all
            ports += [_for_target(p, target) for p in ports if p.target is targets[0]]
            continue
        other = _for_target(before, target)
        other.folder = str(_target_folder(folder, target))
        Path(other.folder).mkdir(parents=True, exist_ok=True)
        ports += _lower(subject, imported, other, options, progress, shared)[1]
    return ports


@dataclass(frozen=True)
class _Imported:
    """What the frontend made once for all targets: the program and its torch IR."""

    chosen: Frontend
    program: Program
    run_program: Callable | None
    ir_path: Path


def _target_folder(folder: Path, target: Target) -> Path:
    """A target's own folder beside the frontend's (``gpt2.fx-tosa``), where its stage files,
    one-op reproducers and the commands' outputs go; the default target's is the frontend's."""
    return folder if target is DEFAULT_TARGETS[0] else folder.with_name(f"{folder.name}-{target.value}")


def _for_target(port: FrontendPort, target: Target) -> FrontendPort:
    """A copy of ``port`` (its stages so far) as the port to ``target``."""
    other = copy.deepcopy(port)
    other.target = target
    return other


def _for_backend(port: FrontendPort, backend: BackendName) -> FrontendPort:
    """A copy of ``port`` (its stages so far) as the port on ``backend``."""
    other = copy.deepcopy(port)
    other.backend = backend
    return other


def _lower(subject: Subject, imported: _Imported, port: FrontendPort, options: PortOptions,
           progress: Progress, shared: StageResult | None
           ) -> tuple[StageResult | None, list[FrontendPort]]:
    """The imported torch IR to ``port.target`` through its pipelines, then its numbers on each
    backend asked for: the torch-backend-contract stage's result (what the other targets start
    from), and the target's ports, ``port`` first (on the first backend). ``shared``: that
    stage's result already made by the first target (not run again)."""
    backends = options.backends[:1] if options.torch_only or not options.numerics else options.backends
    chosen, program, ir_path = imported.chosen, imported.program, imported.ir_path
    label = f"[{subject.name} {port.path}]"
    folder = Path(port.folder)
    lowering = () if options.torch_only else target_path(port.target).stages
    stages = (chosen.torch_pipeline, *lowering)
    running: dict[str, float] = {}

    def started(stage: str) -> None:
        running[stage] = progress.start(f"{label} {stage}")

    def finished(result: StageResult) -> None:
        progress.finish(f"{label} {result.name}", result.record.elapsed_s,
                        "ok" if result.ok else "FAILED")

    def run(input_path: Path, stage: str, _textual: str, out: Path, run_options: RunOptions) -> RunRecord:
        return run_stage(input_path, stage, output_path=out, opt=options.opt, options=run_options)

    stage_options = StageOptions(opt=options.opt, timeout_s=options.timeout_s,
                                 bytecode=_bytecode(subject, options),
                                 memory_limit_mb=options.memory_limit_mb)
    hooks = StageHooks(starting=started, finished=finished, run=run)
    if shared is None:
        results = run_stages(ir_path, stages, folder, stem=subject.name, options=stage_options,
                             hooks=hooks)
    else:
        results = [shared, *run_stages(Path(shared.output_path), lowering, folder, stem=subject.name,
                                       options=stage_options, hooks=hooks, start=1)]
    analysed: PriorRun | None = None
    if options.fix:
        results, analysed = _fixed(results, ir_path, stages, subject.name, port, options, progress, label)
    path = target_path(port.target)
    base = copy.deepcopy(port)  # the frontend's stages (and --fix's notes): each backend's port starts there
    ports: list[FrontendPort] = []
    diagnosed: dict[int, FrontendPort] = {}  # a failed stage's run, by id: diagnosed once
    for i, name in enumerate(backends):
        chosen_backend = backend(name)
        each = port if i == 0 else _for_backend(base, name)
        # a backend that compiles the target's own contract (IREE: TOSA, StableHLO) does not
        # wait for the target's way on to linalg, which is the RefBackend's
        mine = results if chosen_backend.needs_linalg(port.target) else [
            r for r in results if r.name != path.to_linalg]
        ports.append(each)
        _record_stages(each, mine, options)
        if subject.dynamic:
            each.dynamic = _dynamic(subject, each.frontend, each, mine, ir_path, options)
        failed = next((r for r in mine if not r.ok), None)
        if failed is not None:
            _failed_stage(each, failed, diagnosed.get(id(failed)), analysed, program, options, progress,
                          label)
            diagnosed[id(failed)] = each
            continue
        if options.torch_only or not options.numerics:
            each.outcome = PortOutcome.LOWERED
            continue
        ir = _ported_ir(ir_path, chosen.torch_pipeline, lowering, port.target, mine)
        testcase = (Path(options.testcase_dir) / f"{subject.name}.{each.path}"
                    if options.testcase_dir else None)
        run_numbers = check_numerics(subject, ir, backend=chosen_backend, program=imported.run_program,
                                     where=Where(folder, f"[{subject.name} {each.path}]", testcase),
                                     options=options, progress=progress)
        _numbers(each, run_numbers, subject.not_run)
        each.testcase = run_numbers.testcase
    return results[0], ports


def _failed_stage(port: FrontendPort, failed: StageResult, known_port: FrontendPort | None,
                  analysed: PriorRun | None, program: Program, options: PortOptions,
                  progress: Progress, label: str) -> None:
    """A pipeline stage failed: its blockers, commands and reproducer in ``port``; copied from
    ``known_port`` when another backend's port diagnosed the same run already."""
    port.failed_stage = failed_stage = PortStage.parse(failed.name)
    if known_port is not None:
        port.blockers = copy.deepcopy(known_port.blockers)
        port.commands, port.reproduce = list(known_port.commands), known_port.reproduce
        return
    known = analysed.analysis if analysed and analysed.record is failed.record else None
    with progress.stage(f"{label} diagnose {failed.name}") as step:
        port.blockers = with_trace_stacks(pipeline_blockers(
            failed.record, failed_stage, Path(port.folder), _diagnosable(failed.name, options), known),
            program.script)
    port.diagnosis_seconds = step.seconds
    port.commands = pipeline_commands(failed.record, failed.name, Path(port.folder), options)
    port.reproduce = reproduce_command(failed.record)


def _diagnosable(stage: str, options: PortOptions) -> PortOptions:
    """The blocker tools run torch-mlir-opt: a stage that runs on the bindings (TOSA on to
    linalg) keeps the record's own diagnostics, without them."""
    return replace(options, diagnose=False) if driver_for(stage) is Driver.BINDINGS else options


def _numbers(port: FrontendPort, run: NumericsRun, not_run: str) -> None:
    """The numbers check's result in the port: its stages, checks and outcome; a verified port
    whose inputs left a part of the model unrun is PARTIAL (what ran is right; not all ran)."""
    port.stages += run.stages
    port.numerics, port.blockers, port.commands = run.checks, run.blockers, run.commands
    port.outcome = run.outcome
    if run.outcome is PortOutcome.VERIFIED and not_run:
        port.outcome, port.not_run = PortOutcome.PARTIAL, not_run
    if run.outcome is PortOutcome.FAILS:
        port.failed_stage = run.stages[-1].name
    else:
        port.reached = run.stages[-1].name


def _record_stages(port: FrontendPort, results: list[StageResult], options: PortOptions) -> None:
    """Each stage's record, and how far the port got: the last stage that passed, its contract
    and its public functions' signature."""
    for result in results:
        port.stages.append(StageRecord(PortStage.parse(result.name), result.ok, result.record.elapsed_s,
                                       result.record.outcome,
                                       result.output_path if result.ok else "",
                                       "" if result.ok else str(result.record.signature)))
    passed = [r for r in results if r.ok]
    if passed:
        port.reached = PortStage.parse(passed[-1].name)
        port.contract = passed[-1].contract
        functions = public_functions(passed[-1].output_path, opt=options.opt)
        port.signature = "; ".join(str(f) for f in functions)


def _dynamic(subject: Subject, name: FrontendName, port: FrontendPort,
             results: list[StageResult], ir_path: Path, options: PortOptions) -> DynamicDims:
    """``--dynamic``: the asked axes still ``?`` at the backend contract and in the linalg
    signature; on TorchScript, an asked axis made static names the trace's TracerWarning lines
    (a size read as a Python int froze it)."""
    passed = [r for r in results if r.ok]
    contract = passed[0].output_path if passed else ir_path
    linalg = [passed[-1].output_path] if len(passed) > 1 and len(passed) == len(results) else []
    # TorchScript's raw import types its arguments by bounds, behind the module argument: no
    # signature to read until torchscript-to-torch passed (then nothing is known static)
    reached = bool(passed) or name is not FrontendName.TORCHSCRIPT
    dims = dynamic_dims(subject, public_functions(contract, opt=options.opt) if reached else [],
                        public_functions(linalg[0], opt=options.opt) if linalg else [],
                        port.dynamic.frozen if port.dynamic is not None else [])
    if name is FrontendName.TORCHSCRIPT and dims.static and not dims.frozen:
        dims.frozen = list(subject.tracer_warnings)
    return dims


def _fixed(results: list[StageResult], ir_path: Path, stages: tuple[str, ...], stem: str,
           port: FrontendPort, options: PortOptions, progress: Progress,
           label: str) -> tuple[list[StageResult], PriorRun | None]:
    """``--fix``: the torch IR fixes (harness.fixes) from the first failing stage (or, when all
    pass, the linalg stage, for known miscompiles), and the stages as the loop last ran them on
    the fixed input (not run a third time). Each fix is checked afterwards by the port's numbers
    against eager, not one by one (the per-fix check and rollback are ``harness fix FILE``'s).
    The module fixes ran before (:func:`_fixed_trace`, :func:`_fixed_import`). The loop starts
    from the stage's run made already (not a second run of it). Also returns the failing run the
    loop analysed, with its blockers, so the diagnosis does not analyse it again."""
    from harness.fixes.loop import FixOptions, PriorRun, fix_stages

    folder = Path(port.folder)  # the stage files' folder, where the fixed files go too
    failed = next((i for i, r in enumerate(results) if not r.ok), None)
    k = failed if failed is not None else (
        stages.index(LINALG_LOWERING) if LINALG_LOWERING in stages else None)
    if k is None:
        return results, None
    start = ir_path if k == 0 else Path(results[k - 1].output_path)
    with progress.stage(f"{label} fix from {stages[k]}"):
        run = fix_stages(start, stages[k:], folder, stem=f"{stem}.fix", options=FixOptions(
            verify=False, opt=options.opt, timeout_s=options.timeout_s,
            memory_limit_mb=options.memory_limit_mb), prior=PriorRun(results[k].record))
    port.fixes += [s.to_json() for s in run.steps]
    analysed = PriorRun(run.failed, run.analysis) if run.failed is not None else None
    if not run.kept:
        return results, analysed
    j = k + max(list(run.stages).index(s.stage) for s in run.kept)
    port.notes.append("--fix applied: " + ", ".join(dict.fromkeys(s.fix for s in run.kept))
                      + f" (to the input of {stages[j]})")
    return results[:k] + run.results, analysed


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
                                               label, module)
        if conversion is None:
            return program, run_program
        with _PythonStage(port, PortStage.parse(conversion.stage), options, progress, label):
            program = conversion.convert(program, Path(port.folder))
    runs = conversion.runner(program)
    return program, lambda inputs: runs(inputs.tensors)


def _source_program(subject: Subject, name: FrontendName, port: FrontendPort, options: PortOptions,
                    progress: Progress, label: str,
                    module: torch.nn.Module | None = None) -> tuple[Program, Callable | None]:
    """Trace (TorchScript) or export (FX): the program, and how to run it in PyTorch.
    ``module``: a module fixed by ``--fix``, traced or exported instead of ``subject.eager``."""
    if name is FrontendName.TORCHSCRIPT:
        stage = PortStage.TRACE
        if module is not None:
            trace = _retrace(module, subject)
        elif subject.trace is not None:
            trace = subject.trace
        else:
            _fail(port, stage, 0.0, exception_blocker(stage, ValueError(
                f"{subject.name} has no trace: port it through --frontend fx")))
        with _PythonStage(port, stage, options, progress, label):
            script, notes = trace()
        port.notes += notes
        axes: tuple[tuple[int, ...], ...] = ()
        if subject.dynamic:
            frozen = trace_frozen(script, subject)
            port.dynamic = DynamicDims(frozen=frozen)
            if frozen:
                port.notes.append("--dynamic: the trace froze a size (it fails or changes shape on "
                                  "the second set), so every dimension stays static; frozen at "
                                  + ", ".join(frozen[:3]))
            else:
                axes = tuple(tuple(sorted(a)) for a in subject.dynamic_axes)
        return (Program(subject.name, module or subject.eager, subject.inputs.tensors, script,
                        dynamic_axes=axes),
                lambda inputs: script(*inputs.tensors))
    stage = PortStage.EXPORT
    log = SpecializationLog() if subject.dynamic else None
    shapes = export_shapes(subject.dynamic_axes, module or subject.eager) if subject.dynamic else None
    with (_PythonStage(port, stage, options, progress, label,
                       blocker=lambda error: export_blocker(error, log) if log else None),
          warnings.catch_warnings(), torch.no_grad(), log or contextlib.nullcontext()):
        warnings.simplefilter("ignore", FutureWarning)  # torch.export's own deprecations
        exported = torch.export.export(module or subject.eager, subject.inputs.tensors,
                                       strict=False, dynamic_shapes=shapes)
    return (Program(subject.name, module or subject.eager, subject.inputs.tensors,
                    exported=exported),
            _run_exported(exported))


def _run_exported(exported: torch.export.ExportedProgram) -> Callable:
    """How PyTorch runs ``exported``: its module made once, at the first run (tiny BERT's
    ``module()``: 0.05 s, which each of the two input sets paid)."""
    made: list[torch.nn.Module] = []

    def run(inputs: InputSet) -> Any:
        if not made:
            made.append(exported.module())
        return made[0](*inputs.tensors)

    return run


def _retrace(module: torch.nn.Module,
             subject: Subject) -> Callable[[], tuple[torch.jit.ScriptModule, list[str]]]:
    """How to trace a module fixed by ``--fix`` (in place of ``subject.trace``)."""

    def trace() -> tuple[torch.jit.ScriptModule, list[str]]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            script = torch.jit.trace(module, subject.inputs.tensors, strict=False,
                                     check_trace=False)
        return script, ["The fixed module was traced again as torch.jit.trace(strict=False, "
                        "check_trace=False)."]

    return trace


def _fixed_trace(subject: Subject, program: Program, run_program: Callable | None,
                 port: FrontendPort, options: PortOptions, progress: Progress,
                 label: str) -> tuple[Program, Callable | None]:
    """``--fix`` on the trace: what no pass converts (``prim::PythonOp``) answered by a module
    fix (:mod:`.module_fixes`), and the fixed module traced again. An exported program (FX) is
    returned as it is."""
    if program.script is None:
        return program, run_program
    blockers = trace_blockers(program.script)
    if not blockers:
        return program, run_program
    with progress.stage(f"{label} fix the module"):
        module, kept = fix_module(subject, blockers, port, script=program.script)
    if module is None:
        return program, run_program
    try:
        return _program(subject, FrontendName.TORCHSCRIPT, port, options, progress, label, module)
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
                        stage=failed.name) for b in port.blockers]
    with progress.stage(f"{label} fix the module"):
        module, kept = fix_module(subject, seen, port)
    if module is None:
        raise _Stopped(failed.name)
    first = ", ".join(f"{s.name} {s.seconds:.2f} s{'' if s.ok else ' (failed)'}"
                      for s in port.stages)
    port.notes.append(f"Before --fix: {first}: {port.blockers[0].message[:200]}")
    port.stages, port.blockers, port.failed_stage = [], [], None
    reused = persistent_in_program(stopped.decomposed) if (
        chosen.conversion is None and stopped.decomposed is not None and stopped.exported is not None
        and first_export is not None
        and [step.fix for step in kept] == [PersistentBuffers.name]) else None
    try:
        if reused is None or first_export is None or stopped.exported is None:
            program, run_program = _program(subject, chosen.name, port, options, progress, label,
                                            module)
        else:
            port.stages.append(first_export)  # the export that stands: not run again
            port.notes.append("--fix: the first export's decomposed program was imported again "
                              "with its buffers persistent (the same IR as the fixed module's "
                              "export, where torch.export takes the fixed module)")
            program = Program(subject.name, module, subject.inputs.tensors, exported=reused,
                              decomposed=True)
            # the import replaces the decomposition's placeholders: PyTorch runs the export
            # (persistence changes what state_dict() saves, not what forward computes)
            run_program = _run_exported(stopped.exported)
        ir_path = _import(subject, chosen, program, folder, port, options, progress, label)
    finally:
        undo(kept)
    return program, run_program, ir_path


def _import(subject: Subject, chosen, program: Program, folder: Path, port: FrontendPort,
            options: PortOptions, progress: Progress, label: str) -> Path:
    stage = PortStage.IMPORT
    bytecode = _bytecode(subject, options)
    path = folder / f"{subject.name}.torch.{'mlirbc' if bytecode else 'mlir'}"
    explanation = ""
    decomposed: torch.export.ExportedProgram | None = None
    own = import_blocker if subject.dynamic else None  # a node only dynamic shapes make
    try:
        with _PythonStage(port, stage, options, progress, label, explain=lambda e: explanation,
                          blocker=own):
            try:
                with torch.no_grad():
                    imported = chosen.import_program(program)
            except Exception as error:
                if STATE_MAPPING in str(error.__cause__ or error) and program.exported is not None:
                    explanation = missing_buffers_explanation(program.exported)
                    decomposed = error.decomposed if isinstance(error, ImportFailed) else None
                raise
            write_module(imported.module, path, WriteOptions(keep_weights=options.weights_kept,
                                                              bytecode=bytecode))
    except _Stopped as stopped:
        stopped.exported, stopped.decomposed = program.exported, decomposed
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

    def __enter__(self):
        self._step = self.progress.stage(f"{self.label} {self.stage}")
        self.step = self._step.__enter__()
        self._limit = time_limit(self.options.timeout_s)
        self._limit.__enter__()
        return self

    def __exit__(self, kind, error, tb):
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


def _bytecode(subject: Subject, options: PortOptions) -> bool:
    """Kept weights past :data:`TEXT_WEIGHTS_LIMIT_MB` go to bytecode, not hex text."""
    if not options.weights_kept:
        return False
    tensors = [*subject.eager.parameters(), *subject.eager.buffers()]
    size = sum(t.numel() * t.element_size() for t in tensors)
    return size > TEXT_WEIGHTS_LIMIT_MB * 2**20
