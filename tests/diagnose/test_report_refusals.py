"""What harness report refuses, and how it names what it accepts: a file
torch-mlir-opt rejects before any pass runs is no compiler bug (exit 2, the location, no
bundle); a valid file with a huge name gets a title, signature and folder name of bounded
length."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.errors import ReportError
from harness.diagnose.report import Refusal, ReportOptions, make_report

from support import harness

RANDOM = bytes(random.Random(15).getrandbits(8) for _ in range(4096))
UNDECLARED = """\
func.func @f(%a: !torch.int) -> !torch.int {
  return %b : !torch.int
}
"""
UNVERIFIED = """\
func.func @f(%a: !torch.int) -> !torch.int {
  return
}
"""


@pytest.mark.parametrize("name,content,where", [
    ("random.mlir", RANDOM, ":1:"),
    ("undeclared.mlir", UNDECLARED.encode(), ":2:10: use of undeclared SSA value"),
    ("unverified.mlir", UNVERIFIED.encode(), ":2:3: 'func.return' op has 0 operands"),
])
def test_a_file_that_is_not_valid_ir_is_refused_with_its_location(tmp_path, name, content, where):
    src = tmp_path / name
    src.write_bytes(content)
    out = tmp_path / "out"
    with pytest.raises(ReportError) as info:
        make_report(src, "torch-to-linalg", options=ReportOptions(out_dir=out))
    message = str(info.value)
    assert info.value.reason is Refusal.INVALID_INPUT and info.value.input_path == str(src)
    assert f"{src}{where}" in message and "This is not a torch-mlir bug" in message, message
    assert not out.exists()
    proc = harness("report", str(src), "--pipeline", "torch-to-linalg", "--out", str(out), timeout=120)
    assert proc.returncode == 2 and "harness: error: cannot report" in proc.stderr, proc.stderr
    assert not out.exists()


def test_a_huge_op_name_gives_bounded_title_signature_and_folder(tmp_path):
    name = "aten." + "x" * 4096
    src = tmp_path / "long.mlir"
    src.write_text(
        "func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {\n"
        f'  %0 = torch.operator "{name}"(%arg0) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>\n'
        "  return %0 : !torch.vtensor<[4],f32>\n}\n")
    result = make_report(src, "torch-to-linalg", options=ReportOptions(out_dir=tmp_path / "out",
                                                                        reduce=False))
    assert result.title.startswith("[torch-mlir] failed to legalize operation 'torch.operator \"aten.xxx")
    assert len(result.title) <= 160 and result.title.endswith("…")
    assert len(result.signature) <= 400
    assert len(Path(result.folder).name) <= 100 and len(Path(result.archive).name) <= 110
    heading = (Path(result.folder) / "issue.md").read_text().splitlines()[0]
    assert heading.startswith("# [torch-mlir] ") and len(heading) <= 200
