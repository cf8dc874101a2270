"""The TOSA fixes for IREE (harness.fixes.tosa, harness.port.target_fixes): torch-mlir's TOSA
holds f64 (a float32 LayerNorm's variance) and i64 -> f32 casts (``.float()`` of an arange),
which IREE's TOSA input refuses as outside every profile; ``--fix`` rewrites the TOSA contract
and the port's numbers decide. Real torch-mlir-opt, real iree-compile and iree-run-module."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from harness.compiler.mlir import parse_ir
from harness.compiler.targets import Target
from harness.execute.backend_names import BackendName
from harness.fixes.tosa import TosaCastViaI32, TosaVarianceF32
from harness.frontends.names import FrontendName
from harness.models.hf_inputs import InputSet
from harness.port import PortOptions
from harness.port.frontend import port_targets
from harness.port.progress import QUIET
from harness.port.record import PortOutcome
from harness.port.subject import Subject


class NormAndPositions(nn.Module):
    """A LayerNorm (FX: var_mean, computed in f64 by torch-mlir), positions made float
    (TorchToTosa: one tosa.cast i64 -> f32) and a float made int64 (f32 -> i64)."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[-1]).float() / 16
        buckets = (x.abs() * 2).long()  # a float32 -> int64 cast (T5's relative buckets)
        return self.norm(x) + positions + buckets.float() / 4


def _ports(tmp_path: Path, fix: bool):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(4, 16, generator=g) * 3, torch.randn(4, 16, generator=g) * 3
    subject = Subject("normpos", NormAndPositions().eval(), InputSet(("x",), (x0,), "seed 0"),
                      InputSet(("x",), (x1,), "seed 0, 2"), output_names=("y",))
    return port_targets(subject, FrontendName.FX, tmp_path / f"normpos-{fix}.fx",
                        PortOptions(out=str(tmp_path), fix=fix, targets=(Target.TOSA,),
                                    backends=(BackendName.IREE, BackendName.REFBACKEND)), QUIET)


def test_iree_refuses_the_tosa_and_fix_makes_it_verify_on_both_backends(tmp_path: Path):
    iree, ref = _ports(tmp_path, fix=False)
    assert iree.outcome is PortOutcome.FAILS and iree.failed_stage.value == "iree-compile"
    assert "did not align with any profile or extension, got (i64,f32)" in iree.blockers[0].message
    assert ref.outcome is PortOutcome.VERIFIED  # the RefBackend takes it through tosa-to-linalg

    iree, ref = _ports(tmp_path, fix=True)
    assert (iree.outcome, ref.outcome) == (PortOutcome.VERIFIED, PortOutcome.VERIFIED), iree.blockers
    # the cast first (IREE names the first op it refuses), then the f64 its next compile met
    assert [(f.fix, f.outcome.value) for f in iree.fixes] == [
        ("tosa-cast-via-i32", "kept"), ("tosa-variance-f32", "kept")]
    assert ref.fixes == []  # the RefBackend needed none
    fixed = Path(iree.fixes[-1].output_path).read_text()
    assert "f64" not in fixed and "tensor<16xi32>" in fixed
    casts = iree.fixes[0].application.changed
    assert {c.what for c in casts} == {"tosa.cast i64 -> f32 via i32", "tosa.cast f32 -> i64 via i32"}
    assert all(n.max_abs_diff < 1e-5 for n in iree.numerics)


_F64_SIGNATURE = """
func.func @main(%arg0: tensor<4xf64>) -> tensor<4xf64> {
  %0 = tosa.cast %arg0 : (tensor<4xf64>) -> tensor<4xf32>
  %1 = tosa.cast %0 : (tensor<4xf32>) -> tensor<4xf64>
  return %1 : tensor<4xf64>
}
"""

_WIDE_CONSTANT = """
func.func @main() -> tensor<2xf32> {
  %0 = "tosa.const"() <{values = dense<[1, 4294967296]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %1 = tosa.cast %0 : (tensor<2xi64>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
"""


def test_a_model_of_its_own_f64_and_a_constant_past_int32_are_refused():
    below = _WIDE_CONSTANT.replace("[1, 4294967296]", "[1, -4294967296]")  # named, not the max
    for text, fix, reason in ((_F64_SIGNATURE, TosaVarianceF32(), "signature has f64"),
                              (_WIDE_CONSTANT, TosaCastViaI32(), "holds 4294967296, outside int32"),
                              (below, TosaCastViaI32(), "holds -4294967296, outside int32")):
        parsed = parse_ir(text.encode())
        assert parsed is not None
        context, module = parsed
        with context:
            app = fix.rewrite(module)
        assert not app.applied and reason in app.refused[0].reason, app.refused


class GatheredIds(nn.Module):
    """BridgeTower's buffered token_type_ids: ``torch.gather`` of an int64 buffer by positions,
    then an embedding of what it gathered (TorchToTosa: a tosa.gather of i64 values)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("ids", torch.arange(16).view(1, 16) % 3)
        self.emb = nn.Embedding(3, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(16).view(1, 16).expand(x.shape[0], -1).flip(1)
        return x + self.emb(torch.gather(self.ids.expand(x.shape[0], -1), 1, positions))


def test_a_gather_of_int64_values_fails_on_iree_and_the_fix_makes_it_verify(tmp_path: Path):
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(2, 16, 16, generator=g), torch.randn(2, 16, 16, generator=g)
    torch.manual_seed(0)
    subject = Subject("gather", GatheredIds().eval(), InputSet(("x",), (x0,), "seed 0"),
                      InputSet(("x",), (x1,), "seed 0, 2"), output_names=("y",))

    def port(fix: bool):
        [iree] = port_targets(subject, FrontendName.FX, tmp_path / f"gather-{fix}.fx",
                              PortOptions(out=str(tmp_path), fix=fix, targets=(Target.TOSA,),
                                          backends=(BackendName.IREE,)), QUIET)
        return iree

    unfixed = port(False)
    assert unfixed.outcome is PortOutcome.FAILS and unfixed.failed_stage.value == "iree-compile"
    assert "got (i64,i32,i64)" in unfixed.blockers[0].message
    fixed = port(True)
    assert fixed.outcome is PortOutcome.VERIFIED, fixed.blockers
    kept = [f for f in fixed.fixes if f.fix == "tosa-gather-via-i32"]
    assert kept and kept[0].outcome.value == "kept"
    assert {c.what for c in kept[0].application.changed} == {"tosa.gather i64 values via i32"}
