"""The imported torch IR to each target and backend: the pipeline stages (the torch backend
contract once, then each target's lowering and its way on to linalg), their diagnosis when one
fails, and each backend's numbers check. harness/port/frontend.py makes the program and imports
it; this module takes it from there.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions
from harness.compiler.stages import (
    StageHooks,
    StageOptions,
    StageResult,
    public_functions,
    run_stages,
)
from harness.compiler.targets import DEFAULT_TARGETS, LINALG_LOWERING, Target, target_path
from harness.execute.backend_names import BackendName
from harness.execute.backend import Backend
from harness.execute.backends import backend
from harness.execute.lowering import Driver, driver_for, run_stage
from harness.frontends.base import Frontend, Program, frontend
from harness.frontends.names import FrontendName

from .diagnose import (
    pipeline_blockers,
    pipeline_commands,
    reproduce_command,
    with_onnx_stacks,
    with_trace_stacks,
)
from .dynamic import dynamic_dims
from .eager_stacks import eager_stacks, op_key, with_eager_stacks
from .options import TEXT_WEIGHTS_LIMIT_MB, PortOptions
from .progress import Progress
from .record import DynamicDims, FrontendPort, PortOutcome, PortStage, StageRecord
from .subject import Subject
from .target_fixes import fixed_target
from .verify import NumericsRun, PortedIR, Where, check_numerics

if TYPE_CHECKING:
    from harness.fixes.loop import PriorRun


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


@dataclass(frozen=True)
class ImportForTargets:
    """What the frontend made once for all targets: the program and its torch IR."""

    chosen: Frontend
    program: Program
    run_program: Callable | None
    ir_path: Path


def target_folder(folder: Path, target: Target) -> Path:
    """A target's own folder beside the frontend's (``gpt2.fx-tosa``), where its stage files,
    one-op reproducers and the commands' outputs go; the default target's is the frontend's."""
    return folder if target is DEFAULT_TARGETS[0] else folder.with_name(f"{folder.name}-{target.value}")


def for_target(port: FrontendPort, target: Target) -> FrontendPort:
    """A copy of ``port`` (its stages so far) as the port to ``target``."""
    other = copy.deepcopy(port)
    other.target = target
    return other


def for_backend(port: FrontendPort, backend: BackendName) -> FrontendPort:
    """A copy of ``port`` (its stages so far) as the port on ``backend``."""
    other = copy.deepcopy(port)
    other.backend = backend
    return other


def lower(subject: Subject, imported: ImportForTargets, port: FrontendPort, options: PortOptions,
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
    path = target_path(port.target)
    # the target's way on to linalg runs only for a backend that compiles linalg (the
    # RefBackend); ports on IREE alone (TOSA, StableHLO as they are) never run it
    made = [backend(name) for name in backends]  # one each: a backend keeps its timings
    takes_linalg = any(b.needs_linalg(port.target) for b in made)
    lowering = () if options.torch_only else tuple(
        stage for stage in path.stages if takes_linalg or stage != path.to_linalg)
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
                                 bytecode=bytecode(subject, options),
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
    base = copy.deepcopy(port)  # the frontend's stages (and --fix's notes): each backend's port starts there
    ports: list[FrontendPort] = []
    diagnosed: dict[int, FrontendPort] = {}  # a failed stage's run, by id: diagnosed once
    for i, (name, chosen_backend) in enumerate(zip(backends, made, strict=True)):
        each = port if i == 0 else for_backend(base, name)
        if options.numerics and not options.torch_only:
            each.device = options.device  # where its backend runs it: the port's name says so
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
        run_numbers = _numbers_run(subject, imported, ir, chosen_backend, each,
                                   Where(folder, f"[{subject.name} {each.path}]", testcase),
                                   options, progress)
        _numbers(each, run_numbers, subject.not_run)
        each.testcase = run_numbers.testcase
    _own_lines(ports, program, subject)
    return results[0], ports


def _numbers_run(subject: Subject, imported: ImportForTargets, ir: PortedIR, on: Backend,
                 port: FrontendPort, where: Where, options: PortOptions, progress: Progress
                 ) -> NumericsRun:
    """The numbers check of ``ir`` on backend ``on``; with ``--fix``, again after each target
    fix that answers its compile (a backend that refuses the target's contract as torch-mlir
    printed it: IREE and TOSA's profiles, :mod:`.target_fixes`)."""
    def numbers(ported: PortedIR) -> NumericsRun:
        return check_numerics(subject, ported, backend=on, program=imported.run_program,
                              where=where, options=options, progress=progress)

    run = numbers(ir)
    return fixed_target(ir, run, port, numbers, options.opt) if options.fix else run


def _own_lines(ports: list[FrontendPort], program: Program, subject: Subject) -> None:
    """The Python line of each blocker: an ONNX port's, behind its ONNX node; any port's, from
    the eager call of its op where the program's stack stops short of it (one eager forward for
    all the ports, only when some blocker names a torch op)."""
    for each in ports:
        converted = next((Path(s.output) for s in each.stages
                          if s.name is PortStage.ONNX_TO_TORCH and s.ok and s.output), None)
        each.blockers = with_onnx_stacks(each.blockers, program.program_file(), converted)
    keys = {op_key(b.op) for each in ports for b in each.blockers if b.location} - {""}
    if keys:
        stacks = eager_stacks(lambda: subject.eager(*subject.inputs.tensors), keys)
        for each in ports:
            each.blockers = with_eager_stacks(each.blockers, stacks)


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
            program.script_module())
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
    port.outcome, port.unrun = run.outcome, run.unrun
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
    chosen = frontend(name)
    reached = bool(passed) or chosen.typed_import
    dims = dynamic_dims(subject, public_functions(contract, opt=options.opt) if reached else [],
                        public_functions(linalg[0], opt=options.opt) if linalg else [],
                        port.dynamic.frozen if port.dynamic is not None else [])
    maker = frontend(chosen.source).maker
    if maker is not None and maker.freezes_sizes and dims.static and not dims.frozen:
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
    if k is None or driver_for(stages[k]) is Driver.BINDINGS:
        # the fixes answer torch-mlir-opt's blockers; a stage on the bindings (TOSA on to
        # linalg) failing has none they know
        return results, None
    start = ir_path if k == 0 else Path(results[k - 1].output_path)
    with progress.stage(f"{label} fix from {stages[k]}"):
        run = fix_stages(start, stages[k:], folder, stem=f"{stem}.fix", options=FixOptions(
            verify=False, opt=options.opt, timeout_s=options.timeout_s,
            memory_limit_mb=options.memory_limit_mb), prior=PriorRun(results[k].record))
    port.fixes += [s.recorded() for s in run.steps]
    analysed = PriorRun(run.failed, run.analysis) if run.failed is not None else None
    if not run.kept:
        return results, analysed
    j = k + max(list(run.stages).index(s.stage) for s in run.kept)
    port.notes.append("--fix applied: " + ", ".join(dict.fromkeys(s.fix for s in run.kept))
                      + f" (to the input of {stages[j]})")
    return results[:k] + run.results, analysed


def bytecode(subject: Subject, options: PortOptions) -> bool:
    """Kept weights past :data:`TEXT_WEIGHTS_LIMIT_MB` go to bytecode, not hex text."""
    if not options.weights_kept:
        return False
    tensors = [*subject.eager.parameters(), *subject.eager.buffers()]
    size = sum(t.numel() * t.element_size() for t in tensors)
    return size > TEXT_WEIGHTS_LIMIT_MB * 2**20
