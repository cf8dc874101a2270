"""The port names a legalization failure's failing pass from the blocker analysis (MLIR's
after-failure dump), not from a bisect run: on a big model that is one whole pipeline run less
(glm5_next: 30 s). Bisect stays the fallback when the analysis has no pass to give."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.compiler.records import Outcome, RunRecord
from harness.compiler.runner import run_pipeline
from harness.diagnose import blockers
from harness.port import diagnose
from harness.port.options import PortOptions
from harness.port.record import PassSource, PortStage

LINALG = "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"
AND_ONLY = """\
func.func @forward(%arg0: !torch.vtensor<[2],i1>, %arg1: !torch.vtensor<[2],i1>) -> !torch.vtensor<[2],i1> {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2],i1>, !torch.vtensor<[2],i1> -> !torch.vtensor<[2],i1>
  return %0 : !torch.vtensor<[2],i1>
}
"""  # noqa: E501


@pytest.fixture
def failed(tmp_path) -> RunRecord:
    path = tmp_path / "in.mlir"
    path.write_text(AND_ONLY)
    record = run_pipeline(path, LINALG)
    assert record.outcome is Outcome.LEGALIZATION_FAILURE, record.stderr[-500:]
    return record


def _no_bisect(*args, **kwargs):
    raise AssertionError("bisect ran though the blocker analysis names the failing pass")


def test_the_analysis_given_names_the_failing_pass_without_bisect(failed, tmp_path, monkeypatch):
    analysis = blockers.analyze(failed.input_path, LINALG, replay_conversions=False, cache=False)
    assert analysis.failing_pass
    monkeypatch.setattr("harness.diagnose.bisect.bisect", _no_bisect)
    found = diagnose.pipeline_blockers(failed, PortStage.TORCH_TO_LINALG, tmp_path, PortOptions(),
                                       analysis)
    assert [str(b.op) for b in found] == ["torch.aten.__and__.Tensor"]
    assert all(b.failing_pass == analysis.failing_pass for b in found)
    assert all(b.failing_pass_from == PassSource.AFTER_FAILURE_DUMP for b in found)


def test_without_an_analysis_the_port_analyses_once_and_does_not_bisect(failed, tmp_path,
                                                                         monkeypatch):
    calls: list[str] = []
    real = blockers.analyze

    def counted(*args, **kwargs):
        calls.append(str(args[0]))
        return real(*args, **{**kwargs, "cache": False})

    monkeypatch.setattr("harness.diagnose.blockers.analyze", counted)
    monkeypatch.setattr("harness.diagnose.bisect.bisect", _no_bisect)
    [blocker] = diagnose.pipeline_blockers(failed, PortStage.TORCH_TO_LINALG, tmp_path, PortOptions())
    assert calls == [failed.input_path]
    assert blocker.failing_pass == "torch-finalizing-backend-type-conversion"


def test_an_analysis_without_the_pass_falls_back_to_bisect(failed, tmp_path, monkeypatch):
    from types import SimpleNamespace

    empty = blockers.BlockerAnalysis(failed.input_path, LINALG, detail="no dump")
    monkeypatch.setattr("harness.diagnose.bisect.bisect",
                        lambda *a, **k: SimpleNamespace(failing_pass="from-bisect"))
    [blocker] = diagnose.pipeline_blockers(failed, PortStage.TORCH_TO_LINALG, tmp_path, PortOptions(),
                                           empty)
    assert (str(blocker.failing_pass), blocker.failing_pass_from) == ("from-bisect", PassSource.BISECT)


def test_the_port_says_where_the_failing_pass_came_from(failed, tmp_path):
    from harness.port.render import _blocker_lines

    analysis = blockers.analyze(failed.input_path, LINALG, replay_conversions=False, cache=False)
    [blocker] = diagnose.pipeline_blockers(failed, PortStage.TORCH_TO_LINALG, tmp_path, PortOptions(),
                                           analysis)
    assert ("    failing pass (MLIR's after-failure dump): torch-finalizing-backend-type-conversion"
            in _blocker_lines(blocker, 1))
    assert Path(blocker.reproducer).is_file()


def test_where_the_pass_was_read_is_a_closed_set_in_records():
    """A record keeps the source's value; one written before the field (none) or by this stop's
    first version (the sentence the port prints) reads back as the same member; a value
    outside the set is refused."""
    from harness.errors import UsageError
    from harness.port.record import Blocker

    def read(value):
        return Blocker(rank=1, stage="torch-to-linalg", signature="s", failing_pass_from=value)

    assert read("after-failure-dump").failing_pass_from is PassSource.AFTER_FAILURE_DUMP
    assert read("MLIR's after-failure dump").failing_pass_from is PassSource.AFTER_FAILURE_DUMP
    assert read("").failing_pass_from is None and read(None).failing_pass_from is None
    with pytest.raises(UsageError, match="unknown pass source 'somewhere'"):
        read("somewhere")


def test_an_op_of_a_lower_dialect_is_named_by_the_torch_op_that_made_it(tmp_path):
    """Issue 45 items 2 and 4 (DPT's ``posemb.size(0) ** 0.5`` through TorchScript): the verifier
    names ``arith.fptosi`` at ``torch/_tensor.py:39``. The blocker is the torch op at that same
    Python stack in the stage's input (``aten.pow.Tensor_Scalar`` of an si64 tensor), and the
    model's line that reached the library line is given as "called from"."""
    import torch

    tensor_py = Path(torch.__file__).parent / "_tensor.py"
    model_py = tmp_path / "modeling_toy.py"
    ir = f"""\
func.func @forward() -> !torch.vtensor<[],f32> {{
  %0 = torch.vtensor.literal(dense<576> : tensor<si64>) : !torch.vtensor<[],si64> loc(#at)
  %half = torch.constant.float 5.000000e-01 loc(#at)
  %1 = torch.aten.pow.Tensor_Scalar %0, %half : !torch.vtensor<[],si64>, !torch.float -> !torch.vtensor<[],f32> loc(#pow_at)
  %2 = torch.aten.neg %1 : !torch.vtensor<[],f32> -> !torch.vtensor<[],f32> loc(#other)
  return %2 : !torch.vtensor<[],f32>
}}
#lib = loc("{tensor_py}":39:0)
#model = loc("{model_py}":7:0)
#at = loc(callsite(#lib at #model))
#pow = loc("aten::pow"(#lib))
#pow_at = loc(callsite(#pow at #model))
#model9 = loc("{model_py}":9:0)
#other = loc(callsite(#lib at #model9))
"""  # noqa: E501
    path = tmp_path / "in.mlir"
    path.write_text(ir)
    record = run_pipeline(path, LINALG)
    assert record.outcome is Outcome.VERIFIER_ERROR, record.stderr[-800:]
    (found,) = diagnose.pipeline_blockers(record, PortStage.TORCH_TO_LINALG, tmp_path,
                                          PortOptions(diagnose=False))
    assert (found.op, found.reported_op) == ("torch.aten.pow.Tensor_Scalar", "arith.fptosi")
    assert found.location == f"{tensor_py}:39" and found.called_from == f"{model_py}:7"
    assert "the error names arith.fptosi, which the lowering of torch.aten.pow.Tensor_Scalar made" in (
        found.explanation)
    assert "aten.neg" not in found.explanation  # the same library line, another model line


GENERIC_OPS = """\
func.func @forward(%v: !torch.vtensor<[8,8],f32>, %g: !torch.vtensor<[8,1],f32>) -> !torch.vtensor<[8,8],f32> {
  %int0 = torch.constant.int 0
  %0 = torch.operator "aten._weight_norm"(%v, %g, %int0) : (!torch.vtensor<[8,8],f32>, !torch.vtensor<[8,1],f32>, !torch.int) -> !torch.vtensor<[8,8],f32>
  %1 = torch.operator "aten.lstm_cell_like"(%0) : (!torch.vtensor<[8,8],f32>) -> !torch.vtensor<[8,8],f32>
  %2 = torch.operator "aten._weight_norm"(%1, %g, %int0) : (!torch.vtensor<[8,8],f32>, !torch.vtensor<[8,1],f32>, !torch.int) -> !torch.vtensor<[8,8],f32>
  return %2 : !torch.vtensor<[8,8],f32>
}
"""  # noqa: E501


def test_every_generic_op_behind_the_first_is_named_with_its_count(tmp_path):
    """Issue 45 item 3: a stage that stops on the first generic ``torch.operator`` (an op the
    importer could not map) named only it, with count 0; an audio codec had 36
    ``aten._weight_norm`` and 2 ``aten.lstm.input`` waiting. Each distinct one is a blocker
    with its count, most frequent first."""
    path = tmp_path / "in.mlir"
    path.write_text(GENERIC_OPS)
    record = run_pipeline(path, "builtin.module(torch-function-to-torch-backend-pipeline)")
    assert record.outcome is Outcome.LEGALIZATION_FAILURE, record.stderr[-800:]
    found = diagnose.pipeline_blockers(record, PortStage.TORCHSCRIPT_TO_TORCH, tmp_path,
                                       PortOptions(diagnose=False))
    assert [(b.rank, b.op, b.count) for b in found] == [
        (1, 'torch.operator "aten._weight_norm"', 2), (2, 'torch.operator "aten.lstm_cell_like"', 1)]
    assert "behind the first" in found[1].message
    assert found[1].signature == ("legalization-failure: failed to legalize operation "
                                  "'torch.operator \"aten.lstm_cell_like\"'")
