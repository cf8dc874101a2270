"""One op's values against the reference's, by the float64 rule (``harness.execute.closeness``):
its error against the float64 evaluation of the op on the reference's operands, in units of
float32 eager's own error there. Where there is no float64 evaluation, the flat tolerance of the
dtype the op computes in decides."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from harness.errors import UnsupportedDTypeError
from harness.execute.dtypes import DType
from harness.execute.closeness import FloatNoise, OutputComparison, Tolerances, compare_one

from .programs import CutProgram, ValueRef, value_ref
from .subject import NumericsSubject

FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
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
    floats: bool = False  # some result is a float tensor (which the float64 rule should judge)

    @classmethod
    def of(cls, outputs: list[OutputComparison]) -> OwnDiff:
        worst = max(outputs, key=lambda o: o.max_abs_diff, default=None)
        if worst is None:
            return cls(0.0, 0.0, "", False)
        noises = [o.noise for o in outputs if o.noise is not None]
        noise = max(noises, key=lambda n: (n.ratio, n.worst_ratio), default=None)
        return cls(float(worst.max_abs_diff), max(float(o.max_rel_diff) for o in outputs),
                   worst.tolerance.render(), any(not o.ok for o in outputs), noise,
                   any(o.expected_dtype in FLOATS for o in outputs))

    @property
    def judged(self) -> bool:
        """Judged by the float64 rule wherever it has float values (exact ones by equality)."""
        return self.noise is not None or not self.floats

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


def computes_in(subject: NumericsSubject, position: int) -> DType | None:
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


def own_diff(subject: NumericsSubject, position: int, actual: list, refs: list[ValueRef]) -> OwnDiff:
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
    outputs = [compare_one(i, a, e, tolerances, w, terms) for i, (a, e, w) in enumerate(triples)]
    for o in outputs:  # the noise's index is the op's result it measures, not its place here
        if o.noise is not None and o.index < len(refs):
            o.noise = replace(o.noise, index=refs[o.index].index)
    return OwnDiff.of(outputs)


#: Ops each of whose output elements is a sum of products over the first operand's last
#: dimension (the second's, for the ones that add a bias first).
MATMULS = {"aten.mm": 0, "aten.bmm": 0, "aten.matmul": 0, "aten.linear": 0, "aten.addmm": 1,
           "aten.baddbmm": 1}
CONVOLUTIONS = frozenset({"aten.convolution", "aten._convolution", "aten.conv1d", "aten.conv2d",
                          "aten.conv3d", "aten.conv_transpose1d", "aten.conv_transpose2d",
                          "aten.conv_transpose3d"})


def summed_terms(subject: NumericsSubject, position: int) -> int:
    """How many values each output element of the op sums: the reduction's length (a matmul's
    inner dimension, a convolution's input channels times its kernel, a sum's reduced
    elements), 1 for an elementwise op. An in-order sum of n terms rounds about sqrt(n) times
    as far as a correctly rounded one: the RefBackend sums in order, PyTorch's kernels in
    blocks, so the float64 rule's floor for the op grows with it (a 1,024-term sum was 21x
    float32 eager's own error, every term right)."""
    label = subject.cuts.label(position)
    operands = []  # by position: an argument's value is a numpy array, an op's a tensor
    for v in subject.cuts.ops[position].operands:
        ref = value_ref(subject.cuts, v)
        operands.append(subject.values.get(ref) if ref is not None else None)
    shapes = [tuple(np.shape(x)) if isinstance(x, (torch.Tensor, np.ndarray)) else None for x in operands]
    result = subject.values.get(ValueRef(position, 0)) if subject.cuts.ops[position].results else None
    dim = operands[1] if len(operands) > 1 and isinstance(operands[1], int) else None
    numel = result.numel() if isinstance(result, torch.Tensor) else None
    return terms_of(label, shapes, dim, numel)


def terms_of(label: str, shapes: Sequence[tuple[int, ...] | None], dim: int | None,
             result_numel: int | None) -> int:
    """:func:`summed_terms` from what it reads: the op (``aten.mm``), its operands' shapes
    (None: not a tensor, or unknown), a softmax's dimension and the result's element count."""
    if label in MATMULS:
        shape = shapes[MATMULS[label]] if len(shapes) > MATMULS[label] else None
        return max(1, int(shape[-1])) if shape else 1
    if label in CONVOLUTIONS:
        weight = shapes[1] if len(shapes) > 1 else None
        return max(1, int(np.prod(weight)) // max(1, int(weight[0]))) if weight else 1
    first = shapes[0] if shapes else None
    if label in SOFTMAXES and first and dim is not None and -len(first) <= dim < len(first):
        return max(1, int(first[dim]))
    if label in REDUCTIONS and shapes and shapes[0] and result_numel:
        return max(1, int(np.prod(shapes[0])) // result_numel)
    return 1


def piece_terms(subject: NumericsSubject, result: ValueRef, ops: Sequence[int]) -> int:
    """The longest in-order sum behind ``result`` among ``ops`` (a piece of the function): the
    largest :func:`summed_terms` of the ops it depends on there. A piece that ends in a matmul
    and a bias add rounds as the 64-term matmul did, not as the add (tiny ResNet's classifier:
    2 ulp off float64 where float32 eager's blocked sum was near exact)."""
    inside, seen, stack, most = set(ops), set(), [result.op], 1
    while stack:
        position = stack.pop()
        if position in seen or position not in inside:
            continue
        seen.add(position)
        most = max(most, summed_terms(subject, position))
        for operand in subject.cuts.ops[position].operands:
            ref = value_ref(subject.cuts, operand)
            if ref is not None and ref.op >= 0:
                stack.append(ref.op)
    return most


def program_terms(subject: NumericsSubject, program: CutProgram) -> list[int]:
    """Each result of a piece: the longest in-order sum behind it (:func:`piece_terms`), what
    the float64 rule's floor grows with when the piece's outputs are judged."""
    return [piece_terms(subject, ref, program.ops) for ref in program.results]


#: Ops that sum over a dimension of their first operand and keep its shape.
SOFTMAXES = frozenset({"aten.softmax.int", "aten._softmax", "aten.log_softmax.int", "aten._log_softmax"})
#: Ops whose output elements each sum (or average) the first operand's reduced elements.
REDUCTIONS = frozenset({"aten.sum", "aten.sum.dim_IntList", "aten.mean", "aten.mean.dim", "aten.var.dim",
                        "aten.var.correction", "aten.std.dim", "aten.std.correction",
                        "aten.linalg_vector_norm", "aten.norm.ScalarOpt_dim", "aten.logsumexp",
                        "aten.prod.dim_int", "aten.cumsum"})
