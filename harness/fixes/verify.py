"""Did a fix keep the numbers? Checked after each fix, before the next one runs.

- A torch IR fix: the IR before and after it, each run op by op in eager PyTorch (the
  reference evaluator), on the same inputs. Eager against eager: a difference is the fix's, not
  a lowering's; nothing needs to lower yet (a second blocker may still be there).
- A module fix: the original and the fixed module in eager, on every input set
  (:func:`harness.fixes.modules.verify_module`).
- After the last fix, the drivers run the lowered module on the RefBackend against the original
  (``harness fix``: the reference evaluator of the input file; ``harness port``: eager).

A check that cannot run (weights elided, an op the reference evaluator does not know) leaves the
fix *unverified*, with the reason; it is never counted as verified.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from harness.errors import (
    ElidedWeightsError,
    ReferenceEvaluationError,
    UnsupportedDTypeError,
    UnsupportedOpsError,
)
from harness.execute.closeness import NumericsResult, Tolerances, compare

from .steps import FixVerdict, Method, Verification


def from_numerics(method: Method, numerics: NumericsResult, seconds: float = 0.0) -> Verification:
    """A comparison's result as a verification: which output differs, and by how much."""
    worst = max((o.max_abs_diff for o in numerics.outputs), default=0.0)
    bad = next((o for o in numerics.outputs if not o.ok), None)
    detail = numerics.problem or (bad.render() if bad is not None else "")
    verdict = FixVerdict.SAME if numerics.ok else FixVerdict.CHANGED
    return Verification(method, verdict, worst, detail, seconds)


def unverified(method: Method, why: str, seconds: float = 0.0) -> Verification:
    return Verification(method, FixVerdict.UNVERIFIED, detail=why, seconds=seconds)


class ReferenceCache:
    """The reference evaluator's outputs per IR file, on one set of inputs: a file checked
    before one fix and after another is evaluated once."""

    def __init__(self, inputs: Sequence, function: str | None = None):
        self.inputs = list(inputs)
        self.function = function
        self._outputs: dict[str, tuple] = {}
        self._wide: dict[str, tuple | None] = {}

    def outputs(self, path: str | os.PathLike) -> tuple:
        """The flattened outputs; raises the reference evaluator's typed errors."""
        from harness.execute.check import flatten_outputs
        from harness.execute.reference import ReferenceOptions, evaluate_file

        key = os.path.abspath(path)
        if key not in self._outputs:
            result = evaluate_file(path, self.inputs, ReferenceOptions(function=self.function))
            self._outputs[key] = tuple(flatten_outputs(result.outputs))
        return self._outputs[key]

    def wide(self, path: str | os.PathLike) -> tuple | None:
        """The outputs evaluated in float64 (inputs and weights widened): what the float64 rule
        of ``closeness`` judges a fixed file's outputs against; None when it does not
        evaluate so (the flat tolerance decides)."""
        from harness.execute.check import flatten_outputs
        from harness.execute.reference import ReferenceOptions, evaluate_file

        key = os.path.abspath(path)
        if key not in self._wide:
            try:
                result = evaluate_file(path, self.inputs, ReferenceOptions(
                    function=self.function, check_types=False, widen=True))
                self._wide[key] = tuple(flatten_outputs(result.outputs))
            except Exception:  # a float32-only kernel: no float64 opinion
                self._wide[key] = None
        return self._wide[key]


#: Why the reference evaluator could not run: these make a fix unverified, not failed.
CANNOT_EVALUATE = (ElidedWeightsError, UnsupportedOpsError, ReferenceEvaluationError,
                   UnsupportedDTypeError)


def verify_ir(before: str | os.PathLike, after: str | os.PathLike, cache: ReferenceCache,
              tolerances: Tolerances = Tolerances()) -> Verification:
    """``after`` (a fixed IR file) against ``before`` in the reference evaluator."""
    start = time.perf_counter()
    try:
        expected = cache.outputs(before)
        actual = cache.outputs(after)
    except CANNOT_EVALUATE as e:
        return unverified(Method.REFERENCE, f"the reference evaluator cannot run it: {e}",
                          time.perf_counter() - start)
    return from_numerics(Method.REFERENCE, compare(actual, expected, tolerances, cache.wide(before)),
                         time.perf_counter() - start)
