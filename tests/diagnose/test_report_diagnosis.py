"""harness report on stock OPT's failure pattern: the bundle is titled and summarised from the
blocker (aten.__and__.Tensor), not from the literal the error names; its reduced.mlir is the
blocker alone; it says what was expected and which upstream reports may already cover it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.compiler.records import RunRecord
from harness.diagnose.report import ReportOptions, make_report

from support import CRASHERS

# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
AND_MASK = """\
func.func @forward(%arg0: !torch.vtensor<[1,7],si64>, %arg1: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[1,7],i1>, !torch.vtensor<[4],f32>) {
  %int0 = torch.constant.int 0
  %true = torch.vtensor.literal(dense<true> : tensor<i1>) : !torch.vtensor<[],i1> loc("/x/site-packages/transformers/masking_utils.py":52:0)
  %mask = torch.aten.gt.Scalar %arg0, %int0 : !torch.vtensor<[1,7],si64>, !torch.int -> !torch.vtensor<[1,7],i1> loc("/x/site-packages/transformers/masking_utils.py":53:0)
  %and = torch.aten.__and__.Tensor %true, %mask : !torch.vtensor<[],i1>, !torch.vtensor<[1,7],i1> -> !torch.vtensor<[1,7],i1> loc("/x/site-packages/transformers/masking_utils.py":54:0)
  %t = torch.aten.tanh %arg1 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %and, %t : !torch.vtensor<[1,7],i1>, !torch.vtensor<[4],f32>
}
"""  # noqa: E501


@pytest.fixture(scope="module")
def and_mask(tmp_path_factory):
    work = tmp_path_factory.mktemp("and")
    src = work / "mask.mlir"
    src.write_text(AND_MASK)
    return make_report(src, "torch-to-linalg", options=ReportOptions(out_dir=work / "out", budget_s=5))


def test_title_and_signature_name_the_blocker(and_mask):
    assert and_mask.title == ("[torch-mlir] [known #4749] convert-torch-to-linalg does not lower "
                              "'torch.aten.__and__.Tensor' (it lowers 'torch.aten.bitwise_and.Tensor')")
    assert and_mask.signature == ("legalization-failure: "
                                  "failed to legalize operation 'torch.aten.__and__.Tensor'")
    assert and_mask.blocker == "torch.aten.__and__.Tensor"
    assert and_mask.reported_op == "torch.vtensor.literal"
    assert (and_mask.responsible_pass, and_mask.fix) == ("convert-torch-to-linalg", "bitwise-and-or")
    lines = and_mask.render()
    assert "should be lowered by: convert-torch-to-linalg" in lines
    assert "fix (harness): bitwise-and-or" in lines
    assert Path(and_mask.folder).name.startswith("report-failed-to-legalize-operation-torch-aten-and-tensor-")
    assert and_mask.reproduced


def test_reduced_ir_is_the_blocker_alone_and_reproduces(and_mask):
    folder = Path(and_mask.folder)
    reduced = (folder / "reduced.mlir").read_text()
    assert reduced.count("= torch.") == 1 and "torch.aten.__and__.Tensor %arg0, %arg1" in reduced
    assert "tanh" not in reduced and "torch.vtensor.literal" not in reduced
    assert 'loc("<path>/masking_utils.py":54:0)' in reduced  # the op's location, redacted
    assert and_mask.reduced and and_mask.ops_after == 3  # module body: the function, the op, return
    assert "no reduction run" in and_mask.reduce_summary
    script = (folder / "repro.sh").read_text()
    assert "failed to legalize operation '\"'\"'torch.aten.__and__.Tensor" in script


def test_issue_summary_expected_behaviour_and_upstream(and_mask):
    issue = (Path(and_mask.folder) / "issue.md").read_text()
    assert issue.startswith("# [torch-mlir] [known #4749] convert-torch-to-linalg does not lower")
    assert ("No conversion pass of the pipeline lowers `torch.aten.__and__.Tensor` (1 in the input, "
            "from masking_utils.py:54)") in issue
    assert ("The error names `torch.vtensor.literal`, an operand left only because its user "
            "`torch.aten.__and__.Tensor` was not converted "
            "(alone, `convert-torch-to-arith` lowers it).") in issue
    assert "`convert-torch-to-linalg` lowers the equivalent `torch.aten.bitwise_and.Tensor`" in issue
    # issue 44: said without our tool's fix names (a maintainer reads it without the tool)
    assert "rewriting it to `torch.aten.bitwise_and.Tensor` in the torch IR works around it" in issue
    assert "harness fix" not in issue
    expected = issue[issue.index("## Expected behaviour"):issue.index("## Failing pass")]
    assert ("`convert-torch-to-linalg` lowers `torch.aten.__and__.Tensor` as it lowers "
            "`torch.aten.bitwise_and.Tensor`") in expected
    assert "with `torch.aten.bitwise_and.Tensor` in its place passes this pipeline" in expected
    assert "Possibly known upstream:" in issue
    assert "- llvm/torch-mlir#4749 (pull request" in issue
    assert "https://github.com/llvm/torch-mlir/pull/4749" in issue
    assert "`reduced.mlir`: `torch.aten.__and__.Tensor` alone in a function" in issue
    assert "bool-literal" not in issue


def test_record_json_keeps_the_analysis(and_mask):
    data = json.loads((Path(and_mask.folder) / "record.json").read_text())
    assert data["blockers"]["blockers"] == ["torch.aten.__and__.Tensor"]
    record = RunRecord.from_json(data["record"])
    assert record.blockers == ["torch.aten.__and__.Tensor"]
    assert record.signature.op == "torch.aten.__and__.Tensor"
    assert record.signature.reported == "torch.vtensor.literal"
    assert data["report"]["signature"] == and_mask.signature


def test_a_crash_expects_no_crash(tmp_path):
    crashers = CRASHERS
    result = make_report(crashers / "A_remainder_int_by_zero.mlir", "-canonicalize",
                         options=ReportOptions(out_dir=tmp_path, reduce=False))
    issue = (Path(result.folder) / "issue.md").read_text()
    assert ("## Expected behaviour\n\n`torch-mlir-opt` does not crash: it lowers the input, or "
            "reports an error naming the op it cannot handle.") in issue
    assert result.blocker == ""
