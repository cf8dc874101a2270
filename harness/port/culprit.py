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
    a padded set's rows that attend to no key differ by nature). The mismatch is against eager
    PyTorch, so the IR is checked against the reference evaluator before any search."""
    from harness.diagnose.numerics import NumericsBisectOptions, one_op

    bad = sorted((c for c in checks if c.verdict is PortOutcome.NUMERICS_MISMATCH),
                 key=lambda c: c.padding_mask is not None)
    if not bad or not bad[0].inputs_file:
        return
    check = bad[0]
    if check.program_max_abs_diff is not None and not check.program_max_abs_diff <= 0:
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
