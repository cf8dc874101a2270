"""The port's second opinions (bisect's failing pass, the blocker analysis) may be refused
without ending the port, but a bug in them is a harness bug and must show as one (exit 3),
not vanish into an empty field (the 40-model ``op.name`` crash hid there)."""

from __future__ import annotations

import pytest

from harness.compiler.records import Outcome, RunRecord
from harness.errors import NothingToReduceError
from harness.port import diagnose
from harness.port.options import PortOptions
from harness.port.record import PortStage


def _record(tmp_path) -> RunRecord:
    ir = tmp_path / "in.mlir"
    ir.write_text("module {}\n")
    return RunRecord(outcome=Outcome.LEGALIZATION_FAILURE, command=[], pipeline="builtin.module()",
                     input_path=str(ir), binary="torch-mlir-opt", returncode=1, elapsed_s=0.0,
                     stderr="")


def test_a_refused_bisect_leaves_the_failing_pass_empty(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise NothingToReduceError("in.mlir", "builtin.module()")

    monkeypatch.setattr("harness.diagnose.bisect.bisect", refuse)
    assert diagnose._failing_pass(_record(tmp_path), tmp_path, PortOptions()) == ""


def test_a_bug_in_bisect_is_not_swallowed(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise AttributeError("'StringAttr' object has no attribute 'startswith'")

    monkeypatch.setattr("harness.diagnose.bisect.bisect", broken)
    with pytest.raises(AttributeError, match="startswith"):
        diagnose._failing_pass(_record(tmp_path), tmp_path, PortOptions())


def test_a_bug_in_the_blocker_analysis_is_not_swallowed(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise AttributeError("'StringAttr' object has no attribute 'startswith'")

    monkeypatch.setattr("harness.diagnose.blockers.analyze", broken)
    with pytest.raises(AttributeError, match="startswith"):
        diagnose.pipeline_blockers(_record(tmp_path), PortStage.TORCH_TO_LINALG, tmp_path,
                                   PortOptions())


def test_a_crash_whose_stack_names_its_pass_is_not_run_again(tmp_path, monkeypatch):
    """A real crash of convert-torch-to-linalg (tests/data/crashers/F_view_zero_numel.mlir): its
    stack names the pass, so the port's diagnosis takes it from there and does not bisect (a
    runaway pass stopped by the memory limit would take its minute a second time)."""
    from pathlib import Path

    from harness.compiler.runner import RunOptions, run_pipeline
    from harness.port.record import PortStage

    def not_again(*args, **kwargs):
        raise AssertionError("bisect ran a crash whose stack names its pass")

    crasher = Path(__file__).parents[1] / "data" / "crashers" / "F_view_zero_numel.mlir"
    record = run_pipeline(crasher, "builtin.module(func.func(convert-torch-to-linalg))",
                          options=RunOptions(timeout_s=60))
    assert record.outcome is Outcome.CRASH and record.crash is not None, record.stderr[-500:]
    monkeypatch.setattr("harness.diagnose.bisect.bisect", not_again)
    [blocker] = diagnose.pipeline_blockers(record, PortStage.TORCH_TO_LINALG, tmp_path, PortOptions())
    assert blocker.failing_pass == record.crash.signature.pass_name != ""
    assert "ConvertTorchToLinalg" in blocker.failing_pass
