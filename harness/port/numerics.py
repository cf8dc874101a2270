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
import shlex
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from harness.compiler.irfile import unique_dir
from harness.errors import HarnessError
from harness.execute.numerics import (
    NumericsResult,
    Tolerances,
    compare,
    describe_excluded,
    exclude_positions,
    padding_of,
)
from harness.execute.refbackend import (
    RefBackendOptions,
    RefBackendResult,
    Stage,
    execute_llvm,
    lower_to_llvm,
)
from harness.execute.signature import read_signature
from harness.models.hf import as_tuple
from harness.models.hf_inputs import InputSet

from .diagnose import one_line, opt_argument, pipeline_blockers
from .options import PortOptions
from .progress import Progress
from .record import Blocker, NumericsCheck, OutputDiff, PortOutcome, PortStage, StageRecord
from .subject import Subject


@dataclass
class NumericsRun:
    outcome: PortOutcome
    stages: list[StageRecord] = field(default_factory=list)
    checks: list[NumericsCheck] = field(default_factory=list)
    blockers: list[Blocker] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)


def check_numerics(subject: Subject, *, linalg: Path, torch_ir: Path, contract_ir: Path,
                   torch_pipeline: str, program: Callable[[InputSet], Sequence[torch.Tensor]] | None,
                   folder: Path, options: PortOptions, progress: Progress,
                   label: str) -> NumericsRun:
    """``linalg`` on the RefBackend against ``subject``'s eager outputs on both input sets.

    ``contract_ir`` (the torch backend contract) gives the signature with signedness, which
    the linalg level has lost; ``torch_ir`` and ``torch_pipeline`` make the ``harness check``
    command that compares the same IR with the reference evaluator.
    """
    run = NumericsRun(PortOutcome.FAILS)
    rb_options = RefBackendOptions(timeout_s=options.timeout_s)
    lowering = PortStage.REFBACKEND_LOWERING.value
    llvm = folder / f"{subject.name}.llvm.mlir"
    refused: HarnessError | None = None
    with progress.stage(f"{label} {lowering}") as step:
        try:
            signature = read_signature(contract_ir)
            record = lower_to_llvm(linalg, llvm, options=rb_options)
            step.ok = record.ok
        except HarnessError as error:  # a signature the RefBackend cannot take
            refused, step.ok = error, False
    if refused is not None:
        run.stages.append(StageRecord(lowering, False, step.seconds, "error",
                                      detail=one_line(str(refused))))
        run.blockers = [Blocker(rank=1, stage=lowering,
                                signature=f"{lowering}: {type(refused).__name__}",
                                message=one_line(str(refused)))]
        return run
    run.stages.append(StageRecord(lowering, record.ok, step.seconds, record.outcome.value,
                                  str(llvm) if record.ok else "",
                                  "" if record.ok else str(record.signature)))
    if not record.ok:
        run.blockers = pipeline_blockers(record, lowering, folder, _no_diagnosis(options))
        given = f" --opt {shlex.quote(opt_argument(options.opt))}" if options.opt else ""
        run.commands = [f"{options.invocation} run {shlex.quote(str(linalg))} --pipeline "
                        f"linalg-to-llvm{given}"]
        return run
    execution = PortStage.EXECUTION.value
    tolerances = Tolerances().with_overrides(options.tolerances)
    sets = (("traced", subject.inputs), ("second", subject.second_inputs))

    def execute(which: str, inputs: InputSet) -> tuple[Path, RefBackendResult]:
        work = unique_dir(f"execution-{which}-", folder)
        arrays = [t.numpy() for t in inputs.tensors]
        try:
            return work, execute_llvm(llvm, arrays, signature, options=rb_options, work_dir=work)
        except HarnessError as error:  # inputs that do not fit the lowered signature
            return work, RefBackendResult(signature.name, Stage.EXECUTION, error=str(error))

    with progress.stage(f"{label} {execution}") as step:
        # one child process per input set, side by side (each waits on its child)
        with ThreadPoolExecutor(max_workers=len(sets)) as pool:
            done = list(pool.map(lambda s: execute(*s), sets))
        failed = next((result for _, result in done if not result.ok), None)
        step.ok = failed is None
    if failed is not None:
        run.stages.append(StageRecord(execution, False, step.seconds, "error",
                                      detail=one_line(failed.error)))
        run.blockers = [Blocker(rank=1, stage=execution,
                                signature=f"{execution}: {failed.signal or 'error'}",
                                message=one_line(failed.error))]
        run.commands = [failed.command] if failed.command else []
        return run
    run.stages.append(StageRecord(execution, True, step.seconds))
    for (which, inputs), (work, result) in zip(sets, done):
        actual, expected = list(result.outputs), [_numpy(e) for e in subject.expected(inputs)]
        padded = padded_positions(inputs)
        excluded = None
        if padded is not None:
            actual, expected, excluded = exclude_positions(actual, expected, padded)
        check = _check(which, inputs, compare(actual, expected, tolerances), subject, program,
                       str(work / "inputs.npz"))
        if excluded is not None:
            count, diff = excluded
            check.excluded = describe_excluded(count)
            check.excluded_max_abs_diff = json_float(diff)
            check.padding_mask = mask_argument(inputs)
        run.checks.append(check)
    mismatch = any(c.verdict != PortOutcome.VERIFIED.value for c in run.checks)
    run.outcome = PortOutcome.NUMERICS_MISMATCH if mismatch else PortOutcome.VERIFIED
    if mismatch:
        bad = next(c for c in run.checks if c.verdict != PortOutcome.VERIFIED.value)
        given = f" --opt {shlex.quote(opt_argument(options.opt))}" if options.opt else ""
        if bad.padding_mask is not None:
            given += f" --padding-mask {bad.padding_mask}"
        run.commands = [f"{options.invocation} check {shlex.quote(str(torch_ir))} --pipeline "
                        f"{torch_pipeline},torch-to-linalg --inputs {shlex.quote(bad.inputs_file)}{given}"]
    return run


def padded_positions(inputs: InputSet) -> np.ndarray | None:
    """[batch, seq] True where ``attention_mask`` is 0, or None when nothing is padded."""
    if "attention_mask" not in inputs.names:
        return None
    return padding_of(inputs.tensors[inputs.names.index("attention_mask")])


def mask_argument(inputs: InputSet) -> int | None:
    """The argument index of the set's attention mask when it pads something (``harness check
    --padding-mask``), else None."""
    return inputs.names.index("attention_mask") if padded_positions(inputs) is not None else None


def _numpy(value):
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value


def _check(which: str, inputs: InputSet, numerics: NumericsResult, subject: Subject,
           program: Callable[[InputSet], Sequence[torch.Tensor]] | None, npz: str) -> NumericsCheck:
    outputs = [OutputDiff(
        index=o.index, name=subject.output_names[o.index] if o.index < len(subject.output_names) else "",
        dtype=o.dtype, shape=list(o.shape), max_abs_diff=json_float(o.max_abs_diff),
        max_rel_diff=json_float(o.max_rel_diff), mismatched=o.mismatched, total=o.total,
        tolerance=o.tolerance.render(), problem=o.problem) for o in numerics.outputs]
    return NumericsCheck(
        inputs=which, description=inputs.description, verdict=numerics.verdict.value,
        max_abs_diff=json_float(max((o.max_abs_diff for o in numerics.outputs), default=0.0)),
        max_rel_diff=json_float(max((o.max_rel_diff for o in numerics.outputs), default=0.0)),
        outputs=outputs, problem=numerics.problem,
        program_max_abs_diff=_program_diff(program, subject, inputs), inputs_file=npz)


def _program_diff(program, subject: Subject, inputs: InputSet) -> float | str | None:
    """The imported program (trace or export) in PyTorch against eager, max abs diff."""
    if program is None:
        return None
    try:
        with torch.no_grad():
            got = as_tuple(program(inputs))
    except Exception:  # the program may not run on other values (a frozen shape): say so
        return "error"
    expected = subject.expected(inputs)
    if len(got) != len(expected):
        return "inf"
    diffs = [float((a.double() - b.double()).abs().max()) if a.shape == b.shape and a.numel() else
             (0.0 if a.shape == b.shape else math.inf) for a, b in zip(got, expected)]
    return json_float(max(diffs, default=0.0))


def json_float(x: float) -> float | str:
    """JSON has no inf/nan: they are written as strings."""
    x = float(x)
    return x if math.isfinite(x) else str(x)


def _no_diagnosis(options: PortOptions) -> PortOptions:
    """The RefBackend's lowering runs on the bindings, not torch-mlir-opt: the blocker tools
    (torch-mlir-opt runs) do not apply; the record's own diagnostics do."""
    return replace(options, diagnose=False)
