"""One frontend's port of small modules: its numbers, its blockers, its time limit.

Numbers: the RefBackend against eager, on the traced inputs and on a second set.

The module here is deliberately wrong for tracing: it branches in Python on a value of its
input. The trace freezes the branch taken on the traced inputs, so the lowered module is right
on them and wrong on a second set that takes the other branch: ``numerics-mismatch``, never a
pass, with the trace itself named as the source. torch.export refuses the same branch outright.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path

import pytest
import torch
from torch import nn

from harness.frontends.names import FrontendName
from harness.port import PortOptions
from harness.port.frontend import port_frontend
from harness.port.progress import QUIET
from harness.port.record import PortOutcome
from harness.port.subject import Subject

from support.subjects import masked_subject


class FrozenBranch(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if bool(mask.all()):  # a Python bool: the trace keeps the branch it saw
            return x * 2.0 + 1.0
        return x * 2.0 - mask.float()


class ThreeBlockers(nn.Module):
    """Ops torch-to-linalg has no conversion for at torch-mlir 20261001, each used alone."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        both = (x > 0) & (mask > 0)
        return both.float() + torch.erfinv(x * 0.5) + torch.erfinv(x * 0.25) + torch.fmod(x, 0.3)


class Doubling(nn.Module):
    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x * 2.0 + mask.float()


def _subject(module: nn.Module, *, trace=None) -> Subject:
    return masked_subject(module, x_shift=0.0, trace=trace)


@pytest.fixture(scope="module")
def frozen(tmp_path_factory):
    folder = tmp_path_factory.mktemp("frozen")
    subject = _subject(FrozenBranch())
    options = PortOptions(out=str(folder))
    return {name: port_frontend(subject, name, folder / name.value, options, QUIET)
            for name in (FrontendName.TORCHSCRIPT, FrontendName.FX)}


def test_a_value_frozen_by_the_trace_is_a_numerics_mismatch(frozen):
    ts = frozen[FrontendName.TORCHSCRIPT]
    assert str(ts.outcome) == PortOutcome.NUMERICS_MISMATCH.value
    assert [str(s.name) for s in ts.stages] == ["trace", "import", "torchscript-to-torch",
                                           "torch-to-linalg", "refbackend-lowering", "execution"]
    assert all(s.ok for s in ts.stages) and str(ts.reached) == "execution" and not ts.failed_stage
    traced, second = ts.numerics
    # right on the traced inputs, to float precision
    assert (str(traced.inputs), str(traced.verdict)) == ("traced", "verified")
    assert traced.max_abs_diff < 1e-6 and traced.program_max_abs_diff == 0.0
    # wrong on the second set: the trace computes x*2+1 where eager takes the other branch
    assert (str(second.inputs), str(second.verdict)) == ("second", "numerics-mismatch")
    [output] = second.outputs
    assert (output.name, output.dtype, output.shape) == ("y", "float32", [2, 4])
    assert output.mismatched == 8 and output.total == 8
    # x*2+1 against x*2-mask: 1 + mask, i.e. 1 where the mask is 0 and 2 elsewhere
    assert second.max_abs_diff == pytest.approx(2.0)
    assert second.program_max_abs_diff == pytest.approx(2.0)  # the trace itself is wrong here
    # so no op of torch-mlir's is searched for
    assert second.culprit.startswith("not narrowed: the imported program itself differs")
    assert not traced.culprit
    [command] = ts.commands
    assert command.split()[1] == "check" and "--inputs" in command
    assert "torchscript-to-torch,torch-to-linalg" in command


def test_torch_export_refuses_the_branch(frozen):
    fx = frozen[FrontendName.FX]
    assert str(fx.outcome) == PortOutcome.FAILS.value and str(fx.failed_stage) == "export"
    [blocker] = fx.blockers
    assert "data-dependent" in blocker.message or "GuardOnDataDependent" in blocker.message
    lines, first = inspect.getsourcelines(FrozenBranch.forward)
    branch = first + next(i for i, line in enumerate(lines) if "if bool(" in line)
    assert blocker.location == f"{__file__}:{branch}"  # located at the model's own line


def test_a_correct_module_verifies_on_both_sets(tmp_path):
    subject = _subject(Doubling())
    port = port_frontend(subject, FrontendName.FX, tmp_path / "fx", PortOptions(out=str(tmp_path)),
                         QUIET)
    assert str(port.outcome) == PortOutcome.VERIFIED.value
    assert [str(c.verdict) for c in port.numerics] == ["verified", "verified"]
    assert all(c.max_abs_diff == 0.0 for c in port.numerics)


def test_several_blockers_are_ranked_most_occurrences_first(tmp_path):
    from harness.port.record import PortRecord, VariantRecord
    from harness.port.render import summary

    port = port_frontend(_subject(ThreeBlockers()), FrontendName.TORCHSCRIPT, tmp_path / "ts",
                         PortOptions(out=str(tmp_path)), QUIET)
    assert str(port.outcome) == PortOutcome.FAILS.value and str(port.failed_stage) == "torch-to-linalg"
    assert [(b.rank, b.op, b.count) for b in port.blockers] == [
        (1, "torch.aten.erfinv", 2), (2, "torch.aten.__and__.Tensor", 1),
        (3, "torch.aten.fmod.Scalar", 1)]
    lines, first = inspect.getsourcelines(ThreeBlockers.forward)
    at = {word: f"{__file__}:{first + next(i for i, line in enumerate(lines) if word in line)}"
          for word in ("&", "erfinv")}
    assert [b.location for b in port.blockers] == [at["erfinv"], at["&"], at["erfinv"]]
    for blocker in port.blockers:  # each alone still fails: its one-op reproducer holds only it
        assert blocker.op in Path(blocker.reproducer).read_text()
    record = PortRecord("three", "module", "", variants=[VariantRecord("stock", "three", ports=[port])])
    assert ("three torchscript: fails at torch-to-linalg (legalization-failure): torch.aten.erfinv "
            f"at port/test_port_frontend.py:{at['erfinv'].rpartition(':')[2]} has no lowering "
            "(+2 more blockers)") in summary(record)


def test_a_stage_in_python_stops_at_the_timeout(tmp_path):
    def slow_trace():
        time.sleep(30)
        raise AssertionError("not reached")

    subject = _subject(Doubling(), trace=slow_trace)
    start = time.monotonic()
    port = port_frontend(subject, FrontendName.TORCHSCRIPT, tmp_path / "ts",
                         PortOptions(out=str(tmp_path), timeout_s=0.5), QUIET)
    assert time.monotonic() - start < 10
    assert str(port.outcome) == PortOutcome.FAILS.value and str(port.failed_stage) == "trace"
    [stage] = port.stages
    assert (str(stage.name), stage.ok, str(stage.outcome)) == ("trace", False, "timeout")
    assert port.blockers[0].signature == "trace: timeout"
