"""One reduced case per distinct failure: three missing shape functions in one
module give three files, each with its own op, in the order the pipeline meets them."""

from __future__ import annotations


import pytest

from harness.errors import NothingToReduceError, OutputError
from harness.diagnose.reduce import ReduceOptions
from harness.diagnose.reduce.split import reduce_each

from support import harness

CONTRACT = "builtin.module(torch-function-to-torch-backend-pipeline)"

# torch-mlir 20261001 has no shape function for any of the three: each stops the backend
# contract with "unsupported by backend contract: tensor with unknown rank", the first one met
# hiding the others; @fine lowers.
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
THREE_GAPS = """
func.func @xlogy(%arg0: !torch.vtensor<[?,?],f32>, %arg1: !torch.vtensor<[?,?],f32>) -> !torch.vtensor {
  %0 = torch.aten.xlogy.Tensor %arg0, %arg1 : !torch.vtensor<[?,?],f32>, !torch.vtensor<[?,?],f32> -> !torch.vtensor
  return %0 : !torch.vtensor
}
func.func @fine(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
func.func @rshift_scalar(%arg0: !torch.vtensor<[?,?],si8>) -> !torch.vtensor {
  %int1 = torch.constant.int 1
  %0 = torch.aten.__rshift__.Scalar %arg0, %int1 : !torch.vtensor<[?,?],si8>, !torch.int -> !torch.vtensor
  return %0 : !torch.vtensor
}
func.func @complex(%arg0: !torch.vtensor<[?],f32>, %arg1: !torch.vtensor<[?],f32>) -> !torch.vtensor {
  %0 = torch.aten.complex %arg0, %arg1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32> -> !torch.vtensor
  return %0 : !torch.vtensor
}
"""  # noqa: E501
OPS = ["torch.aten.xlogy.Tensor", "torch.aten.__rshift__.Scalar", "torch.aten.complex"]


def test_each_gap_is_its_own_case(tmp_path):
    src = tmp_path / "gaps.mlir"
    src.write_text(THREE_GAPS)
    results = reduce_each(src, CONTRACT, tmp_path / "cases", options=ReduceOptions(budget_s=30))
    assert [r.subject for r in results] == [(op,) for op in OPS]
    for n, (result, op) in enumerate(zip(results, OPS, strict=False), 1):
        assert result.output_path == str(tmp_path / "cases" / f"reduced-{n}.mlir")
        assert result.signature == ("pass-failure: unsupported by backend contract: "
                                    f"tensor with unknown rank: '{op}'")
        text = (tmp_path / "cases" / f"reduced-{n}.mlir").read_text()
        assert op in text and not any(o in text for o in OPS if o != op)
        assert "torch.aten.relu" not in text


def test_a_passing_input_has_no_case(tmp_path):
    src = tmp_path / "fine.mlir"
    src.write_text("func.func @fine" + THREE_GAPS.split("func.func @fine")[1].split("func.func @rshift")[0])
    with pytest.raises(NothingToReduceError):
        reduce_each(src, CONTRACT, tmp_path / "cases")


def test_cli_each_prints_one_case_per_failure(tmp_path):
    src = tmp_path / "gaps.mlir"
    src.write_text(THREE_GAPS)
    proc = harness("reduce", str(src), "--pipeline", CONTRACT, "--each", "-o", str(tmp_path / "cases"),
                   "--budget-s", "20")
    assert proc.returncode == 1, proc.stderr
    keeps = [line for line in proc.stdout.splitlines() if line.startswith("  keeps: ")]
    assert [k.rsplit("(subject: ", 1)[1].rstrip(")") for k in keeps] == OPS
    assert sorted(p.name for p in (tmp_path / "cases").iterdir()) == [f"reduced-{n}.mlir" for n in (1, 2, 3)]


def test_a_file_where_the_folder_goes_is_an_output_error(tmp_path):
    src = tmp_path / "gaps.mlir"
    src.write_text(THREE_GAPS)
    (tmp_path / "cases").write_text("")
    with pytest.raises(OutputError):
        reduce_each(src, CONTRACT, tmp_path / "cases")
