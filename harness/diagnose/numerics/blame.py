"""Which pass choices make a localized miscompile go away, and so who is at fault.

The chain a localization found is replayed, as a piece fed the reference's values, with one
choice changed at a time:

- the RefBackend's lowering (pipelines.toml ``linalg-to-llvm``) with one pass left out: the
  same linalg, lowered without it. All variants are lowered in one worker request, and only
  those whose LLVM differs from the full pipeline's and that still run are compared. A variant
  that gives the right values says the linalg was right and that pass makes it wrong.
- an op of the chain decomposed at the torch level (``torch-function-to-torch-backend-pipeline``
  keeping every other op of the chain backend-legal): the op kept backend-legal, as the user's
  pipeline kept it, and lowered by torch-to-linalg, against the same math in other ops.

The verdict (``Fault``): the RefBackend's lowering when a pass left out fixes it; the linalg
pipeline when only a decomposition does; the torch-level pipeline when the reference of the
contract-level IR already differs from the user's file; else undetermined.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.compiler import pipelines
from harness.compiler.targets import TARGETS
from harness.compiler.runner import RunOptions
from harness.enums import ParsableEnum
from harness.execute.levels import decompose_pipeline, join
from harness.execute.outcomes import CheckOutcome
from harness.execute.lowering import LLVM_PIPELINE, run_stage
from harness.execute.probe import ProbeOptions, ProbeResult, judge, run_program
from harness.execute.refbackend import RefBackendResult
from harness.execute.backend import SearchRunner
from harness.compiler.pipeline_text import parse_pipeline

from .diffs import program_terms
from .programs import CutProgram
from .subject import NumericsSubject


class Fault(ParsableEnum):
    """Who computes the wrong values."""

    TORCH_LEVEL = "torch-level pipeline"   # the contract-level IR already means something else
    LINALG = "linalg pipeline"             # torch-to-linalg's linalg is wrong
    REFBACKEND = "RefBackend lowering"     # the linalg is right; linalg-to-llvm makes it wrong
    UNDETERMINED = "undetermined"          # no choice tried changed the values


class ChoiceKind(ParsableEnum):
    """What a replay changed."""

    DROP_REFBACKEND_PASS = "drop-refbackend-pass"  # the RefBackend's lowering without one pass
    DECOMPOSE_OP = "decompose-op"                  # one op decomposed before torch-to-linalg


@dataclass
class ReplayedChoice:
    """One pass choice replayed on the chain, and what it gave."""

    kind: ChoiceKind
    what: str              # the pass left out, or the op decomposed
    outcome: CheckOutcome
    detail: str = ""

    @property
    def fixes(self) -> bool:
        return self.outcome is CheckOutcome.VERIFIED

    def action(self) -> str:
        return {ChoiceKind.DROP_REFBACKEND_PASS: f"RefBackend without {self.what}",
                ChoiceKind.DECOMPOSE_OP: f"{self.what} decomposed before torch-to-linalg"}[self.kind]

    def describe(self) -> str:
        verdict = "makes it right" if self.fixes else \
            "still wrong" if self.outcome is CheckOutcome.NUMERICS_MISMATCH else self.outcome.value
        return f"{self.action()}: {verdict}"

    def to_json(self) -> dict:
        return {"kind": self.kind.value, "what": self.what, "outcome": self.outcome.value,
                "detail": self.detail, "fixes": self.fixes}


@dataclass
class Blame:
    fault: Fault
    reason: str
    choices: list[ReplayedChoice] = field(default_factory=list)
    runs: int = 0                  # RefBackend runs the replays took
    variants_lowered: int = 0      # RefBackend pipelines lowered (one request)

    @property
    def fixes(self) -> list[ReplayedChoice]:
        return [c for c in self.choices if c.fixes]

    def to_json(self) -> dict:
        return {"fault": self.fault.value, "reason": self.reason, "runs": self.runs,
                "variants_lowered": self.variants_lowered,
                "choices": [c.to_json() for c in self.choices]}


def torch_level_fault(subject: NumericsSubject) -> Blame:
    worst = max((o.max_abs_diff for o in subject.torch_level.outputs), default=0.0) \
        if subject.torch_level else 0.0
    return Blame(Fault.TORCH_LEVEL,
                 f"the reference evaluator gives other values for the IR after "
                 f"{subject.split.to_torch} than for {subject.path.name} itself (max abs diff "
                 f"{worst:.3g}): the torch-level passes changed what the model computes, before "
                 "any lowering to linalg")


def blame(subject: NumericsSubject, program: CutProgram, piece: Path, result: ProbeResult,
          worker: SearchRunner, options: ProbeOptions,
          say: Callable[[str], None] | None = None) -> Blame:
    """Replays ``program`` (written at ``piece``, run as ``result``) with each pass choice."""
    say = say or (lambda _line: None)
    runs_before = worker.runs
    choices: list[ReplayedChoice] = []
    say("replaying the chain with each RefBackend pass left out")
    lowered = _drop_refbackend_passes(program, subject, result, worker, options, choices)
    say("replaying the chain with its ops decomposed")
    _decompose_ops(program, subject, piece, worker, options, choices)
    dropped = [c for c in choices if c.fixes and c.kind is ChoiceKind.DROP_REFBACKEND_PASS]
    decomposed = [c for c in choices if c.fixes and c.kind is ChoiceKind.DECOMPOSE_OP]
    if dropped:
        names = ", ".join(c.what for c in dropped)
        fault, reason = Fault.REFBACKEND, (
            f"the linalg from {_short(options.to_linalg)} gives the right values when the "
            f"RefBackend's lowering leaves out {names}: the linalg is right, and {names} makes it "
            "wrong")
    elif decomposed:
        names = ", ".join(c.what for c in decomposed)
        fault, reason = Fault.LINALG, (
            f"no RefBackend pass left out makes it right, and with {names} decomposed before "
            f"{_short(options.to_linalg)} the values are right: torch-to-linalg's lowering of "
            f"{names} is wrong")
    else:
        fault, reason = Fault.UNDETERMINED, (
            "no pass choice tried (each RefBackend pass left out, each op of the chain "
            "decomposed) makes the values right")
    return Blame(fault, reason, choices, worker.runs - runs_before, lowered)


def _short(textual: str) -> str:
    """A target's lowering by our name where the textual pipeline runs it."""
    known = pipelines.default()
    return next((path.lowering for path in TARGETS.values()
                 if known.get(path.lowering).pass_name in textual), textual)


def _drop_refbackend_passes(program: CutProgram, subject: NumericsSubject, result: ProbeResult,
                            worker: SearchRunner, options: ProbeOptions,
                            choices: list[ReplayedChoice]) -> int:
    passes = list(_refbackend_passes(options.llvm_pipeline))
    variants = [join(parse_pipeline(f"builtin.module({','.join(passes)})"))]
    variants += [join(parse_pipeline(
                     f"builtin.module({','.join(p for j, p in enumerate(passes) if j != i)})"))
                 for i in range(len(passes))]
    lowered = worker.lower_variants(result.linalg_path, variants)
    full = lowered[0]
    inputs = program.inputs(subject.values)
    expected = program.expected(subject.values)
    wide = subject.program_wide(program)
    terms = program_terms(subject, program)
    seen: dict[str, ReplayedChoice] = {}
    # The same pass may appear twice (convert-scf-to-cf); each occurrence is a choice.
    names: Counter[str] = Counter()
    for name, variant in zip(passes, lowered[1:], strict=False):
        names[name] += 1
        label = name if passes.count(name) == 1 else f"{name} (#{names[name]})"
        if not variant.ok:
            continue  # it does not lower without it: a pass the lowering needs
        if full.ok and variant.digest == full.digest:
            continue  # it changes nothing here
        if variant.digest in seen:
            prior = seen[variant.digest]
            if prior.outcome is not CheckOutcome.FAILS:
                choices.append(ReplayedChoice(ChoiceKind.DROP_REFBACKEND_PASS, label, prior.outcome,
                                              prior.detail))
            continue
        ran: RefBackendResult = worker.execute(variant.llvm_path, inputs, program.signature)
        if not ran.ok:  # it lowers but does not run without it: a pass the lowering needs
            seen[variant.digest] = ReplayedChoice(ChoiceKind.DROP_REFBACKEND_PASS, label, CheckOutcome.FAILS)
            continue
        judged = judge(ProbeResult(result.outcome), ran.outputs, expected, options.tolerances, wide, terms)
        choice = ReplayedChoice(ChoiceKind.DROP_REFBACKEND_PASS, label, judged.outcome,
                                judged.describe() if not judged.numerics or not judged.numerics.ok else "")
        seen[variant.digest] = choice
        choices.append(choice)
    return len(variants)


def _refbackend_passes(spec: str) -> tuple[str, ...]:
    defined = pipelines.default().pipelines.get(spec)
    if defined is not None and defined.passes:
        return tuple(defined.passes)
    return tuple(p.textual().removeprefix("builtin.module(").removesuffix(")")
                 if p.anchors[:1] == ("builtin.module",) else p.textual()
                 for p in parse_pipeline(pipelines.default().resolve(spec)))


def _decompose_ops(program: CutProgram, subject: NumericsSubject, piece: Path, worker: SearchRunner,
                   options: ProbeOptions, choices: list[ReplayedChoice]) -> None:
    kinds = list(dict.fromkeys(subject.cuts.label(p) for p in program.ops))
    folder = piece.parent / f"{piece.stem}-decomposed"
    folder.mkdir(exist_ok=True)
    everything = folder / "all.mlir"
    record = run_stage(piece, decompose_pipeline(()), output_path=everything, opt=options.opt,
                       options=RunOptions(timeout_s=options.timeout_s))
    if not record.ok:
        return
    text = everything.read_text()
    decomposable = [k for k in kinds if f"torch.{k} " not in text]
    inputs = program.inputs(subject.values)
    expected = program.expected(subject.values)
    wide = subject.program_wide(program)
    terms = program_terms(subject, program)
    for kind in decomposable:
        keep = tuple(k for k in kinds if k != kind)
        pipeline = decompose_pipeline(keep)
        out = folder / f"{kind}.mlir"
        record = run_stage(piece, pipeline, output_path=out, opt=options.opt,
                           options=RunOptions(timeout_s=options.timeout_s))
        if not record.ok:
            choices.append(ReplayedChoice(ChoiceKind.DECOMPOSE_OP, kind, CheckOutcome.FAILS,
                                          "the torch-level pipeline fails"))
            continue
        run_folder = folder / kind
        run_folder.mkdir(exist_ok=True)
        judged = run_program(out, inputs, expected, program.signature, worker=worker,
                             options=options, work_dir=run_folder, wide=wide, terms=terms)
        detail = judged.describe() if judged.outcome is not CheckOutcome.VERIFIED else ""
        choices.append(ReplayedChoice(ChoiceKind.DECOMPOSE_OP, kind, judged.outcome, detail))


__all__ = ["LLVM_PIPELINE", "Blame", "Fault", "ReplayedChoice", "blame", "torch_level_fault"]
