"""Comparison of outputs: per-dtype tolerances, exact integers, NaN and inf, shapes and dtypes,
and a deliberately wrong lowered module caught by the comparison."""

from __future__ import annotations

import json
import math
import textwrap

import numpy as np
import pytest
import torch

from harness.errors import HarnessError
from harness.execute.dtypes import DType
from harness.execute.lowering import run_stage
from harness.execute.closeness import Tolerance, Tolerances, Verdict, compare
from harness.execute.refbackend import RefBackendOptions, run_refbackend
from harness.execute.reference import evaluate_file
from harness.execute.signature import read_signature


def test_float_tolerance_is_relative_plus_absolute():
    expected = np.array([1.0, 100.0, 0.0], np.float32)
    within = expected + np.array([1e-5, 9e-3, 9e-6], np.float32)  # atol 1e-5 + rtol 1e-4 * |e|
    beyond = expected + np.array([0.0, 2e-2, 0.0], np.float32)
    ok = compare([within], [expected])
    assert ok.verdict is Verdict.VERIFIED and ok.outputs[0].mismatched == 0
    bad = compare([beyond], [expected])
    assert bad.verdict is Verdict.NUMERICS_MISMATCH
    out = bad.outputs[0]
    assert out.mismatched == 1 and out.total == 3
    assert out.max_abs_diff == pytest.approx(2e-2, rel=1e-3)
    assert out.max_rel_diff == pytest.approx(2e-4, rel=1e-3)  # over the nonzero expected values


def test_integers_and_bools_are_exact():
    assert compare([np.array([1, 2], np.int64)], [np.array([1, 2], np.int64)]).ok
    off_by_one = compare([np.array([1, 3], np.int64)], [np.array([1, 2], np.int64)])
    assert not off_by_one.ok and off_by_one.outputs[0].max_abs_diff == 1.0
    flipped = compare([np.array([True, True])], [np.array([True, False])])
    assert not flipped.ok and flipped.outputs[0].mismatched == 1


def test_nan_and_inf_match_only_in_the_same_place():
    e = np.array([np.nan, np.inf, 1.0], np.float32)
    assert compare([e.copy()], [e]).ok
    moved = compare([np.array([1.0, np.inf, np.nan], np.float32)], [e])
    assert not moved.ok and moved.outputs[0].mismatched == 2
    wrong_sign = compare([np.array([np.nan, -np.inf, 1.0], np.float32)], [e])
    assert not wrong_sign.ok and math.isinf(wrong_sign.outputs[0].max_abs_diff)
    # JSON has no inf: it is written as a string, and the record stays valid JSON.
    text = json.dumps(wrong_sign.to_json(), allow_nan=False)
    assert '"max_abs_diff": "inf"' in text


def test_shape_dtype_and_count_mismatch_whatever_the_values():
    e = np.zeros((2, 3), np.float32)
    assert compare([np.zeros((3, 2), np.float32)], [e]).outputs[0].problem == "shape [3, 2], expected [2, 3]"
    assert (compare([np.zeros((2, 3), np.float64)], [e]).outputs[0].problem
            == "dtype float64, expected float32")
    fewer = compare([], [e])
    assert fewer.verdict is Verdict.NUMERICS_MISMATCH and fewer.problem == "0 outputs, expected 1"
    # torch tensors are accepted as expected values (the reference evaluator's)
    assert compare([e], [torch.zeros(2, 3)]).ok


def test_tolerance_overrides():
    t = Tolerances().with_overrides(["f32=1e-2,1e-3", "float64=0,0", "si64=0,1"])
    assert t.for_dtype(DType.FLOAT32) == Tolerance(1e-2, 1e-3)
    assert t.for_dtype(DType.FLOAT64) == Tolerance(0.0, 0.0)
    assert t.for_dtype(DType.INT64) == Tolerance(0.0, 1.0)
    assert Tolerances().for_dtype(DType.FLOAT16) == Tolerance(1e-2, 1e-3)
    assert compare([np.array([1.5], np.float32)], [np.array([1.0], np.float32)],
                   Tolerances().with_overrides(["f32=0.5,0"])).ok
    for bad in ("f32", "f32=1e-3", "f32=a,b", "f32=-1,0", "f32=inf,0"):
        with pytest.raises(HarnessError, match="--tolerance expects DTYPE=RTOL,ATOL"):
            Tolerances().with_overrides([bad])
    with pytest.raises(HarnessError, match="element type 'f99'"):
        Tolerances().with_overrides(["f99=1,1"])


SCALE = """
func.func @forward(%x: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> {
  %float = torch.constant.float 2.500000e-01
  %0 = torch.aten.mul.Scalar %x, %float : !torch.vtensor<[2,3],f32>, !torch.float -> !torch.vtensor<[2,3],f32>
  %1 = torch.aten.tanh %0 : !torch.vtensor<[2,3],f32> -> !torch.vtensor<[2,3],f32>
  return %1 : !torch.vtensor<[2,3],f32>
}
"""


def _set_float_constant(linalg_path, old: float, new: float) -> int:
    """Rewrites ``arith.constant old : f32`` to ``new`` in a linalg file through the bindings;
    returns how many it changed."""
    from torch_mlir import ir

    from harness.execute.context import bindings_context

    changed = 0
    with bindings_context(), ir.Location.unknown():
        module = ir.Module.parseFile(str(linalg_path))

        def visit(op):
            nonlocal changed
            if op.name == "arith.constant" and isinstance(op.attributes["value"], ir.FloatAttr) \
                    and op.attributes["value"].value == old:
                op.attributes["value"] = ir.FloatAttr.get(ir.F32Type.get(), new)
                changed += 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        linalg_path.write_text(str(module))
    return changed


def test_a_deliberately_wrong_module_is_a_mismatch(tmp_path):
    src = tmp_path / "scale.torch.mlir"
    src.write_text(textwrap.dedent(SCALE))
    linalg = tmp_path / "scale.linalg.mlir"
    assert run_stage(src, "torch-to-linalg", output_path=linalg).ok
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    expected = evaluate_file(src, [x]).outputs
    signature = read_signature(src)
    right = run_refbackend(linalg, [x], signature=signature, options=RefBackendOptions(isolate=False))
    assert compare(right.outputs, expected).ok
    # The lowered scale 0.25 becomes 0.26: every nonzero element moves by a few percent.
    assert _set_float_constant(linalg, 0.25, 0.26) == 1
    wrong = run_refbackend(linalg, [x], signature=signature, options=RefBackendOptions(isolate=False))
    verdict = compare(wrong.outputs, expected)
    assert verdict.verdict is Verdict.NUMERICS_MISMATCH
    assert verdict.outputs[0].mismatched == 6
    assert 1e-2 < verdict.outputs[0].max_abs_diff < 5e-2
