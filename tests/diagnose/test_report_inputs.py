"""input.mlir of a bug-report bundle leaves out the input's comment-only lines when the failure
stays the same without them (200 MB of comments once became a 209 MB input.mlir)."""

from __future__ import annotations

from pathlib import Path

from harness.compiler.runner import run_pipeline
from harness.diagnose.report import ReportOptions, make_report
from harness.diagnose.report.inputs import write_input
from harness.diagnose.report.redact import Redactor

from support import CRASHERS
from support.wrapped_builds import make_build

CRASHER = CRASHERS / "A_remainder_int_by_zero.mlir"
OK_IR = ("func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
         "  return %arg0 : !torch.vtensor<[2],f32>\n}\n")


def test_a_bundle_leaves_out_megabytes_of_comment_lines(tmp_path):
    src = tmp_path / "commented.mlir"
    comment = "// " + "c" * 76 + "\n"
    with open(src, "w") as f:
        f.write(comment * 60_000)  # 4.8 MB
        f.write(CRASHER.read_text())
        f.write("  // a comment after code\n" * 10)
    result = make_report(src, "-canonicalize", options=ReportOptions(out_dir=tmp_path / "out",
                                                                       reduce=False, budget_s=5))
    written = Path(result.folder) / "input.mlir"
    text = written.read_text()
    assert written.stat().st_size < 2_000 and "//" not in text
    assert "torch.aten.remainder.int" in text
    assert result.self_check.signature_reproduced
    assert any("leaves out the 60,010 comment-only lines" in note for note in result.notes)


def test_comment_lines_stay_when_the_failure_needs_them(tmp_path):
    # A build that crashes only on a file holding the comment: without it the input passes.
    opt = str(make_build(tmp_path, "picky", crash_on_op="// MAGIC"))
    src = tmp_path / "picky.mlir"
    src.write_text("// MAGIC\n// -----\n" + OK_IR)
    original = run_pipeline(src, "-canonicalize", opt=opt)
    assert original.outcome.is_crash
    dest = tmp_path / "bundle" / "input.mlir"
    dest.parent.mkdir()
    written = write_input(src, dest, "-canonicalize", original, opt=opt, timeout_s=60,
                          keep_weights=False, redactor=Redactor.for_machine([dest.parent], enabled=False))
    assert dest.read_text() == src.read_text() and written.record.signature == original.signature
    assert not any("comment-only" in note for note in written.notes)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["input.mlir"]


def test_the_split_marker_is_not_a_comment(tmp_path):
    src = tmp_path / "split.mlir"
    src.write_text(CRASHER.read_text() + "// a comment\n// -----\n" + OK_IR)
    original = run_pipeline(src, "-canonicalize")
    dest = tmp_path / "input.mlir"
    written = write_input(src, dest, "-canonicalize", original, opt=original.binary, timeout_s=60,
                          keep_weights=False, redactor=Redactor.for_machine([tmp_path], enabled=False))
    assert dest.read_text() == CRASHER.read_text() + "// -----\n" + OK_IR
    assert written.record.signature == original.signature
