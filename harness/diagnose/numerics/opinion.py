"""A second opinion on the one op that computes wrong: the other ways to lower it.

The culprit's one-op program, fed the reference's operand values, goes three ways:

- as the pipeline lowered it (kept backend-legal: torch-to-linalg's own pattern for it);
- decomposed by torch-mlir's torch-level pipeline (``levels.decompose_pipeline``), then
  torch-to-linalg: the same math in other ops;
- FX's decomposition of it (``torch._decomp``, the table ``torch.export`` decomposes with), run
  in eager PyTorch on the same operands.

Each is compared with eager PyTorch's value of the op (the reference); which ones agree says
which way is right: a decomposition that is right where the kept op is wrong puts the fault in
torch-to-linalg's pattern for that op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from harness.compiler.runner import RunOptions
from harness.execute.levels import decompose_pipeline
from harness.execute.lowering import run_stage
from harness.enums import ParsableEnum
from harness.execute.probe import ProbeOptions, run_program
from harness.execute.ref_ops import torch_overload
from harness.execute.backend import SearchRunner

from .diffs import OwnDiff, own_diff, program_terms
from .programs import CutProgram, ValueRef, value_ref
from .subject import NumericsSubject


class Way(ParsableEnum):
    """A way to lower the culprit."""

    KEPT = "kept backend-legal (as the pipeline lowered it)"
    DECOMPOSED = "decomposed by torch-mlir's torch-level pipeline"
    FX = "FX's decomposition (torch._decomp), in eager"


class Says(ParsableEnum):
    """What a way gives, against eager PyTorch."""

    RIGHT = "right"
    WRONG = "wrong"
    NONE = "none"      # no such lowering of this op
    FAILS = "fails"    # it does not lower or run


@dataclass
class Opinion:
    way: Way
    verdict: Says
    diff: OwnDiff | None = None    # against eager PyTorch's value
    detail: str = ""

    @property
    def right(self) -> bool:
        return self.verdict is Says.RIGHT

    def render(self) -> str:
        said = f"{self.way.value}: {self.verdict.value}"
        if self.diff is not None:
            said += f" ({self.diff.render()})"
        return said + (f": {self.detail}" if self.detail else "")

    def to_json(self) -> dict:
        return {"way": self.way.name.lower(), "verdict": self.verdict.value, "detail": self.detail,
                "diff": None if self.diff is None else self.diff.to_json()}


def second_opinions(subject: NumericsSubject, position: int, own: OwnDiff, program: CutProgram,
                    worker: SearchRunner, options: ProbeOptions) -> list[Opinion]:
    """The op at ``position`` (its one-op ``program`` gave ``own``) lowered the other ways."""
    opinions = [Opinion(Way.KEPT, Says.WRONG if own.departs else Says.RIGHT, own)]
    opinions.append(_decomposed(subject, position, program, worker, options))
    opinions.append(_fx(subject, position))
    return opinions


def _decomposed(subject: NumericsSubject, position: int, program: CutProgram, worker: SearchRunner,
                options: ProbeOptions) -> Opinion:
    folder = subject.work_dir / "one-op" / "decomposed"
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "op.mlir"
    source.write_text(program.text)
    out = folder / "op.decomposed.mlir"
    record = run_stage(source, decompose_pipeline(()), output_path=out, opt=options.opt,
                       options=RunOptions(timeout_s=options.timeout_s))
    if not record.ok:
        return Opinion(Way.DECOMPOSED, Says.FAILS,
                       detail=f"the torch-level pipeline ends {record.outcome.value}")
    if f"torch.{subject.cuts.label(position)} " in out.read_text():
        return Opinion(Way.DECOMPOSED, Says.NONE, detail="torch-mlir has no decomposition of it")
    values = subject.values
    expected = program.expected(values)
    ran = run_program(out, program.inputs(values), expected, program.signature, worker=worker,
                      options=options, work_dir=folder, wide=subject.program_wide(program),
                      terms=program_terms(subject, program))
    if not ran.outputs:
        return Opinion(Way.DECOMPOSED, Says.FAILS, detail=ran.describe())
    diff = own_diff(subject, position, list(ran.outputs), list(program.results))
    return Opinion(Way.DECOMPOSED, Says.WRONG if diff.departs else Says.RIGHT, diff)


def _fx(subject: NumericsSubject, position: int) -> Opinion:
    from torch._decomp import core_aten_decompositions, decomposition_table

    overload = torch_overload(subject.cuts.label(position))
    fn = None
    if overload is not None:
        fn = decomposition_table.get(overload) or core_aten_decompositions().get(overload)
        try:
            composite = fn is None and torch._C._dispatch_has_kernel_for_dispatch_key(
                overload.name(), "CompositeImplicitAutograd")
        except RuntimeError:  # a name PyTorch's dispatcher does not know (index.Tensor_hacked_twin)
            composite = False
        if composite:
            fn = overload.decompose  # what tracing decomposes it into: its composite kernel
    if fn is None or overload is None:
        return Opinion(Way.FX, Says.NONE, detail="FX has no decomposition of it")
    op = subject.cuts.ops[position]
    values = subject.values
    args = []
    for v in op.operands:
        ref = value_ref(subject.cuts, v)
        value = values.get(ref) if ref is not None else None
        if isinstance(value, np.ndarray):
            value = torch.from_numpy(value)
        args.append(value.clone() if isinstance(value, torch.Tensor) else value)
    positional, keywords = [], {}
    for argument, value in zip(overload._schema.arguments, args, strict=False):
        if argument.kwarg_only:
            keywords[argument.name] = value
        else:
            positional.append(value)
    try:
        with torch.no_grad():
            out = fn(*positional, **keywords)
    except Exception as e:  # a decomposition that raises is an answer too
        return Opinion(Way.FX, Says.FAILS, detail=f"{type(e).__name__}: {str(e).strip()[:200]}")
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    diff = own_diff(subject, position, outs, [ValueRef(position, i) for i in range(len(outs))])
    return Opinion(Way.FX, Says.WRONG if diff.departs else Says.RIGHT, diff)

