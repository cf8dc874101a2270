"""A float output is judged against eager in float64 (harness.execute.closeness, the float64
rule): float32 rounding of large values is verified although off the elementwise tolerance, and
said; a wrong result stays a mismatch, within the tolerance too (a wrong constant, tiny outputs).

The module sums values of about 1e4 to about 0 on the traced inputs (its bias is minus the
product in float64), so float32 eager itself is off the exact result by about 0.05 there:
elementwise, the RefBackend's equally rounded result misses rtol 1e-4 on most elements."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from harness.execute.closeness import NOISE_FACTOR, WORST_FACTOR, compare, noise_of
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
    assert str(port.outcome) == PortOutcome.VERIFIED.value
    traced, second = port.numerics
    [output] = traced.outputs
    assert output.mismatched > 512  # elementwise, most of the 1,024 elements are off
    assert output.eager_float64_rms > 0.01 and output.float64_rms <= NOISE_FACTOR * output.eager_float64_rms
    assert traced.verdict is PortOutcome.VERIFIED
    assert traced.float_noise.startswith("output 0: error against float64")
    assert not traced.culprit  # no op is searched for
    # within the tolerance on the other set, and judged by float64 there too; the flat rule and
    # float64 agree, so nothing is said
    assert second.outputs[0].mismatched == 0 and second.outputs[0].float64_ratio is not None
    assert second.verdict is PortOutcome.VERIFIED and not second.float_noise
    # the scale is kept: the exact sums cancel to within 0.1 of 0, where float32 eager is off by ~0.3
    assert output.float64_scale_max is not None and 0 < output.float64_scale_max < 0.1
    text = "\n".join(_numerics_lines(traced, FrontendName.FX))
    assert "verified by float64 eager" in text and "float32 rounding (" in text


def test_a_wrong_element_stays_a_mismatch(tmp_path: Path):
    # TorchScript: the trace keeps the wrong element (eager does not add it)
    port = port_frontend(_subject(Off), FrontendName.TORCHSCRIPT, tmp_path / "ts",
                         PortOptions(out=str(tmp_path)), QUIET)
    assert str(port.outcome) == PortOutcome.NUMERICS_MISMATCH.value
    traced = port.numerics[0]
    [output] = traced.outputs
    assert traced.verdict is PortOutcome.NUMERICS_MISMATCH and not traced.float_noise
    # in rms it hides among 1,024 elements; at its worst element it does not
    assert output.float64_rms < NOISE_FACTOR * output.eager_float64_rms
    assert output.float64_max_abs_diff > WORST_FACTOR * output.eager_float64_max_abs_diff


def test_the_float64_rule_decides_for_float_outputs():
    exact = np.linspace(-1e4, 1e4, 64)
    eager = exact.astype(np.float32)
    noise = eager.astype(np.float64) - exact
    for times, within in ((1.0, True), (NOISE_FACTOR, True), (NOISE_FACTOR * 1.5, False)):
        # (here the worst element scales as the rms does: the rms bound decides)
        judged = noise_of(0, exact + times * noise, eager, exact)
        assert judged is not None and judged.within is within
        assert judged.compiled_rms == pytest.approx(times * judged.eager_rms)
        assert judged.compiled_max == pytest.approx(times * judged.eager_max)
    off = eager + np.float32(1.5)  # far off: flat and float64 agree
    [judged] = compare([off], [eager], wide=[exact]).outputs
    assert judged.mismatched and judged.noise is not None and not judged.ok
    ints = np.arange(6, dtype=np.int64)
    [judged] = compare([ints + 1], [ints], wide=[ints.astype(np.float64)]).outputs
    assert judged.noise is None and not judged.ok  # integers: exact, by the flat rule
    [judged] = compare([eager[:3]], [eager], wide=[exact]).outputs
    assert judged.problem and not judged.ok  # a shape is never noise
    overflowed = exact.copy()
    overflowed[0] = np.nan  # float64 not finite where float32 eager is: no reference
    [judged] = compare([eager * 1.01], [eager], wide=[overflowed]).outputs
    assert judged.noise is None and not judged.ok  # the flat tolerance decides
    both = eager.copy()
    both[0], overflowed[0] = -np.inf, -np.inf  # not finite in both: that element by the flat rule
    [judged] = compare([both], [both], wide=[overflowed]).outputs
    assert judged.ok and judged.noise is not None and judged.off_nonfinite == 0
    moved = both.copy()
    moved[0] = 0.0
    [judged] = compare([moved], [both], wide=[overflowed]).outputs
    assert not judged.ok and judged.off_nonfinite == 1


def test_a_wrong_constant_within_the_tolerance_is_a_mismatch():
    """Every element within rtol 1e-4, every error of one sign: ~250x float32's own error."""
    exact = np.linspace(-3, 3, 256)
    eager = exact.astype(np.float32)
    wrong = (exact * (1 + 3e-5)).astype(np.float32)
    result = compare([wrong], [eager], wide=[exact])
    [judged] = result.outputs
    assert judged.mismatched == 0 and not judged.ok and not result.ok
    assert judged.noise is not None and judged.noise.ratio > 100 * NOISE_FACTOR / 4
    assert judged.noise.bias == pytest.approx(0.0, abs=0.2)  # odd around 0: both signs
    shifted = (exact + 3e-5).astype(np.float32)  # a wrong additive constant: one sign
    [judged] = compare([shifted], [eager], wide=[exact]).outputs
    assert not judged.ok and judged.noise is not None and judged.noise.bias > 0.9
    assert len(judged.noise.worst) == 3 and judged.noise.worst[0].got > judged.noise.worst[0].expected


def test_tiny_outputs_are_judged_whatever_their_scale():
    """Outputs of ~4e-10: an all-zero answer passes atol 1e-5, never the float64 rule."""
    exact = np.linspace(-4.3e-10, 4.3e-10, 128)
    eager = exact.astype(np.float32)
    zeros = np.zeros_like(eager)
    [flat] = compare([zeros], [eager]).outputs
    assert flat.ok  # what the flat tolerance alone said
    [judged] = compare([zeros], [eager], wide=[exact]).outputs
    assert not judged.ok and judged.noise is not None and judged.noise.scale_max == pytest.approx(4.3e-10)
    [right] = compare([eager], [eager], wide=[exact]).outputs
    assert right.ok


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


def test_the_record_is_strict_json_with_infinite_ratios(tmp_path: Path):
    """A ratio of an exact eager value (0 error) to a wrong compiled one is infinite: the record
    writes it as the string "inf" (json.loads refusing Infinity/NaN reads it), and reads it back."""
    import json
    import math

    from harness.port.record import OutputDiff, PortRecord

    port = port_frontend(_subject(Cancelling), FrontendName.FX, tmp_path / "fx",
                         PortOptions(out=str(tmp_path)), QUIET)
    port.numerics[0].outputs[0] = OutputDiff(0, "y", "float32", [4, 256], math.inf, math.nan, 1, 1024,
                                             "rtol 0.0001, atol 1e-05", float64_ratio=math.inf,
                                             float64_rms=math.nan)
    from harness.models.choice import Variant
    from harness.port.record import SourceKind, VariantRecord

    record = PortRecord("m", SourceKind.TYPE, "m", variants=[VariantRecord(Variant.STOCK, "m", ports=[port])])
    path = tmp_path / "record.json"
    record.write(path)

    def refuse(name: str):
        raise ValueError(f"bare {name} in the record")

    data = json.loads(path.read_text(), parse_constant=refuse)
    written = data["variants"][0]["ports"][0]["numerics"][0]["outputs"][0]
    assert written["float64_ratio"] == "inf" and written["float64_rms"] == "nan"
    back = PortRecord.read(path).variants[0].ports[0].numerics[0].outputs[0]
    assert back.float64_ratio == math.inf and back.float64_rms is not None and math.isnan(back.float64_rms)
