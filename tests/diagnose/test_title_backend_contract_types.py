"""Issue 28 item 6: a backend-contract failure's title names the op, for a tensor of unknown rank
or dtype too (a missing shape or dtype function), not only for an illegal op. The contract's
message names no op ("unsupported by backend contract: tensor with unknown rank"); MLIR's
"see current operation" note does. Run through the real torch-mlir-opt."""

from __future__ import annotations

from harness.compiler.outcomes import Outcome
from harness.compiler.records import RunRecord, parse_diagnostics
from harness.compiler.runner import run_pipeline
from harness.diagnose.report.issue import issue_title

PIPELINE = "builtin.module(torch-function-to-torch-backend-pipeline)"

# aten.xlogy.Tensor has no shape function in the pinned wheel (lit_tests/pass/
# missing-shape-dtype-functions-error.mlir): its result stays !torch.vtensor.
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
UNKNOWN_RANK = """\
func.func @xlogy(%arg0: !torch.vtensor<[?,?],f32>, %arg1: !torch.vtensor<[?,?],f32>) -> !torch.vtensor {
  %0 = torch.aten.xlogy.Tensor %arg0, %arg1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32> -> !torch.vtensor
  return %0 : !torch.vtensor
}
"""  # noqa: E501
# aten.reflection_pad3d has a shape function but no dtype function: [1,20,40,40,40],unk.
UNKNOWN_DTYPE = """\
func.func @pad(%arg0: !torch.vtensor<[1,20,20,20,20],f32>) -> !torch.vtensor {
  %int10 = torch.constant.int 10
  %0 = torch.prim.ListConstruct %int10, %int10, %int10, %int10, %int10, %int10 : (!torch.int, !torch.int, !torch.int, !torch.int, !torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.reflection_pad3d %arg0, %0 : !torch.vtensor<[1,20,20,20,20],f32>, !torch.list<int> -> !torch.vtensor
  return %1 : !torch.vtensor
}
"""  # noqa: E501


def _run(tmp_path, text: str):
    path = tmp_path / "in.mlir"
    path.write_text(text)
    return run_pipeline(path, PIPELINE)


def test_unknown_rank_title_names_the_op(tmp_path):
    record = _run(tmp_path, UNKNOWN_RANK)
    assert record.outcome is Outcome.PASS_FAILURE
    sig = record.signature
    assert sig.message == "unsupported by backend contract: tensor with unknown rank"
    assert sig.op == "torch.aten.xlogy.Tensor"
    title = issue_title(record, None, PIPELINE)
    assert "'torch.aten.xlogy.Tensor'" in title and "unknown rank" in title, title
    assert "xlogy" in sig.slug(100)


def test_unknown_dtype_title_names_the_op(tmp_path):
    record = _run(tmp_path, UNKNOWN_DTYPE)
    sig = record.signature
    assert sig.message == "unsupported by backend contract: tensor with unknown dtype", record.stderr
    assert sig.op == "torch.aten.reflection_pad3d"
    assert "'torch.aten.reflection_pad3d'" in issue_title(record, None, PIPELINE)


def test_two_ops_without_shape_functions_are_two_bugs(tmp_path):
    a = _run(tmp_path, UNKNOWN_RANK).signature
    rank_one = UNKNOWN_RANK.replace("[?,?],f32", "[?],f32").replace("xlogy.Tensor", "complex")
    b = _run(tmp_path, rank_one).signature
    assert a.message == b.message and a != b


def test_an_unimplemented_operator_keeps_its_own_message():
    """The contract names a ``torch.operator`` in its message itself (LowerToBackendContract.cpp:
    "Unimplemented operator 'NAME'"): nothing is appended. (The function pipeline stops such an
    op earlier, as a legalization failure, so this stderr is the pass's text, not a run.)"""
    stderr = ("m.mlir:2:8: error: unsupported by backend contract: Unimplemented operator "
              "'aten.fft_fftn'\n")
    record = RunRecord(outcome=Outcome.PASS_FAILURE, command=[], pipeline=PIPELINE,
                       input_path="m.mlir", binary="torch-mlir-opt", returncode=1, elapsed_s=0.1,
                       stderr=stderr, diagnostics=parse_diagnostics(stderr))
    assert record.signature.op == ""
    assert str(record.signature) == ("pass-failure: unsupported by backend contract: "
                                     "Unimplemented operator 'aten.fft_fftn'")
