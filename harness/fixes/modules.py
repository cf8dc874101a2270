"""Module fixes as a port applies them: the fix that answers what a Python stage showed, the
module before and after it compared in eager PyTorch, and rolled back when the numbers moved.

A module fix changes an ``nn.Module`` before tracing or export (``persistent-buffers``,
``autograd-function-forward``). The blocker it answers is seen in a Python stage, not in a
pass: the import's "Could not find state mapping for buffer", a trace's ``prim::PythonOp``.
The port then traces or exports ``Application.module`` again; the lowered module's numbers are
still checked against the original eager model at the end, as without a fix.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence

import torch

from harness.execute.closeness import Tolerances, compare

from .base import Application, BlockerSeen, ModuleEvidence, ModuleFix
from .catalog import CATALOG, answering
from .outcomes import StepOutcome
from .steps import FixStep, Method, Verification
from .verify import from_numerics, unverified


def module_fixes(blockers: Sequence[BlockerSeen],
                 fixes: Sequence = CATALOG) -> list[tuple[ModuleFix, BlockerSeen]]:
    """The module fixes that answer one of ``blockers`` (in the catalog's order)."""
    return [(f, b) for f, b in answering(blockers, fixes) if isinstance(f, ModuleFix)]


def apply_module_fix(fix: ModuleFix, blocker: BlockerSeen, module: torch.nn.Module,
                     examples: Sequence[Sequence[torch.Tensor]], *,
                     script: torch.jit.ScriptModule | None = None,
                     tolerances: Tolerances = Tolerances(),
                     expected: Sequence[tuple] | None = None,
                     run: Callable[[torch.nn.Module, Sequence[torch.Tensor]], tuple] | None = None,
                     ) -> FixStep:
    """Applies ``fix`` to ``module`` and compares the fixed module with the original on each
    input set in ``examples``. A fix that changes nothing, or changes the numbers, is undone
    (its step says so); a kept one leaves the module to trace or export in
    ``step.application.module``. ``run``: a module's outputs on one set as a tuple of tensors
    (default: every tensor it returns, in order); ``expected``: the module's own outputs on
    ``examples`` so flattened, when the caller ran it already (a port has its eager outputs)."""
    run = run or _run
    if expected is None:
        expected = [run(module, inputs) for inputs in examples]
    app = fix.apply(module, ModuleEvidence(script=script, examples=tuple(examples[0]) if examples else ()))
    step = FixStep(fix.name, fix.level, blocker, blocker.stage, StepOutcome.NOTHING_CHANGED,
                   application=app)
    if not app.applied or app.module is None:
        _undo(app)
        return step
    step.verification = verify_module(app.module, examples, expected, tolerances, run=run)
    if step.verification.changed:
        _undo(app)
        step.outcome = StepOutcome.ROLLED_BACK
    else:
        step.outcome = StepOutcome.KEPT
    return step


def verify_module(fixed: torch.nn.Module, examples: Sequence[Sequence[torch.Tensor]],
                  expected: Sequence[tuple], tolerances: Tolerances = Tolerances(), *,
                  run: Callable[[torch.nn.Module, Sequence[torch.Tensor]], tuple] | None = None,
                  ) -> Verification:
    """The fixed module against the original's outputs, in eager, on every input set; the
    worst set decides."""
    start = time.perf_counter()
    worst = None
    try:
        for inputs, want in zip(examples, expected, strict=False):
            result = compare((run or _run)(fixed, inputs), want, tolerances)
            check = from_numerics(Method.EAGER, result)
            if worst is None or check.changed or _larger(check.max_abs_diff, worst.max_abs_diff):
                worst = check
            if check.changed:
                break
    except Exception as error:  # the fixed module does not run: not verified, said why
        return unverified(Method.EAGER, f"the fixed module raised {type(error).__name__}: {error}",
                          time.perf_counter() - start)
    if worst is None:
        return unverified(Method.EAGER, "no example inputs", time.perf_counter() - start)
    worst.seconds = time.perf_counter() - start
    return worst


def _larger(a: float, b: float) -> bool:
    """Whether difference ``a`` is worse than ``b`` (inf or nan is worse than any number)."""
    return not math.isfinite(a) or (math.isfinite(b) and a > b)


def _run(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> tuple:
    with torch.no_grad():
        out = module(*inputs)
    if isinstance(out, torch.Tensor):
        return (out,)
    if isinstance(out, dict):
        return tuple(v for v in out.values() if isinstance(v, torch.Tensor))
    return tuple(_flat(out))


def _flat(value: object) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _flat(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _flat(item)


def _undo(app: Application) -> None:
    if app.undo is not None:
        app.undo()
