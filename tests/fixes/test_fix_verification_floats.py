"""A fix's verification holds its difference as a float in memory (inf and nan too) and writes
the strings "inf"/"nan" only into its JSON; the module-fix loop ranks an infinite difference as
the worst."""

from __future__ import annotations

import json
import math

from harness.fixes.modules import _larger
from harness.fixes.verify import Method, FixVerdict, Verification


def test_an_infinite_difference_is_a_float_in_memory_and_a_string_in_json():
    check = Verification(Method.REFERENCE, FixVerdict.CHANGED, math.inf)
    assert isinstance(check.max_abs_diff, float)
    data = check.to_json()
    assert data["max_abs_diff"] == "inf"
    json.dumps(data, allow_nan=False)  # valid JSON
    assert "max abs diff inf" in check.render()
    assert Verification(Method.EAGER, FixVerdict.SAME, 1.5e-7).to_json()["max_abs_diff"] == 1.5e-7


def test_inf_and_nan_rank_worst():
    assert _larger(math.inf, 1.0) and _larger(math.nan, 1e9)
    assert not _larger(1.0, math.inf) and _larger(2.0, 1.0) and not _larger(1.0, 2.0)


T = "!torch.vtensor<[4,64],f32>"
SIN = f"""\
func.func @forward(%x: {T}) -> {T} {{
  %0 = torch.aten.sin %x : {T} -> {T}
  return %0 : {T}
}}
"""


def test_a_fix_that_scales_the_values_within_the_tolerance_changed_them(tmp_path):
    """A "fix" whose values are off by 3e-6 relative: within rtol 1e-4 everywhere, about 25x
    float32's own rounding of sin against float64. The float64 rule says CHANGED."""
    import numpy as np

    from harness.fixes.verify import ReferenceCache, verify_ir

    before, after = tmp_path / "before.mlir", tmp_path / "after.mlir"
    before.write_text(SIN)
    after.write_text(SIN.replace(
        f"  return %0 : {T}",
        f"  %f = torch.constant.float 1.000003\n"
        f"  %1 = torch.aten.mul.Scalar %0, %f : {T}, !torch.float -> {T}\n  return %1 : {T}"))
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    cache = ReferenceCache([x])
    changed = verify_ir(before, after, cache)
    assert changed.verdict is FixVerdict.CHANGED and changed.max_abs_diff < 1e-5
    assert "by float64, which decides" in changed.detail
    assert verify_ir(before, before, cache).verdict is FixVerdict.SAME
