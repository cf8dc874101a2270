"""A fix's verification holds its difference as a float in memory (inf and nan too) and writes
the strings "inf"/"nan" only into its JSON; the module-fix loop ranks an infinite difference as
the worst."""

from __future__ import annotations

import json
import math

from harness.fixes.modules import _larger
from harness.fixes.verify import Method, Verdict, Verification


def test_an_infinite_difference_is_a_float_in_memory_and_a_string_in_json():
    check = Verification(Method.REFERENCE, Verdict.CHANGED, math.inf)
    assert isinstance(check.max_abs_diff, float)
    data = check.to_json()
    assert data["max_abs_diff"] == "inf"
    json.dumps(data, allow_nan=False)  # valid JSON
    assert "max abs diff inf" in check.render()
    assert Verification(Method.EAGER, Verdict.SAME, 1.5e-7).to_json()["max_abs_diff"] == 1.5e-7


def test_inf_and_nan_rank_worst():
    assert _larger(math.inf, 1.0) and _larger(math.nan, 1e9)
    assert not _larger(1.0, math.inf) and _larger(2.0, 1.0) and not _larger(1.0, 2.0)
