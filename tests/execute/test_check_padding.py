"""``harness check --padding-mask INDEX``: outputs laid out [batch, seq, ...] are compared at
real tokens only, as ``harness port`` compares them (a padded token's row attends to no key, its
values are undefined), and the positions left out are said; a mask that is no [batch, seq]
argument is a usage error naming the arguments."""

from __future__ import annotations

import numpy as np
import pytest

from harness.errors import UsageError
from harness.execute.check import CheckOptions, CheckOutcome, check_file
from harness.execute.inputs import save_npz
from harness.execute.closeness import exclude_positions, padding_of

# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
TOKENS = """
func.func @forward(%x: !torch.vtensor<[1,4,2],f32>, %m: !torch.vtensor<[1,4],si64>) -> !torch.vtensor<[1,4,2],f32> {
  %0 = torch.aten.tanh %x : !torch.vtensor<[1,4,2],f32> -> !torch.vtensor<[1,4,2],f32>
  return %0 : !torch.vtensor<[1,4,2],f32>
}
"""  # noqa: E501


@pytest.fixture
def case(tmp_path):
    src = tmp_path / "tokens.mlir"
    src.write_text(TOKENS)
    inputs = tmp_path / "inputs.npz"
    save_npz(inputs, [np.random.default_rng(0).standard_normal((1, 4, 2)).astype(np.float32),
                      np.array([[0, 0, 1, 1]], dtype=np.int64)])
    return src, inputs, tmp_path


def _options(inputs, out, mask):
    return CheckOptions(pipeline="function-to-torch,torch-to-linalg", inputs_path=str(inputs),
                        out_dir=str(out), padding_mask=mask)


def test_the_padded_positions_are_left_out_and_said(case):
    src, inputs, out = case
    result = check_file(src, _options(inputs, out, 1))
    assert result.outcome is CheckOutcome.VERIFIED
    assert result.excluded.startswith("2 padded positions (attention_mask 0)")
    assert any(line.startswith("  left out: 2 padded positions") for line in result.render())
    assert result.to_json()["excluded"] == result.excluded
    assert 0.0 <= result.excluded_max_abs_diff < 1e-6  # tanh lowers right: only rounding there
    whole = check_file(src, _options(inputs, out, None))
    assert whole.outcome is CheckOutcome.VERIFIED and whole.excluded == ""


@pytest.mark.parametrize("mask", [0, 2, -1])
def test_a_mask_that_is_no_batch_by_seq_argument_is_a_usage_error(case, mask):
    src, inputs, out = case
    with pytest.raises(UsageError, match=rf"--padding-mask {mask} must name a 2-D "
                                         r".* 0: \[1, 4, 2\], 1: \[1, 4\]"):
        check_file(src, _options(inputs, out, mask))


def test_only_padded_rows_of_batch_by_seq_outputs_are_zeroed():
    padded = padding_of(np.array([[0, 1, 1]]))
    actual = np.arange(6, dtype=np.float32).reshape(1, 3, 2)
    expected = actual.copy()
    expected[0, 0] += 5.0          # a padded row: left out, its difference recorded
    pooled = np.ones((1, 2), np.float32)
    a, e, excluded = exclude_positions([actual, pooled], [expected, pooled + 1], padded)
    assert excluded == (1, 5.0)
    assert np.array_equal(a[0], e[0])                  # the padded row no longer differs
    assert not np.array_equal(a[1], e[1])              # another layout is compared whole
    wrong = expected.copy()
    wrong[0, 2] += 1.0             # a real token: still differs
    a, e, _ = exclude_positions([actual], [wrong], padded)
    assert not np.array_equal(a[0], e[0])
    assert padding_of(np.ones((1, 3))) is None and padding_of(np.zeros(3)) is None
