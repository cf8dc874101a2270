"""One op's values against the reference's, at the tolerance of the dtype the op computes in."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch_mlir import ir

from harness.errors import UnsupportedDTypeError
from harness.execute.dtypes import DType
from harness.execute.closeness import OutputComparison, Tolerances, compare_one

from .programs import ValueRef
from .subject import Subject

# Ops that only change the dtype: they compute in their input's dtype, so their error is judged
# at their input's tolerance.
CASTS = frozenset({"aten.to.dtype", "aten.to.dtype_layout", "aten.to.other", "aten.to.device",
                   "aten._to_copy", "aten.type_as", "prims.convert_element_type",
                   "aten.to.prim_Device"})

@dataclass
class OwnDiff:
    """One value against the reference's, at the tolerance of the dtype the op computes in."""

    max_abs_diff: float
    max_rel_diff: float
    tolerance: str
    departs: bool

    @classmethod
    def of(cls, outputs: list[OutputComparison]) -> OwnDiff:
        worst = max(outputs, key=lambda o: o.max_abs_diff, default=None)
        if worst is None:
            return cls(0.0, 0.0, "", False)
        return cls(float(worst.max_abs_diff), max(float(o.max_rel_diff) for o in outputs),
                   worst.tolerance.render(), any(not o.ok for o in outputs))

    def render(self) -> str:
        return (f"max abs diff {self.max_abs_diff:.3g}, max rel diff {self.max_rel_diff:.3g} "
                f"({self.tolerance})")


def computes_in(subject: Subject, position: int) -> DType | None:
    """The dtype an op computes in: its result's, or a cast's input's."""
    cuts = subject.cuts
    op = cuts.ops[position]
    source = None
    if cuts.label(position) in CASTS and len(op.operands):
        source = value_ref(cuts, op.operands[0])
    ref = source if source is not None else ValueRef(position, 0)
    dtype = getattr(subject.values.get(ref), "dtype", None)
    if dtype is None:  # not a tensor (an int, a list): no tolerance of its own
        return None
    try:
        return DType.parse(str(dtype))
    except UnsupportedDTypeError:  # a dtype with no tolerance (complex, quantized)
        return None


def own_diff(subject: Subject, position: int, actual: list, expected: list) -> OwnDiff:
    tolerances = subject.options.tolerances
    dtype = computes_in(subject, position)
    if dtype is not None:
        by = dict(tolerances.by_dtype)
        tol = tolerances.for_dtype(dtype)
        for e in expected:
            if isinstance(e, torch.Tensor) and e.dtype.is_floating_point:
                by[DType.of(e)] = tol
        tolerances = Tolerances(by)
    pairs = zip(actual, expected, strict=False)
    return OwnDiff.of([compare_one(i, a, e, tolerances) for i, (a, e) in enumerate(pairs)])


def value_ref(cuts, value: ir.Value) -> ValueRef | None:
    if isinstance(value, ir.BlockArgument):
        return ValueRef(-1, value.arg_number)
    p = cuts._owner(value)
    return ValueRef(p, value.result_number) if p is not None else None
