"""A port whose inputs leave a part of the model unrun is not "verified": a vision-language
model whose image size no plan could run was ported on its text alone (the input planner's
text-only fallback), and its image tower never ran. It ends "partial", naming what did not run,
on the board and in the exit status."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from harness.frontends.names import FrontendName
from harness.models.drivers import prepare
from harness.models.generic import ModelOptions
from harness.models.hf_inputs import InputSet
from harness.port import PortOptions
from harness.port.frontend import port_frontend
from harness.port.progress import QUIET
from harness.port.record import PortOutcome, PortRecord, SourceKind, VariantRecord
from harness.port.render import summary
from harness.models.choice import Variant
from harness.sweep.status import Status, _status

NOT_RUN = "text only: no pixels size tried ran the model (a test's own refusal)"


class Text(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * 2


def _subject(not_run: str):
    from harness.port.subject import Subject

    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(2, 8, generator=g), torch.randn(2, 8, generator=g)
    module = Text().eval()
    return Subject("text", module, InputSet(("x",), (x0,), "seed 0"), InputSet(("x",), (x1,), "seed 0, 2"),
                   trace=lambda: (torch.jit.trace(module, (x0,), check_trace=False), []),
                   output_names=("y",), not_run=not_run)


def test_a_port_that_left_part_of_the_model_unrun_is_partial(tmp_path: Path):
    port = port_frontend(_subject(NOT_RUN), FrontendName.FX, tmp_path / "fx", PortOptions(out=str(tmp_path)),
                         QUIET)
    assert port.outcome is PortOutcome.PARTIAL and port.not_run == NOT_RUN
    assert all(c.verdict is PortOutcome.VERIFIED for c in port.numerics)  # what ran is right
    record = PortRecord("text", SourceKind.TYPE, "text",
                        variants=[VariantRecord(Variant.STOCK, "text", ports=[port])])
    assert not record.ok  # exit status 1, as for any port that is not verified
    assert any("partial" in line and NOT_RUN in line for line in summary(record))
    assert _status(port, None) is Status.PARTIAL and not Status.PARTIAL.ok
    again = PortRecord.from_json(record.to_json())  # the record reads back
    assert again.variants[0].ports[0].outcome is PortOutcome.PARTIAL
    assert again.variants[0].ports[0].not_run == NOT_RUN


def test_the_same_port_with_every_input_made_is_verified(tmp_path: Path):
    port = port_frontend(_subject(""), FrontendName.FX, tmp_path / "fx", PortOptions(out=str(tmp_path)),
                         QUIET)
    assert port.outcome is PortOutcome.VERIFIED and not port.not_run


def test_the_text_only_fallback_says_what_did_not_run():
    """Aria at tiny size: no image size the planner tries runs its forward (a patch count its
    tiny config does not list), so the planner falls back to the text."""
    prepared = prepare("aria", ModelOptions())
    assert prepared.not_run.startswith("text only: no pixels size tried ran the model")
    assert "pixel_values" not in prepared.inputs.names
