"""One op's values against the reference's, by the float64 rule (``harness.execute.closeness``):
its error against the float64 evaluation of the op on the reference's operands, in units of
float32 eager's own error there. Where there is no float64 evaluation, the flat tolerance of the
dtype the op computes in decides."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from harness.errors import UnsupportedDTypeError
from harness.execute.dtypes import DType
from harness.execute.closeness import FloatNoise, OutputComparison, Tolerances, compare_one

from .programs import ValueRef, value_ref
from .subject import Subject

# Ops that only change the dtype: they compute in their input's dtype, so their error is judged
# at their input's tolerance.
CASTS = frozenset({"aten.to.dtype", "aten.to.dtype_layout", "aten.to.other", "aten.to.device",
                   "aten._to_copy", "aten.type_as", "prims.convert_element_type",
                   "aten.to.prim_Device"})

@dataclass
class OwnDiff:
    """One op's values against the reference's: the flat filter's numbers, and the float64 rule's
    (its worst result's), which decide when present."""

    max_abs_diff: float
    max_rel_diff: float
    tolerance: str
    departs: bool
    noise: FloatNoise | None = None

    @classmethod
    def of(cls, outputs: list[OutputComparison]) -> OwnDiff:
        worst = max(outputs, key=lambda o: o.max_abs_diff, default=None)
        if worst is None:
            return cls(0.0, 0.0, "", False)
        noises = [o.noise for o in outputs if o.noise is not None]
        noise = max(noises, key=lambda n: (n.ratio, n.worst_ratio), default=None)
        return cls(float(worst.max_abs_diff), max(float(o.max_rel_diff) for o in outputs),
                   worst.tolerance.render(), any(not o.ok for o in outputs), noise)

    @property
    def ratio(self) -> float | None:
        return self.noise.ratio if self.noise is not None else None

    def render(self) -> str:
        text = f"max abs diff {self.max_abs_diff:.3g}, max rel diff {self.max_rel_diff:.3g}"
        if self.noise is None:
            return f"{text} ({self.tolerance})"
        return f"{text}; {self.noise.render()}"

    def to_json(self) -> dict:
        return {"max_abs_diff": self.max_abs_diff, "max_rel_diff": self.max_rel_diff,
                "tolerance": self.tolerance, "departs": self.departs,
                "noise": self.noise.to_json() if self.noise is not None else None}


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


def own_diff(subject: Subject, position: int, actual: list, refs: list[ValueRef]) -> OwnDiff:
    """``actual``: the values of ``refs`` (results of the op at ``position``) as lowered and run."""
    tolerances = subject.options.tolerances
    expected = [subject.values.get(r) for r in refs]
    dtype = computes_in(subject, position)
    if dtype is not None:
        by = dict(tolerances.by_dtype)
        tol = tolerances.for_dtype(dtype)
        for e in expected:
            if isinstance(e, torch.Tensor) and e.dtype.is_floating_point:
                by[DType.of(e)] = tol
        tolerances = Tolerances(by)
    triples = zip(actual, expected, (subject.wide(r) for r in refs), strict=False)
    terms = summed_terms(subject, position)
    return OwnDiff.of([compare_one(i, a, e, tolerances, w, terms) for i, (a, e, w) in enumerate(triples)])


#: Ops each of whose output elements is a sum of products over the first operand's last
#: dimension (the second's, for the ones that add a bias first).
MATMULS = {"aten.mm": 0, "aten.bmm": 0, "aten.matmul": 0, "aten.linear": 0, "aten.addmm": 1,
           "aten.baddbmm": 1}
CONVOLUTIONS = frozenset({"aten.convolution", "aten._convolution", "aten.conv1d", "aten.conv2d",
                          "aten.conv3d", "aten.conv_transpose1d", "aten.conv_transpose2d",
                          "aten.conv_transpose3d"})


def summed_terms(subject: Subject, position: int) -> int:
    """How many values each output element of the op sums: the reduction's length (a matmul's
    inner dimension, a convolution's input channels times its kernel, a sum's reduced
    elements), 1 for an elementwise op. An in-order sum of n terms rounds about sqrt(n) times
    as far as a correctly rounded one: the RefBackend sums in order, PyTorch's kernels in
    blocks, so the float64 rule's floor for the op grows with it (a 1,024-term sum was 21x
    float32 eager's own error, every term right)."""
    label = subject.cuts.label(position)
    tensors = []
    for v in subject.cuts.ops[position].operands:
        ref = value_ref(subject.cuts, v)
        value = subject.values.get(ref) if ref is not None else None
        if isinstance(value, torch.Tensor):
            tensors.append(value)
    result = subject.values.get(ValueRef(position, 0)) if subject.cuts.ops[position].results else None
    if label in MATMULS and len(tensors) > MATMULS[label] and tensors[MATMULS[label]].dim():
        return max(1, int(tensors[MATMULS[label]].shape[-1]))
    if label in CONVOLUTIONS and len(tensors) > 1 and tensors[1].dim():
        weight = tensors[1]
        return max(1, weight.numel() // max(1, int(weight.shape[0])))
    if isinstance(result, torch.Tensor) and tensors and result.numel():
        return max(1, max(t.numel() for t in tensors) // result.numel())
    return 1
