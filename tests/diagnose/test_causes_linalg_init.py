"""Issue 44, one bug one issue: BLOOM's view-then-slice and GPT-Neo's view-then-permute verifier
errors (TorchScript, --dynamic seq) are one TorchToLinalg cause: the helper's init is sized with
tensor.dim folded through the view's cast to its unrefined type, more static than the input.
Their two signatures (the reports' record.json) group into one bundle; other linalg verifier
errors stay their own."""

from __future__ import annotations

from harness.diagnose.causes import group_by_cause, shared_cause

SLICE = ("verifier-error: 'linalg.generic' op expected type of operand #1 ('tensor<1x?x4x3x16xf32>') "
         "to match type of corresponding result ('tensor<?x?x?x?x?xf32>')")
PERMUTE = ("verifier-error: 'linalg.transpose' op dim(result, 0) = 1 doesn't match "
           "dim(input, permutation[0]) = -9223372036854775808")


def test_the_view_slice_and_view_permute_verifier_errors_share_one_cause():
    slice_cause, permute_cause = shared_cause(SLICE), shared_cause(PERMUTE)
    assert slice_cause is not None and slice_cause == permute_cause
    assert slice_cause.key == "linalg-init-more-static-than-input"
    assert group_by_cause([SLICE, PERMUTE], str) == [[SLICE, PERMUTE]]


def test_other_linalg_verifier_errors_are_their_own_bug():
    for other in ("verifier-error: 'linalg.generic' op expected indexing_map #0 to have 2 dim(s) to "
                  "match the number of loops",
                  "verifier-error: 'linalg.transpose' op dim(result, 0) = 2 doesn't match "
                  "dim(input, permutation[0]) = 3"):
        assert shared_cause(other) is None
    assert group_by_cause([SLICE, "pass-failure: x"], str) == [[SLICE], ["pass-failure: x"]]
