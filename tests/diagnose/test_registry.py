"""An op torch-mlir's torch dialect does not define is imported as the generic torch.operator:
the tools say "not registered", not "no conversion pass lowers it" (which sends a reader to
the conversions, where the gap is not)."""

from __future__ import annotations

from harness.diagnose.bisect import Responsibility
from harness.diagnose.registry import describe_unregistered, registered_like, unregistered_op


def test_fft_fftn_is_not_registered_and_its_registered_relatives_are_named():
    assert unregistered_op('torch.operator "aten.fft_fftn"') == "aten.fft_fftn"
    assert registered_like("aten.fft_fftn") == ["torch.aten.fft_fft", "torch.aten.fft_ifft",
                                                "torch.aten.fft_rfft"]
    text = describe_unregistered('torch.operator "aten.fft_fftn"')
    assert text.startswith("aten.fft_fftn is not registered in torch-mlir's torch dialect "
                           "(it defines torch.aten.fft_fft, torch.aten.fft_ifft, torch.aten.fft_rfft)")


def test_registered_ops_and_other_labels_are_not_flagged():
    assert unregistered_op("torch.aten.mm") is None
    assert unregistered_op('torch.operator "aten.fft_fft"') is None  # registered, kept generic
    assert describe_unregistered("torch.aten.__and__.Tensor") is None


def test_a_leading_underscore_op_finds_no_false_relatives():
    assert unregistered_op('torch.operator "aten._grouped_mm"') == "aten._grouped_mm"
    assert registered_like("aten._grouped_mm") == []


def test_bisect_says_not_registered_instead_of_no_conversion():
    blocker = Responsibility('torch.operator "aten.fft_fftn"', True)
    assert "is not registered in torch-mlir's torch dialect" in blocker.describe()
    assert "no conversion pass" not in blocker.describe()
    lowered = Responsibility("torch.aten.erfinv", True)
    assert lowered.describe() == "no conversion pass of this pipeline lowers torch.aten.erfinv"
