"""``--fix`` where a backend refuses a target's contract as torch-mlir printed it: IREE's TOSA
input checks the TOSA profiles, and torch-mlir's TOSA holds f64 and i64 -> float casts that no
profile has (harness.fixes.tosa). The torch IR fixes run in the stage loop (harness.fixes.loop),
on torch-mlir-opt's stages; these answer the backend's compile, after the target's lowering.

Each fix that answers the compile's blocker rewrites the target's contract into a file of its
own beside it (``STEM.fixN-FIX.mlir``), and the numbers check runs again on it: compile, run,
compare with eager on both input sets. A fix is tried once; the port's numbers are its check,
as for the torch IR fixes of a port.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from harness.fixes.base import BlockerSeen, TargetFix
from harness.fixes.catalog import CATALOG, answering
from harness.fixes.loop import rewrite_copy
from harness.fixes.outcomes import StepOutcome
from harness.fixes.steps import FixStep

from .record import FrontendPort, PortOutcome
from .verify import NumericsRun, PortedIR


def fixed_target(ir: PortedIR, run: NumericsRun, port: FrontendPort,
                 check: Callable[[PortedIR], NumericsRun], opt: str | None = None) -> NumericsRun:
    """``run`` (the numbers check of ``ir``) again after each target fix that answers its
    compile's blocker, the fixes recorded in ``port``; ``run`` as it is when none answers."""
    tried: set[str] = set()
    while run.outcome is PortOutcome.FAILS and run.blockers:
        seen = [BlockerSeen(op=b.op, message=b.message, stage=b.stage.value) for b in run.blockers]
        found = next(((f, b) for f, b in answering(seen, CATALOG) if isinstance(f, TargetFix)
                      and f.target == ir.target.value and f.name not in tried), None)
        if found is None:
            break
        fix, blocker = found
        tried.add(fix.name)
        step = _apply(fix, blocker, ir.target_ir, number=len(tried), opt=opt)
        port.fixes.append(step.recorded())
        if not step.kept:
            break
        if len(tried) == 1:
            port.notes.append(f"Before --fix: {blocker.stage}: {blocker.message[:200]}")
        assert step.application is not None
        port.notes.append(f"--fix applied to the {ir.target.value} contract: {fix.name} "
                          f"({step.application.summary()[:200]})")
        ir = replace(ir, target_ir=Path(step.output_path))
        run = check(ir)
    return run


def _apply(fix: TargetFix, blocker: BlockerSeen, path: Path, *, number: int,
           opt: str | None) -> FixStep:
    """``fix`` on a copy of the contract at ``path``, written beside it; kept when it changed
    something and the verifier takes it (the numbers that follow are its check)."""
    step = rewrite_copy(fix, blocker, blocker.stage, path, path.parent, number=number, opt=opt)
    return replace(step, outcome=StepOutcome.KEPT) if step.output_path else step
