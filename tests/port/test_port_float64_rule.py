"""The float64 rule on modules of our own, through real torch-mlir-opt and the RefBackend:
a verdict that could have failed, and the one op named by its own noise ratio.

- gelu's tanh form: torch-mlir 20261001 lowers it off by ~1e-4 relative with one sign over most
  elements (hundreds of times float32 eager's own rounding against float64), every element
  within rtol 1e-4 / atol 1e-5. The flat tolerance passes it; the rule names it.
- A long chain of float32 sums, no op wrong: verified, and no op named when asked.
- Outputs of ~1e-9: an all-zero answer passes atol 1e-5; the rule judges them at their scale.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness.diagnose.numerics import NumericsBisectOptions, one_op
from harness.execute.closeness import NOISE_FACTOR, compare
from harness.execute.inputs import save_npz
from harness.frontends.names import FrontendName
from harness.models.hf_inputs import InputSet
from harness.port import PortOptions
from harness.port.frontend import port_frontend
from harness.port.progress import QUIET
from harness.port.record import PortOutcome
from harness.port.render import _numerics_lines
from harness.port.subject import Subject


class TanhGelu(nn.Module):
    """linear -> gelu (tanh form) -> linear, scaled by ``scale`` at the end (0.05: every
    element of the error within atol 1e-5)."""

    def __init__(self, scale: float = 0.05):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w1 = nn.Parameter(torch.randn(32, 64, generator=g) * 0.2, requires_grad=False)
        self.w2 = nn.Parameter(torch.randn(64, 32, generator=g) * 0.2, requires_grad=False)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (F.gelu(x @ self.w1, approximate="tanh") @ self.w2) * self.scale


class Sums(nn.Module):
    """Twelve rounds of row sums broadcast back and mixed in: rounding adds up, no op is wrong."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(12):
            x = x - x.sum(dim=-1, keepdim=True) / 7.0 + x.mean(dim=0, keepdim=True)
        return x


def _subject(module: nn.Module, name: str) -> Subject:
    g = torch.Generator().manual_seed(1)
    x0, x1 = torch.randn(8, 32, generator=g), torch.randn(8, 32, generator=g)
    return Subject(name, module.eval(), InputSet(("x",), (x0,), "seed 1"),
                   InputSet(("x",), (x1,), "seed 1, second"),
                   trace=lambda: (torch.jit.trace(module, (x0,), check_trace=False), []),
                   output_names=("y",))


@pytest.mark.parametrize("frontend", [FrontendName.FX, FrontendName.TORCHSCRIPT])
def test_a_wrong_constant_under_the_tolerance_is_a_mismatch_and_its_op_is_named(tmp_path: Path, frontend):
    port = port_frontend(_subject(TanhGelu(), "tanhgelu"), frontend, tmp_path / frontend.value,
                         PortOptions(out=str(tmp_path)), QUIET)
    assert str(port.outcome) == PortOutcome.NUMERICS_MISMATCH.value
    traced = port.numerics[0]
    [output] = traced.outputs
    # what the flat tolerance alone said: every element within it
    assert output.mismatched == 0
    assert output.float64_ratio is not None and output.float64_ratio > NOISE_FACTOR
    assert traced.float_noise  # the rule and the flat tolerance disagree, and it is said
    assert traced.culprit.startswith("aten.gelu computes wrong"), traced.culprit
    assert "call: aten.gelu(f32[8,64], 'tanh')" in traced.culprit_detail
    profile = next(line for line in traced.culprit_detail if line.startswith("error profile"))
    ratio = float(profile.split("(")[1].split("x")[0])
    assert ratio > 25 * NOISE_FACTOR  # hundreds of times float32 eager's own rounding
    worst = [line for line in traced.culprit_detail if line.lstrip().startswith("at [")]
    assert len(worst) == 3 and all("input " in line and "expected" in line for line in worst)
    text = "\n".join(_numerics_lines(traced, frontend))
    assert "a mismatch by float64 eager, within the elementwise tolerance" in text


def test_a_chain_of_float32_sums_is_verified_and_names_no_op(tmp_path: Path):
    port = port_frontend(_subject(Sums(), "sums"), FrontendName.FX, tmp_path / "fx",
                         PortOptions(out=str(tmp_path)), QUIET)
    assert str(port.outcome) == PortOutcome.VERIFIED.value
    for check in port.numerics:
        [output] = check.outputs
        assert output.float64_ratio is not None and output.float64_ratio <= NOISE_FACTOR
    # asked directly, the one-op search names none, and shows the largest ratios it measured
    ir = tmp_path / "fx" / "sums.torch.mlir"
    inputs = tmp_path / "inputs.npz"
    save_npz(inputs, [_subject(Sums(), "sums").inputs.tensors[0].numpy()])
    found = one_op(ir, "fx-to-torch,torch-to-linalg", options=NumericsBisectOptions(
        inputs_path=str(inputs), out_dir=str(tmp_path), blame=False))
    assert found.culprit is None
    assert "the function's results agree" in found.reason


def test_tiny_outputs_are_judged_at_their_scale(tmp_path: Path):
    """The same wrong gelu with outputs of ~1e-9: the flat tolerance passes anything there."""
    port = port_frontend(_subject(TanhGelu(scale=1e-9), "tiny"), FrontendName.FX, tmp_path / "fx",
                         PortOptions(out=str(tmp_path)), QUIET)
    assert str(port.outcome) == PortOutcome.NUMERICS_MISMATCH.value
    [output] = port.numerics[0].outputs
    assert output.mismatched == 0 and output.max_abs_diff < 1e-12
    assert output.float64_scale_max is not None and output.float64_scale_max < 1e-8  # the scale, kept
    zeros = compare([torch.zeros(8, 32)], [torch.full((8, 32), 4e-10)]).outputs[0]
    assert zeros.ok  # what a flat tolerance says of an all-zero answer at that scale


class LibraryGelu(TanhGelu):
    """The same gelu through a library module (torch/nn/modules/activation.py) this file calls."""

    def __init__(self):
        super().__init__()
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.act(x @ self.w1)  # the model's line: the culprit is named here
        return (hidden @ self.w2) * self.scale


@pytest.mark.parametrize("frontend", [FrontendName.FX, FrontendName.TORCHSCRIPT])
def test_the_culprit_is_placed_at_the_model_line_above_the_library(tmp_path: Path, frontend):
    port = port_frontend(_subject(LibraryGelu(), "libgelu"), frontend, tmp_path / frontend.value,
                         PortOptions(out=str(tmp_path)), QUIET)
    traced = port.numerics[0]
    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1)
                if "the model's line: the culprit is named here" in text)
    assert traced.culprit.startswith(f"aten.gelu computes wrong at {__file__}:{line}:"), traced.culprit
    library = traced.culprit_detail[0]
    assert library.startswith("in library code at ") and "torch/nn/modules/activation.py" in library


class LongSum(nn.Module):
    """Rows of 1,024 positive terms summed: the RefBackend sums in order, PyTorch in blocks, so
    its result is many times further from float64 than eager's, every term right."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * x).sum(dim=-1, keepdim=True)


def test_rounding_that_adds_up_in_a_long_sum_is_verified_when_no_op_is_off(tmp_path: Path):
    g = torch.Generator().manual_seed(2)
    x0, x1 = torch.rand(8, 1024, generator=g) + 1, torch.rand(8, 1024, generator=g) + 1
    module = LongSum().eval()
    subject = Subject("longsum", module, InputSet(("x",), (x0,), "seed 2"),
                      InputSet(("x",), (x1,), "seed 2, second"),
                      trace=lambda: (torch.jit.trace(module, (x0,), check_trace=False), []),
                      output_names=("y",))
    port = port_frontend(subject, FrontendName.FX, tmp_path / "fx", PortOptions(out=str(tmp_path)), QUIET)
    assert str(port.outcome) == PortOutcome.VERIFIED.value
    added = [c for c in port.numerics if c.float_noise.startswith("rounding adding up")]
    assert added, [c.outputs[0].float64_ratio for c in port.numerics]  # the outputs were past 4x
    [output] = added[0].outputs
    assert output.mismatched == 0 and output.float64_ratio is not None and output.float64_ratio > NOISE_FACTOR
    assert "is within the float64 rule" in added[0].float_noise and not added[0].culprit
