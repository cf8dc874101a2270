"""A numerics-mismatch port narrowed to the one op that computes wrong: the IR the
``check`` command names, on the mismatching set's inputs, through ``harness.diagnose.numerics.one_op``.
A verdict that cannot be reached is said in its place: the port's outcome stands either way."""

from __future__ import annotations

import shlex
from pathlib import Path

from harness import defaults
from harness.execute.closeness import Tolerances

from .options import PortOptions
from .record import NumericsCheck, PortOutcome


def narrow(checks: list[NumericsCheck], torch_ir: Path, pipeline: str, folder: Path,
           options: PortOptions) -> None:
    """Fills ``culprit`` and ``culprit_command`` of the first mismatching set (unpadded first:
    a padded set's rows that attend to no key differ by nature), and of every other set that
    mismatches by the float64 rule alone. The mismatch is against eager PyTorch, so the IR is
    checked against the reference evaluator before any search.

    A set within the flat tolerance that the rule calls off at its outputs, where the search
    finds every op within the rule, is verified: the outputs carry rounding that added up (the
    RefBackend sums in order, PyTorch's kernels in blocks), no op's error."""
    bad = sorted((c for c in checks if c.verdict is PortOutcome.NUMERICS_MISMATCH),
                 key=lambda c: c.padding_mask is not None)
    for index, check in enumerate(bad):
        if check.inputs_file and (index == 0 or _rule_only(check)):
            _narrow(check, torch_ir, pipeline, folder, options)


def _rule_only(check: NumericsCheck) -> bool:
    """Off by the float64 rule, every element within the flat tolerance."""
    return not check.problem and all(not o.problem and not o.mismatched for o in check.outputs)


def _narrow(check: NumericsCheck, torch_ir: Path, pipeline: str, folder: Path,
            options: PortOptions) -> None:
    from harness.diagnose.numerics import NumericsBisectOptions, one_op

    diff = check.program_max_abs_diff
    if check.program_ok is False or (check.program_ok is None and diff is not None and not diff <= 0):
        check.culprit = ("not narrowed: the imported program itself differs from eager PyTorch "
                         "here (the frontend froze the difference in), not an op of torch-mlir's")
        return
    try:
        found = one_op(torch_ir, pipeline, options=NumericsBisectOptions(
            inputs_path=check.inputs_file, opt=options.opt, timeout_s=options.timeout_s,
            tolerances=Tolerances().with_overrides(options.tolerances), out_dir=str(folder),
            blame=False, budget_s=defaults.ONE_OP_BUDGET_S))
    except Exception as error:  # the port's verdict stands without it
        first = str(error).strip().splitlines()[0][:300] if str(error).strip() else ""
        check.culprit = f"not narrowed: {type(error).__name__}: {first}"
        return
    if found.culprit is None and found.every_op_within and _rule_only(check):
        check.verdict = PortOutcome.VERIFIED
        check.float_noise = (f"rounding adding up: within the elementwise tolerance, further from "
                             f"float64 eager than float32 eager at the outputs, but {found.reason}")
        return
    if found.culprit is None:
        check.culprit = f"no single op: {found.reason}"
        return
    check.culprit = found.culprit.headline() + (f" ({found.cut_short})" if found.cut_short else "")
    library = found.culprit.library_frame()
    check.culprit_detail = [*([f"in library code at {library}"] if library else []),
                            f"call: {found.culprit.call}", *found.culprit.profile]
    check.culprit_command = f"{options.invocation} " + shlex.join([
        "check", found.culprit.program_path, "--pipeline", found.culprit.pipeline, "--inputs",
        found.culprit.inputs_path])
