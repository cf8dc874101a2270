"""``moe-batched-experts``: a mixture-of-experts model's experts switched to transformers'
``batched_mm`` before trace or export. Without it tiny HunYuan-MoE stops on every frontend at
its experts (torch.onnx.export: no translation of ``transformers.grouped_mm_fallback``; FX:
that op and ``aten.histc`` reach a pipeline that cannot lower them); with ``--fix`` the FX and
ONNX ports verify against the original eager model, and the module is put back afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from harness.fixes.base import BlockerSeen
from harness.fixes.catalog import by_name
from harness.frontends.names import FrontendName
from harness.port import PortOptions, port_model
from harness.port.record import PortOutcome, PortStage

MOE = "hunyuan_v1_moe"


def _ports(tmp_path: Path, fix: bool) -> dict[str, object]:
    record = port_model(MOE, PortOptions(out=str(tmp_path), fix=fix,
                                         frontends=(FrontendName.FX, FrontendName.ONNX)))
    return {p.path: p for _, p in record.ports()}


def test_moe_experts_stop_every_frontend_without_the_fix(tmp_path: Path):
    ports = _ports(tmp_path, fix=False)
    fx, onnx = ports["fx"], ports["onnx"]
    assert fx.outcome is PortOutcome.FAILS and onnx.outcome is PortOutcome.FAILS
    assert onnx.failed_stage is PortStage.ONNX_EXPORT
    [blocker] = onnx.blockers
    assert blocker.op == "transformers.grouped_mm_fallback.default"
    assert blocker.location.endswith("modeling_hunyuan_v1_moe.py:298"), blocker.location  # the model's line
    assert "the exporter's gap" in blocker.explanation


def test_moe_batched_experts_lets_fx_and_onnx_verify(tmp_path: Path):
    ports = _ports(tmp_path, fix=True)
    for path in ("fx", "onnx"):
        port = ports[path]
        assert port.outcome is PortOutcome.VERIFIED, (path, port.outcome, port.blockers[:1])
        kept = [f for f in port.fixes if f.fix == "moe-batched-experts" and f.kept]
        assert kept, (path, [(f.fix, f.outcome) for f in port.fixes])


def test_a_model_without_experts_is_refused_and_the_switch_is_undone():
    fix = by_name("moe-batched-experts")
    assert fix.answers(BlockerSeen(message="aten.histc.default in the exported program"))
    plain = fix.apply(torch.nn.Linear(2, 2))
    assert not plain.applied and plain.refused
    from harness.models import drivers, hf_resolve
    from harness.models.generic import Variant
    from harness.port.model import _model_options

    model = drivers.prepare(hf_resolve.resolve(MOE), _model_options(PortOptions(), Variant.STOCK)).module
    moe = next(m for m in model.modules() if callable(getattr(m, "get_experts_implementation", None)))
    before = moe.get_experts_implementation()
    app = fix.apply(model)
    assert app.applied and moe.get_experts_implementation()[""] == "batched_mm"
    assert app.undo is not None
    app.undo()
    assert moe.get_experts_implementation() == before and before[""] != "batched_mm"


@pytest.fixture(autouse=True)
def _no_grad():
    with torch.no_grad():
        yield
