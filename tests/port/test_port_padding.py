"""Padded positions in the port's numbers: rows that attend to no key are left out of the
comparison (their values are undefined: eager's own attention implementations disagree there),
and everything else is still compared, so a wrong real token still mismatches."""

from __future__ import annotations

import numpy as np
import torch

from harness.execute.closeness import Verdict, compare
from harness.models.hf_inputs import InputSet
from harness.execute.closeness import exclude_positions
from harness.port.verify import padded_positions


def _inputs(mask) -> InputSet:
    mask = torch.tensor(mask)
    return InputSet(("input_ids", "attention_mask"), (torch.ones_like(mask), mask), "padded")


def test_only_a_mask_with_zeros_pads():
    assert padded_positions(_inputs([[1, 1, 1]])) is None
    assert padded_positions(InputSet(("input_ids",), (torch.ones(1, 3, dtype=torch.long),), "ids")) is None
    assert padded_positions(_inputs([[0, 0, 1, 1]])).tolist() == [[True, True, False, False]]


def test_padded_rows_are_left_out_and_their_difference_recorded():
    padded = padded_positions(_inputs([[0, 1, 1]]))
    expected = np.arange(12, dtype=np.float32).reshape(1, 3, 4)
    actual = expected.copy()
    actual[0, 0] += 3.0  # the pad row: undefined
    pooled = np.ones((1, 4), dtype=np.float32)  # not [batch, seq]: compared whole
    assert compare([actual, pooled], [expected, pooled]).verdict is Verdict.NUMERICS_MISMATCH
    a, e, excluded = exclude_positions([actual, pooled], [expected, pooled], padded)
    assert excluded == (1, 3.0)
    assert compare(a, e).verdict is Verdict.VERIFIED
    assert actual[0, 0, 0] == 3.0  # the caller's arrays are untouched


def test_a_wrong_real_token_still_mismatches():
    padded = padded_positions(_inputs([[0, 1, 1]]))
    expected = np.zeros((1, 3, 2), dtype=np.float32)
    actual = expected.copy()
    actual[0, 2, 1] = 1e-3  # a real token
    a, e, _ = exclude_positions([actual], [expected], padded)
    result = compare(a, e)
    assert result.verdict is Verdict.NUMERICS_MISMATCH and result.outputs[0].mismatched == 1


def test_integer_outputs_are_compared_whole():
    padded = padded_positions(_inputs([[0, 1]]))
    ids = np.array([[5, 6]])
    a, e, excluded = exclude_positions([ids + 1], [ids], padded)
    assert excluded is None and compare(a, e).verdict is Verdict.NUMERICS_MISMATCH
