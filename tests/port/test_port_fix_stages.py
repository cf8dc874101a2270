"""``harness port --fix`` on a torch IR blocker: the stages after the fix are the fix loop's own
runs of them (each ran once on the fixed input), not a third run, and the port reads as the
loop left it. A small module through the real TorchScript frontend and torch-mlir-opt."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from harness.fixes.outcomes import StepOutcome
from harness.frontends.names import FrontendName
from harness.port import PortOptions
from harness.port.frontend import port_frontend
from harness.port.progress import QUIET
from harness.port.record import PortOutcome

from support.subjects import masked_subject


class AndMask(nn.Module):
    """``&`` of two boolean masks: traced as ``aten::__and__``, which torch-to-linalg does not
    lower at the pinned torch-mlir (the bitwise-and-or fix renames it)."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        keep = (mask > 0) & (x > 0)
        return x * keep.float()


def _port(folder: Path, fix: bool, module: nn.Module | None = None):
    return port_frontend(masked_subject(module or AndMask()), FrontendName.TORCHSCRIPT,
                         folder / "torchscript", PortOptions(out=str(folder), fix=fix), QUIET)


def test_without_fix_the_literal_blocks_torch_to_linalg(tmp_path):
    port = _port(tmp_path, fix=False)
    assert str(port.outcome) == PortOutcome.FAILS.value
    assert str(port.failed_stage) == "torch-to-linalg"
    assert port.blockers[0].op == "torch.aten.__and__.Tensor"


def test_the_fixed_stage_is_the_loops_run_not_a_third_one(tmp_path):
    port = _port(tmp_path, fix=True)
    assert str(port.outcome) == PortOutcome.VERIFIED.value, port.blockers
    assert [f.fix for f in port.fixes] == ["bitwise-and-or"]
    assert port.fixes[0].outcome is StepOutcome.KEPT
    linalg = [s for s in port.stages if str(s.name) == "torch-to-linalg"]
    assert len(linalg) == 1 and linalg[0].ok
    folder = tmp_path / "torchscript"
    # the loop's run of torch-to-linalg on the fixed input is the stage's record
    assert Path(linalg[0].output).name == "andmask.fix.1.torch-to-linalg.mlir"
    assert "torch.aten.bitwise_and.Tensor" in Path(port.fixes[0].output_path).read_text()
    assert not list(folder.glob("*.fixed.*"))  # no third run of the stage wrote a file
    assert any(n.startswith("--fix applied: bitwise-and-or") for n in port.notes)


class AndThenErfinv(nn.Module):
    """``&`` (the fix renames it) and ``erfinv`` (no fix, no lowering at the pinned torch-mlir):
    the port stays blocked at torch-to-linalg after a kept fix."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        keep = (mask > 0) & (x > 0)
        return torch.special.erfinv(x * 0.5) * keep.float()


def test_a_port_blocked_again_after_a_kept_fix_is_diagnosed_from_the_loops_analysis(
        tmp_path, monkeypatch):
    import harness.diagnose.blockers as blockers_module
    import harness.fixes.loop as loop_module

    runs: list[str] = []
    real = blockers_module.analyze

    def counted(*args, **kwargs):
        runs.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(blockers_module, "analyze", counted)  # the port's diagnosis calls it so
    monkeypatch.setattr(loop_module, "analyze", counted)      # the fix loop by its own name
    port = _port(tmp_path, fix=True, module=AndThenErfinv())
    assert str(port.outcome) == PortOutcome.FAILS.value and str(port.failed_stage) == "torch-to-linalg"
    assert [f.fix for f in port.fixes] == ["bitwise-and-or"] and port.fixes[0].kept
    assert [str(b.op) for b in port.blockers] == ["torch.aten.erfinv"]
    # the stage failed twice (before and after the fix), each failure analysed once: the
    # diagnosis took the loop's analysis of the second one instead of analysing it again
    assert len(runs) == 2 and runs[1] == port.fixes[0].output_path
    failed = [s for s in port.stages if str(s.name) == "torch-to-linalg"]
    assert len(failed) == 1 and not failed[0].ok
