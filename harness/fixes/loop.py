"""The one loop every torch IR fix runs under: run the stages; where one fails, find its
blockers, apply each fix that answers one to that stage's input, verify, and run again from
there.

- Only fixes whose blocker appears run (``tools.blockers``: the op whose conversion failed;
  for a failure that is not a legalization, the first error's message).
- After each fix the IR before and after it are compared in the reference evaluator
  (:mod:`.verify`); a fix that changes the numbers is rolled back (its file is kept, unused)
  and recorded as such; an unverifiable one (no weights, ops the evaluator lacks) is kept and
  marked unverified.
- A fix is tried at most once per stage; the loop ends when every stage passes, when no fix
  answers what still blocks, or after ``max_fixes`` tries.
- Fixes of another level that answer a remaining blocker (a module fix for ``prim.PythonOp``)
  are named in ``elsewhere``: they need the model, not the IR (``harness port --fix``).

``harness fix FILE`` (:mod:`.file`) and ``harness port --fix`` call :func:`fix_stages`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness import defaults
from harness.compiler.mlir import WriteOptions, write_module
from harness.compiler.targets import LINALG_LOWERING
from harness.compiler.mlir import is_bytecode, read_module
from harness.compiler.outcomes import Outcome
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions
from harness.compiler.stages import StageHooks, StageOptions, StageResult, StageRunner, run_stages
from harness.execute.lowering import Driver, resolve, run_stage
from harness.execute.closeness import Tolerances
from harness.diagnose.blockers import BlockerAnalysis, analyze

from .base import Application, BlockerSeen, Fix, IRFix, RefusedSite, TargetFix
from .catalog import CATALOG, answering, choose
from .outcomes import StepOutcome
from .steps import FixStep
from .verify import ReferenceCache, verify_ir


@dataclass(frozen=True, kw_only=True)
class FixOptions:
    fixes: tuple[str, ...] = ()          # fix names to consider; () = every fix of the catalog
    verify: bool = True                  # the reference evaluator before and after each fix
    tolerances: Tolerances = Tolerances()
    opt: str | None = None               # torch-mlir-opt (None: $TORCH_MLIR_OPT, the wheel's)
    timeout_s: float = defaults.TIMEOUT_S  # per torch-mlir-opt run
    memory_limit_mb: int = defaults.MEMORY_LIMIT_MB  # address space per stage run (0: no limit)
    max_fixes: int = 8                   # fixes tried in all before the loop gives up
    catalog: tuple[Fix, ...] = CATALOG   # the fixes to choose from (a test's own, or the project's)


@dataclass(frozen=True)
class PriorRun:
    """A stage's run the caller made already: the loop starts from it instead of running it
    again, and from its blockers when they were analysed."""

    record: RunRecord
    analysis: BlockerAnalysis | None = None

    def analysis_of(self, record: RunRecord) -> BlockerAnalysis | None:
        return self.analysis if record is self.record else None


@dataclass
class StagesFixed:
    """The stages as they last ran (on the fixed inputs), and every fix tried."""

    stages: list[str]
    results: list[StageResult] = field(default_factory=list)  # one per stage reached, in order
    steps: list[FixStep] = field(default_factory=list)
    remaining: list[BlockerSeen] = field(default_factory=list)  # what still blocks
    elsewhere: list[tuple[str, BlockerSeen]] = field(default_factory=list)  # other-level fixes
    analysis: BlockerAnalysis | None = None                  # of the last failure

    @property
    def records(self) -> list[RunRecord]:
        return [r.record for r in self.results]

    @property
    def inputs(self) -> list[str]:
        """The file each stage ran on (a fix may have put another in place)."""
        return [r.input_path for r in self.results]

    @property
    def ok(self) -> bool:
        return len(self.records) == len(self.stages) and all(r.ok for r in self.records)

    @property
    def failed(self) -> RunRecord | None:
        return next((r for r in self.records if not r.ok), None)

    @property
    def failed_stage(self) -> str:
        return next((s for s, r in zip(self.stages, self.records, strict=False) if not r.ok), "")

    @property
    def output(self) -> str:
        """The last stage's output, when every stage passed."""
        return self.records[-1].output_path if self.ok else ""

    @property
    def kept(self) -> list[FixStep]:
        return [s for s in self.steps if s.kept]


def fix_stages(input_path: str | os.PathLike, stages: Sequence[str], folder: str | os.PathLike, *,
               stem: str, options: FixOptions = FixOptions(),
               cache: ReferenceCache | None = None,
               say: Callable[[str], None] | None = None,
               prior: PriorRun | None = None) -> StagesFixed:
    """Runs ``stages`` on ``input_path`` with files in ``folder`` (``STEM.N.STAGE.mlir``),
    fixing where a stage fails (see the module doc). ``cache`` holds the inputs the fixes are
    verified on; None (or ``options.verify`` off) leaves them unverified.

    ``prior``: the caller's own run of ``stages[0]`` on ``input_path``, used instead of running
    it again (a port's failing stage cost as much the second time: minutes for a runaway pass)."""
    folder = Path(folder)
    reuse = {(str(input_path), stages[0]): prior.record} if prior is not None and stages else {}
    fixes = [f for f in choose(options.fixes, options.catalog) if isinstance(f, IRFix)]
    others = [f for f in choose(options.fixes, options.catalog) if not isinstance(f, IRFix)]
    result = StagesFixed(list(stages))
    tried: set[tuple[int, str]] = set()
    checking = cache if options.verify else None

    def record(step: FixStep) -> None:
        result.steps.append(step)
        if say is not None:
            say(step.render()[0])

    def before(i: int, stage: str, input_path: Path) -> Path:
        """A known miscompile's fix on the stage's input, when one of its ops is there."""
        if stage not in MISCOMPILE_STAGES:
            return input_path
        for fix in fixes:
            if fix.miscompiles and (i, fix.name) not in tried and len(result.steps) < options.max_fixes:
                tried.add((i, fix.name))
                step = _preempt(fix, stage, input_path, folder, len(result.steps) + 1, checking, options)
                if step is not None:
                    record(step)
                    if step.kept:
                        input_path = Path(step.output_path)
        return input_path

    def failed(i: int, ran: StageResult) -> Path | None:
        """The fixes that answer the stage's blockers, on its input: the fixed input to run the
        stage on again, or None when no fix is left or none was kept."""
        seen, result.analysis = blockers_of(ran.record, stages[i], options,
                                            prior.analysis_of(ran.record) if prior else None)
        result.remaining = seen
        result.elsewhere = [(f.name, b) for f, b in answering(seen, others)]
        todo = [(f, b) for f, b in answering(seen, fixes)
                if isinstance(f, IRFix) and (i, f.name) not in tried]  # all are; answering says Fix
        current, progressed = Path(ran.input_path), False
        for fix, blocker in todo[: max(0, options.max_fixes - len(result.steps))]:
            tried.add((i, fix.name))
            if say is not None:
                say(f"{stages[i]} is blocked by {blocker}: trying {fix.name}")
            step = apply_ir_fix(fix, blocker, stages[i], current, folder, number=len(result.steps) + 1,
                                cache=checking, options=options)
            record(step)
            if step.kept:
                current, progressed = Path(step.output_path), True
        return current if progressed else None

    ran = run_stages(input_path, stages, folder, stem=stem,
                     options=StageOptions(opt=options.opt, timeout_s=options.timeout_s,
                                          memory_limit_mb=options.memory_limit_mb),
                     hooks=StageHooks(before=before, failed=failed, run=_runner(options.opt, reuse)))
    result.results = ran
    if result.ok:
        result.remaining, result.elsewhere = [], []
    return result


#: Stages whose lowering has known miscompiles: a fix with ``miscompiles`` runs on their input
#: when one of its ops is there (no error shows them; the numbers would).
MISCOMPILE_STAGES = (LINALG_LOWERING,)


def _preempt(fix: IRFix, stage: str, input_path: Path, folder: Path, number: int,
             cache: ReferenceCache | None, options: FixOptions) -> FixStep | None:
    """A miscompile's fix on ``stage``'s input when one of its ops is there; None when none is
    (or every site was left alone: nothing to report)."""
    data = Path(input_path).read_bytes()
    if not is_bytecode(data[:4]) and not any(op.encode() in data for op in fix.miscompiles):
        return None
    blocker = BlockerSeen(op=fix.miscompiles[0], message="lowers with wrong numbers (known "
                          "miscompile)", stage=stage)
    step = apply_ir_fix(fix, blocker, stage, input_path, folder, number=number, cache=cache,
                        options=options)
    if step.outcome is StepOutcome.NOTHING_CHANGED and not (step.application and step.application.refused):
        return None
    return step


def _runner(opt: str | None, reuse: dict[tuple[str, str], RunRecord]) -> StageRunner:
    """How the loop runs a stage: a run in ``reuse`` (the caller's, by input and stage) is taken
    once instead of running the stage again; any other runs on torch-mlir-opt."""
    def run(input_path: Path, stage: str, _textual: str, out: Path, run_options: RunOptions) -> RunRecord:
        known = reuse.pop((str(input_path), stage), None)
        if known is not None and (not known.ok or _copied(known.output_path, out)):
            return known
        return run_stage(input_path, stage, output_path=out, opt=opt, options=run_options)
    return run


def _copied(source: str, target: Path) -> bool:
    """A passing prior run's output put where the loop expects it (a hard link where it can)."""
    if not source or not Path(source).is_file():
        return False
    try:
        target.unlink(missing_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
    except OSError:
        return False
    return True


def blockers_of(record: RunRecord, stage: str, options: FixOptions,
                known: BlockerAnalysis | None = None) -> tuple[list[BlockerSeen], BlockerAnalysis | None]:
    """What blocks a failed stage: the ops whose conversion failed for a legalization failure
    (the reported op when the analysis finds none), else the first error's message. ``known``:
    the analysis of this very run, when the caller made it already."""
    if record.outcome is Outcome.LEGALIZATION_FAILURE and resolve(stage)[1] is not Driver.BINDINGS:
        # (a stage on the bindings, TOSA on to linalg, has no torch-mlir-opt to analyse it
        # with: its first error stands.) The blockers only: their conversion replays (most of
        # an analysis's runs) are for a diagnosis, made by with_replays when the port stays
        # blocked.
        analysis = known or analyze(record.input_path, resolve(stage)[0], opt=record.binary,
                                    timeout_s=options.timeout_s, replay_conversions=False)
        found = [BlockerSeen(op=b.name, stage=stage) for b in analysis.blockers]
        if not found and record.signature.op:
            found = [BlockerSeen(op=record.signature.op, stage=stage)]
        return found, analysis
    first = record.first_error()
    message = first.message if first is not None else str(record.signature)
    return [BlockerSeen(op=record.signature.op, message=message, stage=stage)], None


def rewrite_copy(fix: IRFix | TargetFix, blocker: BlockerSeen, stage: str,
                 input_path: str | os.PathLike, folder: Path, *, number: int,
                 opt: str | None = None) -> FixStep:
    """``fix``'s rewrite of a copy of ``input_path`` (text or bytecode, kept as it was), written
    as ``STEM.fixN-FIX`` in ``folder`` when it changed something (``output_path``); a rewrite
    that MLIR's verifier rejects is written nowhere, its sites refused with the verifier's word.
    The step's outcome is the caller's to say (nothing changed until then)."""
    step = FixStep(fix.name, fix.level, blocker, stage, StepOutcome.NOTHING_CHANGED,
                   input_path=str(input_path))
    parsed = read_module(input_path, opt=opt)
    if parsed is None:
        step.application = Application(fix.name, fix.level)
        return step
    context, module = parsed
    with context:
        app = step.application = fix.rewrite(module)
        if not app.applied:
            return step
        try:
            module.verify()
        except Exception as error:  # the bindings' MLIRError, with the verifier's diagnostics
            first = (str(error).strip().splitlines() or ["?"])[0][:200]
            app.refused.append(RefusedSite(fix.name, Path(input_path).name,
                                           f"the rewritten IR does not verify: {first}"))
            app.changed.clear()
            return step
        bytecode = is_bytecode(Path(input_path).read_bytes()[:4])
        stem = Path(input_path).name.removesuffix(".mlirbc").removesuffix(".mlir")
        out = folder / f"{stem}.fix{number}-{fix.name}.{'mlirbc' if bytecode else 'mlir'}"
        write_module(module, out, WriteOptions(keep_weights=True, bytecode=bytecode))
    step.output_path = str(out)
    return step


def apply_ir_fix(fix: IRFix, blocker: BlockerSeen, stage: str, input_path: str | os.PathLike,
                 folder: Path, *, number: int, cache: ReferenceCache | None,
                 options: FixOptions = FixOptions()) -> FixStep:
    """``fix`` on a copy of ``input_path``, written beside the stage files and verified (at
    ``options.tolerances``, with ``options.opt``)."""
    step = rewrite_copy(fix, blocker, stage, input_path, folder, number=number, opt=options.opt)
    if not step.output_path:
        return step
    out = step.output_path
    if cache is not None:
        step.verification = verify_ir(input_path, out, cache, options.tolerances)
    step.outcome = StepOutcome.ROLLED_BACK if (step.verification is not None
                                               and step.verification.changed) else StepOutcome.KEPT
    return step
