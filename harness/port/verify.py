"""Does the lowered module compute what the model computes? The RefBackend against eager.

The linalg file is lowered to LLVM once (``refbackend-lowering``) and run on each input set
(``execution``): the traced inputs, and a second set with other token ids and a padded mask,
which catches values the frontend froze (a mask shortcut taken because the traced mask was all
ones). Each set is compared with eager PyTorch, per dtype tolerance. The imported program
itself (the trace, the exported graph) is also run in PyTorch on each set: when it already
differs from eager, the frontend froze the difference in, not torch-mlir.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from harness.compiler.irfile import unique_dir
from harness.errors import HarnessError
from harness.execute.closeness import (
    NumericsResult,
    OutputComparison,
    Tolerances,
    compare,
    describe_excluded,
    exclude_positions,
    padding_of,
)
from harness.compiler.targets import Target
from harness.execute.backend import Backend, BackendOptions, Compiled, Lowered, TestcaseSet
from harness.execute.refbackend import RefBackendResult, Stage
from harness.models.generic import as_tuple
from harness.models.hf_inputs import InputSet

from harness.diagnose.onnx_terms import NAME_LOC
from harness.diagnose.source import torch_ops_at

from .culprit import narrow
from .diagnose import (
    crash_commands,
    frames_of,
    harness_command,
    one_line,
    opt_argument,
    pipeline_blockers,
)
from .options import PortOptions
from .progress import Progress
from .record import (
    Blocker,
    CheckedRun,
    InputSetName,
    NumericsCheck,
    OutputDiff,
    PortOutcome,
    PortStage,
    StageError,
    StageRecord,
)
from .subject import Subject


@dataclass
class NumericsRun:
    outcome: PortOutcome
    stages: list[StageRecord] = field(default_factory=list)
    checks: list[NumericsCheck] = field(default_factory=list)
    blockers: list[Blocker] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    testcase: str = ""  # the portable test case's script, when one was written
    unrun: str = ""     # LOWERED: why the compiled module was not run here (no CUDA GPU)


def _testcase(backend: Backend, compiled: Compiled, sets: Sequence[tuple[InputSetName, InputSet]],
              subject: Subject, folder: Path, tolerances: Tolerances) -> str:
    """The backend's own test case of the sets with nothing padded (a padded row's values are
    undefined: eager and a compiler may both be right there and differ); "" when it has none."""
    from harness.execute.dtypes import DType

    kept = [TestcaseSet(str(which), [t.numpy() for t in inputs.tensors],
                        [_numpy(e) for e in subject.expected(inputs)])
            for which, inputs in sets if padded_positions(inputs) is None]
    f32 = tolerances.for_dtype(DType.FLOAT32)
    script = backend.testcase(compiled, kept, folder, (f32.rtol, f32.atol)) if kept else None
    return str(script) if script is not None else ""


@dataclass(frozen=True)
class PortedIR:
    """The files a frontend's stages wrote that the numbers check reads."""

    torch_ir: Path       # the frontend's torch IR: `harness check` compares it with the reference
    torch_pipeline: str  # the pipeline that took torch_ir to the backend contract ("": it is there)
    lowering: tuple[str, ...]  # the target's pipelines: the torch backend contract -> linalg
    contract_ir: Path    # the backend contract: the signature with signedness (linalg lost it)
    target_ir: Path      # the target's contract (TOSA, StableHLO; the linalg file for linalg)
    linalg: Path         # linalg-on-tensors: what the RefBackend lowers and runs
    target: Target = Target.LINALG

    def lowered(self, stem: str) -> Lowered:
        return Lowered(self.target, self.contract_ir, self.target_ir, self.linalg, stem)


@dataclass(frozen=True)
class Where:
    """Where a numbers check writes and what it says: its folder, its progress label, and a
    folder for the backend's portable test case (None: none asked for)."""

    folder: Path
    label: str
    testcase: Path | None = None


def check_numerics(subject: Subject, ir: PortedIR, *, backend: Backend,
                   program: Callable[[InputSet], Sequence[torch.Tensor]] | None,
                   where: Where, options: PortOptions, progress: Progress) -> NumericsRun:
    """``ir`` compiled and run by ``backend`` against ``subject``'s eager outputs on both
    input sets.

    Phases: compile, execute, compare, and on a mismatch the commands (``harness check`` on
    ``ir.torch_ir``) and the one-op verdict; a phase that fails ends the run with its stage and
    blocker recorded.
    """
    folder, label, testcase = where.folder, where.label, where.testcase
    run = NumericsRun(PortOutcome.FAILS)
    lowered = ir.lowered(subject.name)
    backend_options = options.backend_options()
    compiled = _compile(run, backend, lowered, backend_options, folder, options, progress, label)
    if compiled is None:
        return run
    sets = ((InputSetName.TRACED, subject.inputs), (InputSetName.SECOND, subject.second_inputs))
    tolerances = Tolerances().with_overrides(options.tolerances)
    run.unrun = backend.unavailable(backend_options)
    if run.unrun:  # compiled for a device this machine lacks (a CUDA GPU): said, never claimed
        run.outcome = PortOutcome.LOWERED
        if testcase is not None:  # the test case carries the run to a machine that has one
            run.testcase = _testcase(backend, compiled, sets, subject, testcase, tolerances)
        return run
    runs = _Runs(backend, compiled, lowered, backend_options, folder)
    crash = _Crash(run, sets, runs, ir, options, lambda i, work, result: _compared(
        sets[i][0], sets[i][1], work, result, subject, program, tolerances))
    done = _execute(run, sets, runs, crash, progress, label)
    if done is None:
        return run
    run.checks = [_compared(which, inputs, work, result, subject, program, tolerances)
                  for (which, inputs), (work, result) in zip(sets, done, strict=False)]
    if testcase is not None:
        run.testcase = _testcase(backend, compiled, sets, subject, testcase, tolerances)
    mismatch = any(c.verdict is not PortOutcome.VERIFIED for c in run.checks)
    if mismatch and backend.checked_runs:  # a bad access read garbage? Checked, it aborts naming the op
        wrong = [i for i, c in enumerate(run.checks) if c.verdict is not PortOutcome.VERIFIED]
        with progress.stage(f"{label} execution with runtime checks") as step:
            aborted = next(((i, found) for i in wrong
                            if (found := runs.first_failure([sets[i]])) is not None), None)
            if aborted is not None:
                crash.record(aborted[0], aborted[1], done)
            step.ok = aborted is None
        if aborted is not None:
            crash.finish(run.stages.pop().seconds + step.seconds)
            return run
    run.outcome = PortOutcome.NUMERICS_MISMATCH if mismatch else PortOutcome.VERIFIED
    if mismatch:
        _mismatch(run, ir.torch_ir, (ir.torch_pipeline, *ir.lowering), folder, options, progress, label,
                  searched=backend.searchable)
    return run


def _compile(run: NumericsRun, backend: Backend, lowered: Lowered, backend_options: BackendOptions,
             folder: Path, options: PortOptions, progress: Progress, label: str) -> Compiled | None:
    """The backend's compile, and the entry signature; None (the stage and its blocker
    recorded in ``run``) when the signature is refused or the compile fails."""
    stage = PortStage.parse(backend.stage)
    with progress.stage(f"{label} {stage}") as step:
        try:
            compiled: Compiled | HarnessError = backend.compile(lowered, folder, backend_options)
        except HarnessError as error:
            compiled = error
        step.ok = not isinstance(compiled, HarnessError) and compiled.record.ok
    if isinstance(compiled, HarnessError):  # recorded once the stage is over: its seconds are known then
        refused = compiled
        run.stages.append(StageRecord(stage, False, step.seconds, StageError.IN_PYTHON,
                                      detail=one_line(str(refused))))
        run.blockers = [Blocker(rank=1, stage=stage,
                                signature=f"{stage}: {type(refused).__name__}",
                                message=one_line(str(refused)))]
        return None
    record = compiled.record
    run.stages.append(StageRecord(stage, record.ok, step.seconds, record.outcome,
                                  str(compiled.artifact) if record.ok else "",
                                  "" if record.ok else str(record.signature),
                                  command=shlex.join(record.command)))
    if record.ok:
        return compiled
    run.blockers = pipeline_blockers(record, stage, folder, _no_diagnosis(options))
    if compiled.harness_rerun:  # `harness run`: the bindings' lowering, as the harness runs it
        given = ["--opt", opt_argument(options.opt)] if options.opt else []
        run.commands = [harness_command(options.invocation, [*compiled.rerun, *given])]
    else:
        run.commands = [shlex.join(compiled.rerun)]
    if compiled.reduce_words:  # the backend's own reducer of its compile's failures
        run.commands.append(harness_command(options.invocation, [
            "reduce", *compiled.reduce_words, "-o", str(folder / f"{lowered.stem}.reduced.mlir")]))
    return None


class _Runs:
    """The compiled module's runs: each set, and again with the backend's own checks (the
    RefBackend's runtime op verification) for a set whose run crashed or mismatched."""

    def __init__(self, backend: Backend, compiled: Compiled, lowered: Lowered,
                 options: BackendOptions, folder: Path):
        self.backend, self.compiled, self.lowered = backend, compiled, lowered
        self.options, self.folder = options, folder

    def execute_all(self, sets: Sequence[tuple[InputSetName, InputSet]]
                    ) -> list[tuple[Path, RefBackendResult]]:
        works = [unique_dir(f"execution-{which}-", self.folder) for which, _ in sets]
        arrays = [[t.numpy() for t in inputs.tensors] for _, inputs in sets]
        try:
            results = self.backend.run_sets(self.compiled, arrays, works, self.options)
        except HarnessError as error:  # inputs that do not fit the compiled signature
            results = [RefBackendResult(self.compiled.signature.name, Stage.EXECUTION, error=str(error))
                       for _ in sets]
        return list(zip(works, results, strict=True))

    def first_failure(self, sets: Sequence[tuple[InputSetName, InputSet]]) -> RefBackendResult | None:
        """The first of ``sets`` whose checked run fails a check (None: none did, or the backend
        has no checks: the unchecked run's result stands)."""
        named = [(str(which), [t.numpy() for t in inputs.tensors]) for which, inputs in sets]
        return self.backend.explain_failure(self.compiled, self.lowered, named, self.folder,
                                            self.options.timeout_s)

    def checked(self, which: InputSetName, inputs: InputSet) -> RefBackendResult | None:
        """The set run under the backend's own checks, whatever comes of it (None: no checks)."""
        return self.backend.checked_run(self.compiled, self.lowered, str(which),
                                        [t.numpy() for t in inputs.tensors], self.folder,
                                        self.options.timeout_s)


def _execute(run: NumericsRun, sets: Sequence[tuple[InputSetName, InputSet]], runs: _Runs,
             crash: _Crash, progress: Progress, label: str) -> list[tuple[Path, RefBackendResult]] | None:
    """The compiled module on each input set; None (the stage, its blocker and every set's
    result recorded by ``crash``) when a run fails: the checked run's failure when it names what
    failed (a runtime check), else the run's own."""
    execution = PortStage.EXECUTION
    with progress.stage(f"{label} {execution}") as step:
        done = runs.execute_all(sets)
        index = next((i for i, (_, result) in enumerate(done) if not result.ok), None)
        if index is not None:
            crash.record(index, runs.first_failure([sets[index]]) or done[index][1], done)
        step.ok = index is None
    if index is not None:
        crash.finish(step.seconds)
        return None
    run.stages.append(StageRecord(execution, True, step.seconds))
    return done


class _Crash:
    """A set whose run died, and what the other sets did: each set runs again under the same
    runtime checks (the RefBackend's), so the record says which set triggers the crash and
    which runs, as for a pass failure; and the commands that reproduce, reduce and report it
    are the harness's public ones (``check --runtime-checks``, ``reduce``/``report --numerics``
    on the torch IR and the crashing set's inputs)."""

    def __init__(self, run: NumericsRun, sets: Sequence[tuple[InputSetName, InputSet]], runs: _Runs,
                 ir: PortedIR, options: PortOptions,
                 compared: Callable[[int, Path, RefBackendResult], NumericsCheck]):
        self.run, self.sets, self.runs, self.ir, self.options = run, sets, runs, ir, options
        self.compared = compared
        self.failed: RefBackendResult | None = None
        self.crashed = -1

    def record(self, index: int, failed: RefBackendResult,
               done: Sequence[tuple[Path, RefBackendResult]]) -> None:
        """Set ``index`` died with ``failed``; every other set is run again with the checks
        (where the backend has them) and judged on its own run's outputs."""
        self.failed, self.crashed = failed, index
        checks = []
        for i, ((which, inputs), (work, result)) in enumerate(zip(self.sets, done, strict=True)):
            checked = None if i == index else self.runs.checked(which, inputs)
            if i == index or not result.ok:
                own = failed if i == index else \
                    (checked if checked is not None and not checked.ok else result)
                check = NumericsCheck(inputs=which, description=inputs.description,
                                      verdict=PortOutcome.FAILS, max_abs_diff=math.nan,
                                      max_rel_diff=math.nan, inputs_file=str(work / "inputs.npz"),
                                      run_command=result.command, error=_crash_text(own))
                # the crashed set's failure is its checked run's when a check named it, else
                # its own run's (the checked run then told nothing more: not said to be checked)
                check.runtime_checks = _checked_outcome(checked) if i != index else \
                    (CheckedRun.FAILED if _failed_a_check(failed) else None)
            else:
                check = self.compared(i, work, result)
                check.runtime_checks = _checked_outcome(checked)
            checks.append(check)
        self.run.checks = checks

    def finish(self, seconds: float) -> None:
        """The run ends at execution: its stage, its blocker (the torch ops at its location and
        the sets it dies and runs on) and the commands; the other sets' results stand."""
        assert self.failed is not None
        run, failed = self.run, self.failed
        run.stages.append(StageRecord(PortStage.EXECUTION, False, seconds, StageError.IN_PYTHON,
                                      detail=one_line(failed.error)))
        blocker = _with_torch_ops(execution_blocker(failed, PortStage.EXECUTION), self.ir.torch_ir)
        run.blockers = [replace(blocker, inputs=crash_inputs(self.sets, run.checks))]
        run.outcome = PortOutcome.FAILS
        if self.runs.backend.checked_runs:
            run.commands = self._commands(run.checks[self.crashed])
        else:  # the backend's own tool reruns it (iree-run-module), as it ran
            run.commands = [failed.command] if failed.command else []

    def _commands(self, crashed: NumericsCheck) -> list[str]:
        ir, folder = self.ir, Path(crashed.inputs_file).parent.parent
        pipeline = ",".join(p for p in (ir.torch_pipeline, *ir.lowering) if p)
        return crash_commands(self.options.invocation, str(ir.torch_ir), pipeline,
                              crashed.inputs_file, folder, self.options.opt,
                              folder.parent / "record.json")


def _crash_text(failed: RefBackendResult) -> str:
    """A run's death in one line: the failed runtime check (op, what it found) when there is
    one, else the run's own error."""
    blocker = execution_blocker(failed, PortStage.EXECUTION)
    return blocker.message if blocker.op else one_line(failed.error)


def _checked_outcome(checked: RefBackendResult | None) -> CheckedRun | None:
    if checked is None or not checked.command:  # not run: no checks, or no time left
        return None
    if checked.ok:
        return CheckedRun.PASSED
    return CheckedRun.FAILED if _failed_a_check(checked) else CheckedRun.CRASHED


def _failed_a_check(result: RefBackendResult) -> bool:
    return _RUNTIME_CHECK.search(f"{result.error}\n{result.stderr}") is not None


def crash_inputs(sets: Sequence[tuple[InputSetName, InputSet]], checks: Sequence[NumericsCheck]) -> str:
    """Which sets a crash happens on and which it does not, each with what sets it apart (the
    traced set's mask is all ones, the second pads): "crashes on the traced inputs (attention
    mask all ones), runs on the second (padded) under the same runtime checks: verified"."""
    traits = {which: _trait(inputs) for which, inputs in sets}
    dies = [c for c in checks if c.verdict is PortOutcome.FAILS]
    runs = [c for c in checks if c.verdict is not PortOutcome.FAILS]
    text = "crashes on " + " and ".join(f"the {c.inputs} inputs ({traits[c.inputs]})" for c in dies)
    if not runs:
        return text + ": every input set"
    said = []
    for c in runs:
        how = ("" if c.runtime_checks is None else  # no checks (IREE), or no time left for them
               " under the same runtime checks" if c.runtime_checks is CheckedRun.PASSED else
               f" without runtime checks (with them it {c.runtime_checks})")
        said.append(f"the {c.inputs} ({traits[c.inputs]}){how}: {c.verdict}")
    return f"{text}, runs on {' and '.join(said)}"


def _trait(inputs: InputSet) -> str:
    """What sets an input set apart, for a crash on one set only: padding, or a mask of ones."""
    if padded_positions(inputs) is not None:
        return "padded"
    if "attention_mask" in inputs.names:
        return "attention mask all ones"
    return inputs.description


def _compared(which: InputSetName, inputs: InputSet, work: Path, result: RefBackendResult,
              subject: Subject, program: Callable[[InputSet], Sequence[torch.Tensor]] | None,
              tolerances: Tolerances) -> NumericsCheck:
    """One set's outputs against eager, padded positions (tokens, audio frames) left out; each
    float output judged by the float64 rule (closeness) when eager runs in float64."""
    actual, expected = list(result.outputs), [_numpy(e) for e in subject.expected(inputs)]
    reference = subject.expected_float64(inputs)
    wide = [_numpy(r) for r in reference] if reference is not None else None
    padded = padded_positions(inputs)
    excluded = None
    if padded is not None:
        if wide is not None:
            wide, _, _ = exclude_positions(wide, expected, padded)
        actual, expected, excluded = exclude_positions(actual, expected, padded)
    numerics = compare(actual, expected, tolerances, wide)
    ran = _run_program(program, inputs)  # once: its exact diff and the rule's verdict read it
    check = _check(which, inputs, numerics, subject, _program_diff(ran, subject, inputs),
                   str(work / "inputs.npz"))
    check.run_command = result.command
    check.program_ok = _program_ok(ran, expected, padded, tolerances, wide)
    if excluded is not None:
        count, diff = excluded
        check.excluded = (describe_excluded(count) if inputs.padded is None else
                          f"{count} padded frame{'s' if count != 1 else ''} (computed from "
                          "zero samples the attention mask leaves out)")
        check.excluded_max_abs_diff = float(diff)
        check.padding_mask = mask_argument(inputs)
    return check


def _float64_disagreements(numerics: NumericsResult) -> str:
    """The outputs whose float64 verdict differs from the flat tolerance's, with the rule's
    numbers: rounding of large values off the tolerance, or a wrong constant within it."""
    return "; ".join(f"output {o.index}: {o.noise.render()}" for o in numerics.outputs
                     if o.noise is not None and not o.problem and o.ok != (o.mismatched == 0))


def _mismatch(run: NumericsRun, torch_ir: Path, pipelines: Sequence[str], folder: Path,
              options: PortOptions, progress: Progress, label: str, *, searched: bool = True) -> None:
    """The ``harness check`` command on the first mismatching set, then the one op that
    computes wrong (its reproducer's command too); ``searched`` False (a backend the search,
    which runs on the RefBackend, does not speak for): no search, and the verdict stands."""
    bad = next(c for c in run.checks if c.verdict is not PortOutcome.VERIFIED)
    given = ["--opt", opt_argument(options.opt)] if options.opt else []
    if bad.padding_mask is not None:
        given += ["--padding-mask", str(bad.padding_mask)]
    pipeline = ",".join(p for p in pipelines if p)
    run.commands = [harness_command(options.invocation, [
        "check", str(torch_ir), "--pipeline", pipeline, "--inputs", bad.inputs_file, *given])]
    if not searched:
        for check in run.checks:
            if check.verdict is not PortOutcome.VERIFIED:
                check.culprit = ("not narrowed: the one-op search runs on the RefBackend, which "
                                 "does not speak for this backend (compare its RefBackend port)")
        return
    with progress.stage(f"{label} one-op verdict"):
        narrow(run.checks, torch_ir, pipeline, folder, options)
    run.commands += [c.culprit_command for c in run.checks if c.culprit_command]
    if all(c.verdict is PortOutcome.VERIFIED for c in run.checks):  # rounding that added up
        run.outcome, run.commands = PortOutcome.VERIFIED, []


#: MLIR's runtime op verification (``-generate-runtime-verification``): the op, what it found,
#: and the op's location, e.g. Wav2Vec2's ``hidden_states[~mask] = 0`` lowered to a gather that
#: reads out of bounds.
_RUNTIME_CHECK = re.compile(r"Runtime op verification failed\s*\n\s*(?:%[\w#:]+ = )?\"?([a-z_]+\.[\w.]+)"
                            r"[^\n]*\n\s*\^\s*([^\n]*)\n\s*Location:\s*([^\n]*)")


def execution_blocker(failed: RefBackendResult, stage: PortStage) -> Blocker:
    """The blocker of a failed execution: the signal, and where the lowered code says it failed
    (a runtime verification names the op and the model's line)."""
    text = f"{failed.error}\n{failed.stderr}"  # the check prints on stdout, in the error
    found = _RUNTIME_CHECK.search(text)
    if found is None:
        return Blocker(rank=1, stage=stage, signature=f"{stage}: {failed.signal or 'error'}",
                       message=one_line(failed.error))
    op, what, location = found.groups()
    frames = frames_of(location)
    # An ONNX import's op is at its node's name location (loc("node_softmax")): kept in the
    # message, where with_onnx_stacks finds the node and the model's line behind it.
    node = NAME_LOC.search(location) if not frames else None
    return Blocker(rank=1, stage=stage, signature=f"{stage}: {failed.signal or 'error'}: {op} {what}",
                   op=op, location=frames[0] if frames else "", frames=frames,
                   message=f"runtime op verification failed: {op} {what}"
                           + (f" at {node.group(0)}" if node else "")
                           + (f" ({failed.signal})" if failed.signal else ""))


def _with_torch_ops(blocker: Blocker, torch_ir: Path) -> Blocker:
    """A runtime check's blocker names a lowered op (``memref.load``); add the torch ops the
    model's line became, which is what a torch-mlir report is about."""
    if not blocker.location:
        return blocker
    ops = torch_ops_at(torch_ir, [blocker.location])
    if not ops:
        return blocker
    return replace(blocker, explanation=(
        f"{blocker.op or 'the lowered code'} fails its runtime check in code lowered from "
        f"{blocker.location}, whose torch ops are: {', '.join(ops)}."))


def padded_positions(inputs: InputSet) -> np.ndarray | None:
    """[batch, seq] True where ``attention_mask`` is 0, or None when nothing is padded; raw
    audio's padded frames where the set names them (its mask counts samples, not frames)."""
    if inputs.padded is not None:
        return inputs.padded.numpy().astype(bool)
    if "attention_mask" not in inputs.names:
        return None
    return padding_of(inputs.tensors[inputs.names.index("attention_mask")])


def mask_argument(inputs: InputSet) -> int | None:
    """The argument index of the set's attention mask when it pads something (``harness check
    --padding-mask``), else None."""
    if inputs.padded is not None:  # frames, not the mask's samples: check compares them all
        return None
    return inputs.names.index("attention_mask") if padded_positions(inputs) is not None else None


def _numpy(value: torch.Tensor | np.ndarray) -> np.ndarray:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value


def _check(which: InputSetName, inputs: InputSet, numerics: NumericsResult, subject: Subject,
           program_run: tuple[float | None, bool], npz: str) -> NumericsCheck:
    outputs = [_output_diff(o, subject.output_names[o.index] if o.index < len(subject.output_names) else "")
               for o in numerics.outputs]
    program_diff, program_failed = program_run
    return NumericsCheck(
        inputs=which, description=inputs.description, verdict=PortOutcome.parse(numerics.verdict.value),
        max_abs_diff=max((float(o.max_abs_diff) for o in numerics.outputs), default=0.0),
        max_rel_diff=max((float(o.max_rel_diff) for o in numerics.outputs), default=0.0),
        outputs=outputs, problem=numerics.problem,
        program_max_abs_diff=program_diff, program_failed=program_failed, inputs_file=npz,
        float_noise=_float64_disagreements(numerics))


def _output_diff(o: OutputComparison, name: str) -> OutputDiff:
    diff = OutputDiff(index=o.index, name=name, dtype=o.dtype, shape=list(o.shape),
                      max_abs_diff=float(o.max_abs_diff), max_rel_diff=float(o.max_rel_diff),
                      mismatched=o.mismatched, total=o.total, tolerance=o.tolerance.render(),
                      problem=o.problem)
    noise = o.noise
    if noise is not None:
        diff.float64_rms, diff.eager_float64_rms = noise.compiled_rms, noise.eager_rms
        diff.float64_max_abs_diff, diff.eager_float64_max_abs_diff = noise.compiled_max, noise.eager_max
        diff.float64_scale_rms, diff.float64_scale_max = noise.scale_rms, noise.scale_max
        diff.float64_ratio, diff.float64_worst_ratio = noise.ratio, noise.worst_ratio
        diff.float64_bias = noise.bias
    return diff


@dataclass(frozen=True)
class _ProgramRun:
    """The imported program (trace, export, ONNX file) run once on a set."""

    outputs: tuple[torch.Tensor, ...] | None  # None: no program, or it failed
    failed: bool = False                      # it raised (a frozen shape, an exporter's bug)


def _run_program(program: Callable[[InputSet], Sequence[torch.Tensor]] | None,
                 inputs: InputSet) -> _ProgramRun:
    if program is None:
        return _ProgramRun(None)
    try:
        with torch.no_grad():
            return _ProgramRun(tuple(as_tuple(program(inputs))))
    except Exception:  # the program may not run on other values (a frozen shape): say so
        return _ProgramRun(None, failed=True)


def _program_ok(ran: _ProgramRun, expected: list, padded: np.ndarray | None,
                tolerances: Tolerances, wide: list | None) -> bool | None:
    """The imported program judged against eager by the same rule as the compiled one (the
    float64 rule where eager runs in float64; padded positions left out): an ONNX file in
    onnxruntime runs other kernels than eager and is never bit-exact, so "it differs at all"
    cannot tell an exporter's bug from rounding. None: no program, or it did not run."""
    if ran.outputs is None:
        return None
    got = [_numpy(g) for g in ran.outputs]
    if padded is not None:
        try:
            got, _, _ = exclude_positions(got, [_numpy(e) for e in expected], padded)
        except Exception:  # other shapes than eager's: compare says so
            pass
    return compare(got, expected, tolerances, wide).ok


def _program_diff(ran: _ProgramRun, subject: Subject, inputs: InputSet) -> tuple[float | None, bool]:
    """The imported program (trace or export) in PyTorch against eager: (max abs diff, whether
    it failed to run); (None, False) when there is no program to run."""
    if ran.outputs is None:
        return None, ran.failed
    got = ran.outputs
    expected = subject.expected(inputs)
    if len(got) != len(expected):
        return math.inf, False
    diffs = [float((a.double() - b.double()).abs().max()) if a.shape == b.shape and a.numel() else
             (0.0 if a.shape == b.shape else math.inf) for a, b in zip(got, expected, strict=False)]
    return max(diffs, default=0.0), False


def _no_diagnosis(options: PortOptions) -> PortOptions:
    """The RefBackend's lowering runs on the bindings, not torch-mlir-opt: the blocker tools
    (torch-mlir-opt runs) do not apply; the record's own diagnostics do."""
    return replace(options, diagnose=False)
