"""The fix loop starts from the caller's own run of the first stage: a port's failing stage is not
run a second time (a runaway pass cost minutes each time), and a passing one's output is where
the loop's next stage reads it."""

from __future__ import annotations

from pathlib import Path

from harness.compiler.stages import run_stages
from harness.fixes.loop import FixOptions, PriorRun, fix_stages

# __and__ on integers: torch-to-linalg has no lowering for it (the loop's own test case).
AND_INT = """func.func @f(%arg0: !torch.vtensor<[4],si64>, %arg1: !torch.vtensor<[4],si64>) -> !torch.vtensor<[4],si64> {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[4],si64>, !torch.vtensor<[4],si64> -> !torch.vtensor<[4],si64>
  return %0 : !torch.vtensor<[4],si64>
}
"""  # noqa: E501
ADD = """func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %arg0, %arg0, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
"""  # noqa: E501
NO_FIXES = FixOptions(verify=False, catalog=())


def test_a_failed_stage_is_not_run_again(tmp_path: Path):
    src = tmp_path / "and.mlir"
    src.write_text(AND_INT)
    first = run_stages(src, ["torch-to-linalg"], tmp_path, stem="and")[0]
    assert not first.ok
    run = fix_stages(src, ["torch-to-linalg"], tmp_path, stem="and.fix", options=NO_FIXES,
                     prior=PriorRun(first.record))
    assert run.records == [first.record] and run.records[0] is first.record
    assert not list(tmp_path.glob("and.fix.*"))  # no second torch-mlir-opt run wrote anything
    assert run.remaining and run.remaining[0].op == "torch.aten.__and__.Tensor"


def test_without_a_prior_run_the_loop_runs_the_stage_itself(tmp_path: Path):
    src = tmp_path / "and.mlir"
    src.write_text(AND_INT)
    first = run_stages(src, ["torch-to-linalg"], tmp_path, stem="and")[0]
    run = fix_stages(src, ["torch-to-linalg"], tmp_path, stem="and.fix", options=NO_FIXES)
    assert run.records[0] is not first.record and not run.records[0].ok


def test_a_passing_prior_run_feeds_the_next_stage(tmp_path: Path):
    src = tmp_path / "add.mlir"
    src.write_text(ADD)
    first = run_stages(src, ["torch-to-linalg"], tmp_path, stem="add")[0]
    assert first.ok
    run = fix_stages(src, ["torch-to-linalg", "linalg-to-llvm"], tmp_path, stem="add.fix",
                     options=NO_FIXES, prior=PriorRun(first.record))
    assert run.ok, [str(r.signature) for r in run.records]
    assert run.records[0] is first.record
    linked = tmp_path / "add.fix.1.torch-to-linalg.mlir"
    assert linked.read_text() == Path(first.output_path).read_text()
    assert "llvm.func" in Path(run.records[1].output_path).read_text()
