"""The one op that computes wrong: a miscompile narrowed from a chain to a single op.

1. Values inside the program: the function at the torch backend contract is lowered once with
   the result of every computing op also returned, and run on the reference's inputs. Each value
   is compared with the reference evaluator's value for the same op, at the tolerance of the
   dtype the op computes in (a cast carries its input's: an f32 -> f64 upcast of an error made
   in f32 is judged at f32's tolerance, not f64's).
2. Candidates are the ops whose own output departs while every operand agrees, in order. Each is
   cut out alone (``programs``: the program ``(p-1, p]``), fed the reference's operand values,
   and run: the first that is still off on its own is the culprit, and that one-op program, with
   its inputs and expected values, is the reproducer.
3. Returning a value gives it one more use, and a fusion that needs one use may then not
   happen: when the observed run is right although the function is not, the ops of
   the localized chain are tried alone instead; when none is wrong alone, the chain goes wrong
   together and its last op (the first wrong value) stands for it.
4. Its share of the final difference: the rest of the function, evaluated in eager PyTorch with
   only the culprit's value replaced by the lowered one, against the reference.
"""

from __future__ import annotations

import math
import shlex
import time
from pathlib import Path
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import numpy.typing as npt
import torch
from torch_mlir import ir

from harness.compiler import jsonfile
from harness.compiler.locations import SourceLocation, file_locations
from harness.compiler.targets import LINALG_LOWERING
from harness.execute.inputs import save_npz
from harness.execute.closeness import NOISE_FACTOR, compare_one
from harness.execute.ref_ops import UNINITIALIZED_OPS, is_random
from harness.execute.probe import ProbeOptions, ProbeResult, run_program
from harness.execute.reference import ReferenceOptions, describe_value, evaluate
from harness.execute.backend import SearchRunner

from ..source import model_frame
from .diffs import OwnDiff, computes_in, own_diff, program_terms
from .lowered import LoweredView, lowered_view
from .opinion import Opinion, second_opinions
from .programs import END, CutProgram, Cuts, ValueRef, value_ref
from .subject import NumericsSubject, pipeline_name

MAX_CANDIDATES = 4  # one-op runs tried from the observed run before the chain's ops
LARGEST_SHOWN = 5  # ops named with their ratios when no single op is wrong
CHAIN_NAMED = 6  # a headline names at most this many of the ops that go wrong together


@dataclass
class Culprit:
    position: int                  # in the contract-level function's body
    name: str                      # aten.mm
    frames: list[SourceLocation]   # innermost first
    call: str                      # aten.gelu(f32[2,8], 'tanh'): its operands, constants spelled out
    computes_in: str               # the dtype whose tolerance judges it
    own: OwnDiff                   # fed the reference's operand values
    inside: OwnDiff | None         # in the observed run of the whole function (None: not observed)
    alone: bool                    # wrong on its own; False: only together with its chain
    chain: list[str] = field(default_factory=list)  # the ops that go wrong together (not alone)
    share: float | None = None     # of the final max abs diff its error alone causes
    final_abs_diff: float = 0.0
    program_path: str = ""         # the one-op reproducer (the chain's, when not alone)
    inputs_path: str = ""
    expected_path: str = ""
    pipeline: str = LINALG_LOWERING
    opinions: list[Opinion] = field(default_factory=list)
    # Its error's shape (float64 rule): the bias (mean signed error over rms: one sign is a wrong
    # constant) and the worst elements, each with its operands there, expected (float64) and got.
    profile: list[str] = field(default_factory=list)
    # The reproducer's linalg as lowered and after canonicalize (None: not made).
    lowered: LoweredView | None = None

    def where(self) -> str:
        """The model's line: the deepest frame in the model's own code (a transformers modeling
        file, a torchvision or timm model, the user's file), else the innermost frame."""
        found = model_frame([f.file for f in self.frames])
        frame = self.frames[found if found is not None else 0] if self.frames else None
        return str(frame) if frame is not None else "no location"

    def library_frame(self) -> str:
        """The innermost frame when it is library code below the model's line ("" otherwise)."""
        found = model_frame([f.file for f in self.frames])
        return str(self.frames[0]) if self.frames and found is not None and found > 0 else ""

    def reproduce(self) -> str:
        return shlex.join(["harness", "check", self.program_path, "--pipeline", self.pipeline,
                           "--inputs", self.inputs_path])

    def headline(self) -> str:
        """One line: the op, its Python line, its own difference; a long chain by its length
        and the ops nearest the culprit (gemma3n_vision's listed 436 ops)."""
        before = self.chain[:-1]
        named = ", ".join(before) if len(before) <= CHAIN_NAMED else (
            f"the {len(before)} ops before it (nearest: {', '.join(before[-CHAIN_NAMED:])})")
        how = "computes wrong" if self.alone else \
            f"computes wrong only together with {named} (none is wrong alone)"
        return f"{self.name} {how} at {self.where()}: {self.own.render()}"

    def render(self) -> list[str]:
        lines = [f"the op that computes wrong: {self.headline()}",
                 *([f"  in library code at {self.library_frame()}"] if self.library_frame() else []),
                 f"  call: {self.call}",
                 f"  computes in {self.computes_in}", *(f"  {line}" for line in self.profile)]
        if self.inside is not None:
            lines.append(f"  inside the whole program: {self.inside.render()}")
        if self.share is not None:
            lines.append(f"  share of the final difference: {self.share:.0%} of max abs diff "
                         f"{self.final_abs_diff:.3g} (the whole function as lowered)")
        if self.opinions:
            lines.append("  second opinion (each way against eager PyTorch's value of the op):")
            lines += [f"    {opinion.render()}" for opinion in self.opinions]
            right = [o.way.value for o in self.opinions if o.right]
            lines.append(f"    right: {'; '.join(right)}" if right else
                         "    no way tried gives eager's value")
        lines.append(f"  reproduce: {self.reproduce()}")
        return lines

    def to_json(self) -> dict:
        d = jsonfile.plain(asdict(self))
        d["frames"] = [jsonfile.plain(asdict(f)) for f in self.frames]
        d["opinions"] = [o.to_json() for o in self.opinions]
        d["own"] = self.own.to_json()
        d["lowered"] = self.lowered.to_json() if self.lowered is not None else None
        d["inside"] = self.inside.to_json() if self.inside is not None else None
        return d


@dataclass
class OneOpResult:
    culprit: Culprit | None
    reason: str                    # why there is none, or how it was found
    runs: int = 0                  # RefBackend runs this took
    observed: int = 0              # values returned by the observed run
    ops: int = 0                   # of the contract-level function
    seconds: float = 0.0
    candidates: list[str] = field(default_factory=list)  # departing with agreeing operands, in order
    program: CutProgram | None = field(default=None, repr=False)  # the reproducer's program
    cut_short: str = ""            # why the chain may not be the shortest (a search budget)
    # No culprit, and every op the isolated run measured is within the float64 rule: what
    # differs at the outputs is rounding adding up (the RefBackend's in-order sums), no op's.
    every_op_within: bool = False

    def render(self) -> list[str]:
        if self.culprit is None:
            return [f"no single op: {self.reason}"]
        return [*self.culprit.render(),
                f"  found by {self.reason} ({self.runs} RefBackend runs, {self.seconds:.1f} s)",
                *([f"  {self.cut_short}"] if self.cut_short else [])]

    def to_json(self) -> dict:
        return {"culprit": self.culprit.to_json() if self.culprit else None, "reason": self.reason,
                "runs": self.runs, "observed": self.observed, "ops": self.ops, "seconds": self.seconds,
                "candidates": list(self.candidates), "cut_short": self.cut_short,
                "every_op_within": self.every_op_within}


def find_culprit(subject: NumericsSubject, worker: SearchRunner, options: ProbeOptions, *,
                 chain: CutProgram | None = None, chain_pipeline: str = LINALG_LOWERING,
                 localize_chain: Callable[[], CutProgram | None] | None = None,
                 opinions: bool = True, say: Callable[[str], None] | None = None) -> OneOpResult:
    """The one op that computes wrong (see the module docstring). ``chain``: the localized
    piece, when the caller has it; ``localize_chain`` finds it when the observed run is right."""
    began, runs_before = time.perf_counter(), worker.runs
    say = say or (lambda _line: None)
    finder = _Finder(subject, worker, options, say)
    result = finder.isolated_run()
    if result is None:
        result = finder.observed_run()
    if result is None and finder.hidden and (chain is not None or localize_chain is not None):
        if chain is None and localize_chain is not None:
            chain = localize_chain()
        result = finder.from_chain(chain, chain_pipeline) if chain is not None else None
    if result is None:
        # every op measured on exact operands within the rule; an op that departed only inside
        # the observed run (its operands' rounding amplified) and was right alone is no culprit
        result = OneOpResult(None, finder.why, every_op_within=finder.every_op_within())
    elif result.culprit is not None:
        tried = finder.tried.get(result.culprit.position)
        result.program = tried[0] if tried is not None else None
        if result.culprit.alone:
            finder.share(result.culprit)
        if opinions:
            say(f"a second opinion on {result.culprit.name}")
            if result.culprit.alone and result.program is not None:
                result.culprit.opinions = second_opinions(
                    subject, result.culprit.position, result.culprit.own, result.program, worker, options)
    result.runs = worker.runs - runs_before
    result.observed = finder.observed
    result.ops = subject.ops()
    result.candidates = finder.candidates
    result.seconds = time.perf_counter() - began
    return result


class _Finder:
    def __init__(self, subject: NumericsSubject, worker: SearchRunner, options: ProbeOptions,
                 say: Callable[[str], None]):
        self.subject, self.worker, self.options, self.say = subject, worker, options, say
        self.cuts = subject.cuts
        self.folder = subject.work_dir / "one-op"
        self.folder.mkdir(exist_ok=True)
        self.why = "the function's results agree with the reference"
        self.observed = 0
        self.candidates: list[str] = []
        # Each op's own difference on the reference's operands (the isolated run), and the ops
        # it could not feed so (an operand with no value of its type: a list of tensors).
        self.own: dict[int, OwnDiff] = {}
        self.unmeasured: list[int] = []
        self.hidden = False  # the observed run is right: returning values hid the miscompile
        self.final_abs = 0.0
        self.final_within = True  # the outputs within the elementwise tolerance (the rule aside)
        # Each op run alone: its program, run and own difference; None when it cannot run alone.
        self.tried: dict[int, tuple[CutProgram, ProbeResult, OwnDiff | None] | None] = {}

    def _run(self, program: CutProgram, name: str, *, judged: bool = True) -> ProbeResult:
        """``judged``: its results compared by the float64 rule (the program evaluated in
        float64 once more); the observed, isolated and whole runs judge their values themselves."""
        path = self.folder / f"{name}.mlir"
        path.write_text(program.text)
        work = self.folder / name
        work.mkdir(exist_ok=True)
        values = self.subject.values
        return run_program(path, program.inputs(values), program.expected(values), program.signature,
                           worker=self.worker, options=self.options, work_dir=work,
                           wide=self.subject.program_wide(program) if judged else None,
                           terms=program_terms(self.subject, program))

    def every_op_within(self) -> bool:
        """Whether the isolated run measured every op that computes floats by the float64 rule
        (an op it left out only moves values, or computes none) and found each within it."""
        measured = all(d.judged and not d.departs for d in self.own.values())
        return bool(self.own) and measured and all(
            self.cuts.label(p) in EXACT_OPS or not _floats(self.cuts.ops[p]) for p in self.unmeasured)

    def isolated_run(self) -> OneOpResult | None:
        """Every op on the reference's operands in one run (``Cuts.isolated``): the ops whose own
        error passes the float64 rule's bound, in program order; the first that is still wrong
        cut out alone is the culprit. None when none is (a fusion across ops, which the observed
        run and the chain then look for), or the run fails."""
        positions = [p for p in self.cuts.computing() if _defined(self.cuts.ops[p], self.cuts.label(p))]
        try:
            program = self.cuts.isolated(positions)
        except Exception as e:  # the observed run still looks
            self.say(f"the ops cannot run each on its own operands: {e}")
            return None
        self.unmeasured = [p for p in positions if p not in set(program.ops)]
        if not program.ops:
            return None
        self.say(f"running {len(program.ops)} ops, each on the reference's values of its operands")
        ran = self._run(program, "isolated", judged=False)
        if not ran.outputs:
            self.say(f"the isolated run {ran.describe()}")
            return None
        by_op: dict[int, list[int]] = {}
        for i, ref in enumerate(program.results):
            by_op.setdefault(ref.op, []).append(i)
        for p, indices in by_op.items():
            self.own[p] = own_diff(self.subject, p, [ran.outputs[i] for i in indices],
                                   [program.results[i] for i in indices])
        departing = [p for p in sorted(self.own) if self.own[p].departs]
        self.candidates = [self.cuts.label(p) for p in departing]
        for p in departing[:MAX_CANDIDATES]:
            culprit = self._alone(p, None)
            if culprit is not None:
                culprit.final_abs_diff = self.final_abs = self._final_abs()
                return OneOpResult(culprit, "each op on the reference's operands, then the op alone")
        return None

    def _final_abs(self) -> float:
        """The whole function's largest difference from the reference as lowered (what the
        culprit's share is a share of); 0 when that run fails."""
        program = self.cuts.build(-1, END)
        ran = self._run(program, "whole", judged=False)
        values = self.subject.values
        return max((compare_one(i, a, values.get(r)).max_abs_diff for i, (a, r) in
                    enumerate(zip(ran.outputs, program.results, strict=False))), default=0.0)

    def observed_run(self) -> OneOpResult | None:
        """The whole function with every computing op's values returned; None when that run
        does not show the miscompile (then the chain decides)."""
        positions = tuple(p for p in self.cuts.computing() if _defined(self.cuts.ops[p], self.cuts.label(p)))
        program = self.cuts.build(-1, END, observe=positions)
        returned = _own_results(self.cuts, program)
        self.observed = len(program.results) - returned
        self.say(f"running the function with {self.observed} values inside it returned")
        ran = self._run(program, "observed", judged=False)
        if not ran.outputs:
            self.why = f"the observed run {ran.describe()}"
            self.hidden = True
            return None
        values = self.subject.values
        wide = self.subject.wide_outputs()
        own = program.results[:returned]
        wide = wide if wide is not None and len(wide) == len(own) else [None] * len(own)
        final = [compare_one(i, a, values.get(r), self.subject.options.tolerances, w)
                 for i, (a, r, w) in enumerate(zip(ran.outputs[:returned], own, wide, strict=False))]
        self.final_abs = max((o.max_abs_diff for o in final), default=0.0)
        # Rounding can add up past the float64 rule; past the elementwise tolerance it cannot
        # make values wrong outright (falcon on StableHLO: every element off, 2.6 absolute).
        self.final_within = all(not o.problem and not o.mismatched for o in final)
        if all(o.ok for o in final):
            self.why = "the function's results agree with the reference when its values are returned"
            self.hidden = True
            return None
        inside: dict[int, OwnDiff] = {}
        by_op: dict[int, list[int]] = {}
        for i, ref in enumerate(program.results[returned:], start=returned):
            by_op.setdefault(ref.op, []).append(i)
        for p, indices in by_op.items():
            inside[p] = own_diff(self.subject, p, [ran.outputs[i] for i in indices],
                                 [program.results[i] for i in indices])
        candidates = [p for p in sorted(inside) if inside[p].departs and self._operands_agree(p, inside)]
        self.candidates = self.candidates or [self.cuts.label(p) for p in candidates]
        # Tried alone: the candidates furthest off first (an op whose own error is amplified by
        # its operands' rounding, a subtraction of near-equal values, departs inside too, by
        # less than a wrong op); the culprit is the first in program order that is wrong alone.
        tried = sorted(sorted(candidates, key=lambda q: -_ratio(inside[q]))[:MAX_CANDIDATES])
        for p in tried:
            culprit = self._alone(p, inside[p])
            if culprit is not None:
                return OneOpResult(culprit, "the values inside the program, then the op alone")
        self.why = self._no_single_op(inside, tried)
        return None

    def _no_single_op(self, inside: dict[int, OwnDiff], tried: list[int]) -> str:
        """Why no op is named, with the largest ratios, so the claim can be checked: each op's
        own on the reference's operands when the isolated run gave them, else inside the run."""
        measured, where = (self.own, "fed the reference's operands") if self.own else \
            (inside, "inside the program, operands as lowered")
        largest = sorted((p for p in measured if measured[p].ratio is not None),
                         key=lambda q: -_ratio(measured[q]))[:LARGEST_SHOWN]
        ratios = ", ".join(f"{self.cuts.label(p)} {_ratio(measured[p]):.3g}x" for p in largest)
        shown = (f" (largest ratios of an op's own error to float32 eager's, {where}: {ratios}; at "
                 f"most {NOISE_FACTOR:g}x passes)") if ratios else ""
        cause = "rounding adding up" if self.final_within else TOGETHER
        if self.own and not any(d.departs for d in self.own.values()):
            return (f"each of {len(self.own)} ops, fed the reference's operands, is within the "
                    f"float64 rule, and no op whose output departs inside the program while its "
                    f"operands agree is wrong alone: the difference is {cause}{shown}")
        if not tried:
            return ("every op's output is within the float64 rule, or departs only where an "
                    f"operand does: the difference is {cause}{shown}")
        alone = []
        for p in tried:
            found = self.tried.get(p)
            own = found[2] if found is not None else None
            alone.append(f"{self.cuts.label(p)} " + (f"{_ratio(own):.3g}x" if own is not None and
                                                     own.ratio is not None else "not run"))
        return ("no op whose output departs while its operands agree is wrong alone: fed the "
                f"reference's operands, {'; '.join(alone)} of float32 eager's own error: the "
                f"difference is {cause}{shown}")

    def _operands_agree(self, position: int, inside: dict[int, OwnDiff]) -> bool:
        for v in self.cuts.ops[position].operands:
            ref = value_ref(self.cuts, v)
            if ref is not None and ref.op in inside and inside[ref.op].departs:
                return False
        return True

    def _alone(self, position: int, inside: OwnDiff | None) -> Culprit | None:
        """The op cut out alone, fed the reference's operands: a Culprit when still off."""
        if position not in self.tried:
            try:
                op = self.cuts.ops[position]
                program = self.cuts.build(self._alone_start(position), position, returning=tuple(
                    ValueRef(position, i) for i, r in enumerate(op.results)
                    if self.subject.values.fits(ValueRef(position, i), r.type)))
                name = f"op{position}_{self.cuts.label(position).replace('.', '_')}"
                self.say(f"running {self.cuts.label(position)} alone")
                ran = self._run(program, name)
            except Exception as e:  # an op that cannot stand alone is skipped
                self.say(f"{self.cuts.label(position)} cannot run alone: {e}")
                self.tried[position] = None
                return None
            own = None
            if ran.outputs:
                own = own_diff(self.subject, position, list(ran.outputs), list(program.results))
            self.tried[position] = (program, ran, own)
        tried = self.tried[position]
        if tried is None:
            return None
        program, ran, own = tried
        if own is None or not own.departs:
            return None
        culprit = self._culprit(position, own, inside, alone=True)
        self._write(culprit, program, list(ran.outputs))
        culprit.lowered = lowered_view(Path(ran.linalg_path), self.folder, "culprit", opt=self.options.opt,
                                       timeout_s=self.options.timeout_s)
        said = culprit.lowered.sentence(culprit.name) if culprit.lowered is not None else ""
        if said:
            culprit.profile.append(said)
        return culprit

    def _alone_start(self, position: int) -> int:
        """Where an op's own program starts: just before it, or before the lists of tensors it
        takes (``prim.ListConstruct``), which cannot be arguments: they come along, their
        tensors fed the reference's values (falcon's ``aten.index.Tensor_hacked_twin``, whose
        negative index TorchToStablehlo does not wrap, was skipped as "cannot run alone")."""
        start = position - 1
        for v in self.cuts.ops[position].operands:
            ref = value_ref(self.cuts, v)
            if (ref is not None and ref.op >= 0 and not self.cuts.movable[ref.op]
                    and self.cuts.ops[ref.op].operation.name == "torch.prim.ListConstruct"):
                start = min(start, ref.op - 1)
        return start

    def from_chain(self, chain: CutProgram, pipeline: str) -> OneOpResult:
        for p in chain.ops:
            culprit = self._alone(p, None)
            if culprit is not None:
                return OneOpResult(culprit, "the ops of the localized chain alone")
        ran = self._run(chain, "chain")
        wrong = [chain.results[i].op for i in ran.wrong_outputs() if chain.results[i].op >= 0]
        last = wrong[0] if wrong else chain.ops[-1]
        # The first wrong value and what feeds it inside the chain: nothing else.
        feeding = self.cuts.build(chain.start, last, returning=tuple(
            ValueRef(last, i) for i in range(len(self.cuts.ops[last].results))
            if self.subject.values.fits(ValueRef(last, i), self.cuts.ops[last].results[i].type)))
        if feeding.results and feeding.text != chain.text:
            trimmed = self._run(feeding, "feeding")
            if trimmed.mismatch:
                chain, ran = feeding, trimmed
        mine = [i for i, r in enumerate(chain.results) if r.op == last]
        own = own_diff(self.subject, last, [ran.outputs[i] for i in mine],
                       [chain.results[i] for i in mine]) if ran.outputs else \
            OwnDiff(0.0, 0.0, "", True)
        culprit = self._culprit(last, own, None, alone=False)
        culprit.chain = [self.cuts.label(p) for p in chain.ops]
        culprit.pipeline = pipeline
        self._write(culprit, chain, list(ran.outputs))
        self.tried[last] = (chain, ran, own)
        return OneOpResult(culprit, "the localized chain: no op of it is wrong alone")

    def _culprit(self, position: int, own: OwnDiff, inside: OwnDiff | None, *, alone: bool) -> Culprit:
        dtype = computes_in(self.subject, position)
        return Culprit(position, self.cuts.label(position),
                       file_locations(str(self.cuts.ops[position].location)), self._call(position),
                       dtype.value if dtype else "", own, inside, alone,
                       final_abs_diff=self.final_abs, pipeline=pipeline_name(self.subject.split.to_linalg),
                       profile=self._profile(position, own))

    def _profile(self, position: int, own: OwnDiff) -> list[str]:
        """The error's bias, and its worst elements with the operands' values there (operands of
        the result's shape: an elementwise op's inputs at that element)."""
        noise = own.noise
        if noise is None:
            return []
        lines = [f"error profile: rms {noise.compiled_rms:.3g} ({_ratio(own):.3g}x float32 eager's "
                 f"own), max {noise.compiled_max:.3g}, bias {noise.bias:+.2f} (mean signed error "
                 "over rms; near +-1: one sign, as a wrong constant gives)"]
        results = self.subject.values.by_op.get(position, ())
        result = results[noise.index] if noise.index < len(results) else None
        operands = []
        for v in self.cuts.ops[position].operands:
            ref = value_ref(self.cuts, v)
            value = self.subject.values.get(ref) if ref is not None else None
            if isinstance(value, torch.Tensor) and isinstance(result, torch.Tensor) \
                    and value.shape == result.shape:
                operands.append(value)
        for worst in noise.worst:
            inputs = [float(t[worst.at]) for t in operands]
            given = f"input {', '.join(f'{x:.9g}' for x in inputs)}: " if inputs else ""
            lines.append(f"  at [{','.join(str(i) for i in worst.at)}]: {given}expected {worst.expected:.9g} "
                         f"(float64), got {worst.got:.9g}, float32 eager {worst.eager:.9g}")
        return lines

    def _call(self, position: int) -> str:
        op = self.cuts.ops[position]
        values = self.subject.values
        parts = []
        for v in op.operands:
            ref = value_ref(self.cuts, v)
            if ref is None:
                parts.append(str(v.type))
                continue
            value = values.get(ref)
            if isinstance(value, np.ndarray):
                value = torch.from_numpy(value)
            parts.append(describe_value(value) if isinstance(value, (torch.Tensor, list, tuple))
                         else repr(value))
        attrs = [f"{a.name}={a.attr}" for a in op.attributes if a.name not in ("harness.value",)]
        return f"{self.cuts.label(position)}({', '.join(parts + attrs)})"

    def _write(self, culprit: Culprit, program: CutProgram, actual: list) -> None:
        folder = self.folder
        stem = "culprit" if culprit.alone else "chain"
        path = folder / f"{stem}.mlir"
        path.write_text(program.text)
        values = self.subject.values
        save_npz(folder / f"{stem}.inputs.npz", program.inputs(values))
        save_npz(folder / f"{stem}.expected.npz", [_array(v) for v in program.expected(values)],
                 prefix="result")
        save_npz(folder / f"{stem}.actual.npz", [_array(v) for v in actual], prefix="result")
        culprit.program_path = str(path)
        culprit.inputs_path = str(folder / f"{stem}.inputs.npz")
        culprit.expected_path = str(folder / f"{stem}.expected.npz")

    def share(self, culprit: Culprit) -> None:
        """The final difference the culprit's error causes alone, as a share of the real one."""
        p = culprit.position
        try:
            tried = self.tried[p]
            if tried is None:
                raise ValueError(f"{self.cuts.label(p)} did not run alone")
            actual = dict(zip(tried[0].results, tried[1].outputs, strict=False))
            rest = self.cuts.build(p, END)
            values = self.subject.values
            inputs = [actual[ref] if ref in actual else values.array(ref) for ref in rest.args]
            with self.subject.context:
                module = ir.Module.parse(rest.text)
                got = evaluate(module.operation, inputs, ReferenceOptions())
            expected = rest.expected(values)
            moved = max(compare_one(i, a, e).max_abs_diff
                        for i, (a, e) in enumerate(zip(got.outputs, expected, strict=False)))
        except Exception as e:  # a share is extra information, never a failure
            self.say(f"no share of the final difference: {e}")
            return
        if self.final_abs > 0:
            culprit.share = float(moved) / self.final_abs


#: Ops that only move, select or cast values: exact in any lowering that runs them right, so an
#: op of these the isolated run leaves out leaves no float64 measure missing.
EXACT_OPS = frozenset({
    "prim.ListConstruct", "prim.TupleConstruct", "prim.ListUnpack", "prim.TupleIndex", "aten.cat",
    "aten.stack", "aten.split.Tensor", "aten.split_with_sizes", "aten.unbind.int", "aten.chunk",
    "aten.view", "aten.reshape", "aten._reshape_alias", "aten.transpose.int", "aten.permute",
    "aten.slice.Tensor", "aten.select.int", "aten.expand", "aten.unsqueeze", "aten.squeeze.dim",
    "aten.squeeze", "aten.flatten.using_ints", "aten.contiguous", "aten.clone", "aten.index.Tensor",
    "aten.index.Tensor_hacked_twin", "aten.index_select", "aten.gather", "aten.where.self",
    "aten.masked_fill.Scalar", "aten.masked_fill.Tensor", "aten.broadcast_to", "aten.t",
    "aten.detach", "aten.alias", "aten.copy", "aten.to.dtype", "aten._to_copy", "aten.size.int",
    "aten.embedding", "aten.repeat", "aten.tile", "aten.roll", "aten.flip", "aten.pad",
    "aten.constant_pad_nd"})


def _floats(op: ir.Operation) -> bool:
    """Whether an op gives a float tensor (by its IR result types)."""
    return any(t in str(r.type) for r in op.results for t in (",f16>", ",bf16>", ",f32>", ",f64>"))


def _ratio(diff: OwnDiff | None) -> float:
    """An op's float64 ratio; an op judged only by the flat tolerance ranks as departing most."""
    if diff is None:
        return 0.0
    ratio = diff.ratio
    return ratio if ratio is not None else (math.inf if diff.departs else 0.0)


#: Why no single op is named when the outputs are wrong past the elementwise tolerance.
TOGETHER = ("not rounding (the outputs are off past the elementwise tolerance): the ops compute "
            "right one at a time and wrong together, so the lowering of several ops at once is "
            "at fault (a pattern or fusion across ops, or a choice made for the whole function); "
            "'harness bisect --numerics' on the same file names the pass")


def _own_results(cuts: Cuts, program: CutProgram) -> int:
    """How many of the observed program's results are the function's own."""
    func_results = len(list(cuts.block.operations)[-1].operation.operands)
    return min(func_results, len(program.results))


def _defined(op: ir.Operation, label: str) -> bool:
    """Whether an op's value is defined, so a lowering must reproduce it: not uninitialized
    memory (``aten.empty``: the reference zeroes it) and not random draws."""
    base = label.rsplit(".", 1)[0] if label.count(".") >= 2 else label
    return base not in UNINITIALIZED_OPS and not is_random(op)


def _array(value: torch.Tensor | npt.ArrayLike) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().contiguous().numpy()
    return np.asarray(value)
