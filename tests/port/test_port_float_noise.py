"""A float output off the elementwise tolerance is judged again against eager in float64
(harness.execute.closeness.float_noise): float32 rounding of large values is verified, and said;
a wrong result stays a mismatch.

The module sums values of about 1e4 to about 0 on the traced inputs (its bias is minus the
product in float64), so float32 eager itself is off the exact result by about 0.05 there:
elementwise, the RefBackend's equally rounded result misses rtol 1e-4 on most elements."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from harness.execute.closeness import NOISE_FACTOR, WORST_FACTOR, compare, float_noise
from harness.frontends.names import FrontendName
from harness.models.hf_inputs import InputSet
from harness.port import PortOptions
from harness.port.frontend import port_frontend
from harness.port.progress import QUIET
from harness.port.record import PortOutcome
from harness.port.render import _numerics_lines
from harness.port.subject import Subject


class Cancelling(nn.Module):
    def __init__(self, x0: torch.Tensor):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w = nn.Parameter(torch.randn(256, 256, generator=g) * 100, requires_grad=False)
        self.register_buffer("b", -(x0.double() @ self.w.double()).float())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.w + self.b


class Off(Cancelling):
    """The same, wrong by 3 in one element of 1,024 (where float32 eager is off by up to ~0.3)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x @ self.w + self.b
        wrong = (torch.arange(y.numel()).reshape(y.shape) == 5).float() * 3
        return y + wrong if torch.jit.is_tracing() else y


def _subject(module_class: type[Cancelling]) -> Subject:
    g = torch.Generator().manual_seed(1)
    x0, x1 = torch.randn(4, 256, generator=g) * 100, torch.randn(4, 256, generator=g) * 100
    module = module_class(x0).eval()
    first, second = InputSet(("x",), (x0,), "sums to about 0"), InputSet(("x",), (x1,), "other values")
    return Subject(module_class.__name__.lower(), module, first, second,
                   trace=lambda: (torch.jit.trace(module, (x0,), check_trace=False), []),
                   output_names=("y",))


def test_float32_rounding_of_large_values_is_verified_by_float64(tmp_path: Path):
    port = port_frontend(_subject(Cancelling), FrontendName.FX, tmp_path / "fx",
                         PortOptions(out=str(tmp_path)), QUIET)
    assert port.outcome == PortOutcome.VERIFIED.value
    traced, second = port.numerics
    [output] = traced.outputs
    assert output.mismatched > 512  # elementwise, most of the 1,024 elements are off
    assert output.eager_float64_rms > 0.01 and output.float64_rms <= NOISE_FACTOR * output.eager_float64_rms
    assert traced.verdict is PortOutcome.VERIFIED
    assert traced.float_noise.startswith("output 0: error against float64 eager")
    assert not traced.culprit  # no op is searched for
    assert second.outputs[0].mismatched == 0 and second.outputs[0].float64_rms is None  # not judged
    text = "\n".join(_numerics_lines(traced, FrontendName.FX))
    assert "verified by float64 eager" in text and "float32 rounding (" in text


def test_a_wrong_element_stays_a_mismatch(tmp_path: Path):
    # TorchScript: the trace keeps the wrong element (eager does not add it)
    port = port_frontend(_subject(Off), FrontendName.TORCHSCRIPT, tmp_path / "ts",
                         PortOptions(out=str(tmp_path)), QUIET)
    assert port.outcome == PortOutcome.NUMERICS_MISMATCH.value
    traced = port.numerics[0]
    [output] = traced.outputs
    assert traced.verdict is PortOutcome.NUMERICS_MISMATCH and not traced.float_noise
    # in rms it hides among 1,024 elements; at its worst element it does not
    assert output.float64_rms < NOISE_FACTOR * output.eager_float64_rms
    assert output.float64_max_abs_diff > WORST_FACTOR * output.eager_float64_max_abs_diff


def test_float_noise_judges_only_float_outputs_off_the_tolerance():
    exact = np.linspace(-1e4, 1e4, 64)
    eager = exact.astype(np.float32)
    noise = eager.astype(np.float64) - exact
    off = compare([eager * 1.01 + 1], [eager])  # elementwise, off the tolerance
    for times, within in ((1.0, True), (NOISE_FACTOR, True), (NOISE_FACTOR * 1.5, False)):
        # (here the worst element scales as the rms does: the rms bound decides)
        judged = float_noise(off, [exact + times * noise], [eager], [exact])
        assert judged is not None and [j.within for j in judged] == [within]
        assert judged[0].compiled_rms == pytest.approx(times * judged[0].eager_rms)
        assert judged[0].compiled_max == pytest.approx(times * judged[0].eager_max)
    ints = np.arange(6, dtype=np.int64)
    assert float_noise(compare([ints + 1], [ints]), [ints + 1], [ints], [ints]) is None
    assert float_noise(compare([eager[:3]], [eager]), [eager[:3]], [eager], [exact]) is None  # shape
    overflowed = exact.copy()
    overflowed[0] = np.inf
    assert float_noise(off, [eager], [eager], [overflowed]) is None
    assert float_noise(compare([eager], [eager]), [eager], [eager], [exact]) == []  # none off


@pytest.mark.parametrize("wide", [True, False])
def test_the_float64_reference_is_eager_on_a_copy(wide):
    subject = _subject(Cancelling)
    if not wide:  # a module that refuses float64 gives no opinion
        subject = Subject("f32", _Float32Only(), subject.inputs, subject.second_inputs)
        assert subject.expected_float64(subject.inputs) is None
        return
    [reference] = subject.expected_float64(subject.inputs)
    assert reference.dtype == torch.float64 and next(subject.eager.parameters()).dtype == torch.float32


class _Float32Only(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype is not torch.float32:
            raise TypeError("float32 only")
        return x
