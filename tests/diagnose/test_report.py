"""harness report on real failures of the pinned binary: a crash (F_view_zero_numel through the
linalg pipeline, A_remainder_int_by_zero through -canonicalize), a legalization failure
(torch.aten.nonzero) with Python locations and a weight blob, a passing input and an
unwritable --out. Every repro.sh is run for real, against the real binary, the wheel's wrapper
script and a binary that parses the file without running passes."""

from __future__ import annotations

import getpass
import importlib.metadata
import json
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

from harness.compiler import builds as builds_module
from harness.compiler.crash_text import TOP_MARK, render_frame
from harness.compiler.outcomes import Outcome
from harness.compiler.records import RunRecord
from harness.errors import InputFileError, ReportError
from harness.diagnose.report.redact import names_someone
from harness.diagnose.report import (
    BUNDLE_FILES,
    CANNOT_RUN_STATUS,
    Refusal,
    ReportOptions,
    ReportResult,
    SelfCheck,
    Weights,
    issue_title,
    make_report,
)

from support import CRASHERS, ROOT, harness

VENV = Path(sys.prefix)
SITE = Path(sysconfig.get_paths()["purelib"])
HOME = Path.home()
USER = getpass.getuser()
REAL = builds_module.resolve().path
WRAPPER = Path(sys.executable).with_name("torch-mlir-opt")  # the wheel's Python wrapper: 256-N
BLOB = "0x04000000" + "0000803F" * 16  # 16 x 1.0f: longer than the elision limit

# torch.aten.nonzero has no linalg lowering; locations name a file in site-packages (as
# traced HF code does), one in the home folder, one in the repo and one elsewhere.
NONZERO = f"""\
#loc1 = loc("{SITE}/transformers/masking_utils.py":52:0)
#loc2 = loc("{HOME}/models/opt.py":10:4)
#loc3 = loc("{ROOT}/tests/model.py":3:0)
#loc4 = loc("/srv/{USER}/data/thing.py":7:1)
#loc5 = loc("{USER}-notes.py":1:0)
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[?,1],si64> {{
  %w = torch.vtensor.literal(dense_resource<w> : tensor<16xf32>) : !torch.vtensor<[16],f32> loc(#loc2)
  %0 = torch.aten.nonzero %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[?,1],si64> loc(#loc1)
  %1 = torch.aten.tanh %w : !torch.vtensor<[16],f32> -> !torch.vtensor<[16],f32> loc(#loc3)
  return %0 : !torch.vtensor<[?,1],si64> loc(#loc4)
}} loc(#loc5)
{{-#
  dialect_resources: {{
    builtin: {{
      w: "{BLOB}"
    }}
  }}
#-}}
"""
PASSING = """\
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
"""


def _repro(folder: str | Path, opt: str | Path | None,
           path: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TORCH_MLIR_OPT"}
    if opt is not None:
        env["TORCH_MLIR_OPT"] = str(opt)
    if path is not None:
        env["PATH"] = path
    # Run from elsewhere: the script must find its files relative to itself.
    return subprocess.run(["bash", str(Path(folder) / "repro.sh")], env=env, cwd="/",
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def no_passes(tmp_path_factory) -> Path:
    """A torch-mlir-opt that parses and prints its input but runs no pass: the bug is gone."""
    script = tmp_path_factory.mktemp("bin") / "torch-mlir-opt"
    script.write_text(f'#!/bin/sh\nfor a in "$@"; do case "$a" in *.mlir) f="$a";; esac; done\n'
                      f'exec {shlex.quote(REAL)} "$f" -o /dev/null\n')
    script.chmod(0o755)
    return script


@pytest.fixture(scope="module")
def crash(tmp_path_factory) -> ReportResult:
    out = tmp_path_factory.mktemp("out")
    return make_report(CRASHERS / "F_view_zero_numel.mlir", "torch-to-linalg",
                       options=ReportOptions(out_dir=out, budget_s=5))


@pytest.fixture(scope="module")
def legalization(tmp_path_factory) -> ReportResult:
    work = tmp_path_factory.mktemp("legal")
    src = work / "nonzero.mlir"
    src.write_text(NONZERO)
    return make_report(src, "torch-to-linalg", options=ReportOptions(out_dir=work / "out", budget_s=5))


def _texts(result: ReportResult) -> dict[str, str]:
    """Every file of the folder and of the archive, as text."""
    out = {name: (Path(result.folder) / name).read_text() for name in result.files}
    with tarfile.open(result.archive) as tar:
        for m in tar.getmembers():
            if m.isfile():
                out[f"tar:{m.name}"] = tar.extractfile(m).read().decode()
    return out


# --- a crash -------------------------------------------------------------------------------

def test_crash_bundle_is_complete_and_archived(crash):
    folder = Path(crash.folder)
    assert sorted(crash.files) == sorted(BUNDLE_FILES)
    assert folder.name.startswith("report-sigfpe-in-converttorchtolinalg-at-convertatenview")
    assert Path(crash.archive) == folder.with_name(folder.name + ".tar.gz")
    # Nothing else under --out: no staging folder, no temp archive.
    assert sorted(p.name for p in folder.parent.iterdir()) == sorted([folder.name, folder.name + ".tar.gz"])
    with tarfile.open(crash.archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert sorted(members) == sorted([folder.name] + [f"{folder.name}/{n}" for n in BUNDLE_FILES])
        for name in BUNDLE_FILES:
            assert tar.extractfile(members[f"{folder.name}/{name}"]).read() == (folder / name).read_bytes()
        assert members[f"{folder.name}/repro.sh"].mode & 0o111
        assert all(m.uname == "" and m.uid == 0 for m in members.values())  # the owner is redacted too


def test_crash_issue_names_signal_pass_versions_and_inlines_the_reduced_ir(crash):
    assert crash.title == "[torch-mlir] SIGFPE in ConvertTorchToLinalg at ConvertAtenViewOp::matchAndRewrite"
    assert str(crash.signature) == ("crash: SIGFPE in ConvertTorchToLinalg at "
                               "(anonymous namespace)::ConvertAtenViewOp::matchAndRewrite")
    assert crash.failing_pass == "convert-torch-to-linalg"
    assert crash.reduced and crash.ops_after <= crash.ops_before == 6
    issue = (Path(crash.folder) / "issue.md").read_text()
    assert issue.startswith(f"# {crash.title}\n")
    exe = builds_module.resolve()
    assert f"torch-mlir {importlib.metadata.version('torch-mlir')}" in issue
    assert f"torch {importlib.metadata.version('torch')}" in issue
    assert f"LLVM {exe.llvm_version}, release build" in issue
    assert "signal:    SIGFPE" in issue and "ConvertAtenViewOp::matchAndRewrite" in issue
    assert "`convert-torch-to-linalg` (ConvertTorchToLinalg on 'func.func' operation: @f)" in issue
    reduced = (Path(crash.folder) / "reduced.mlir").read_text()
    assert "torch.aten.view" in reduced
    assert f"```mlir\n{reduced.rstrip()}\n```" in issue
    assert ("torch-mlir-opt '-pass-pipeline=builtin.module(torch-backend-to-linalg-on-tensors-backend-"
            "pipeline)' reduced.mlir -o /dev/null -mlir-disable-threading") in issue
    assert "bash repro.sh\nTORCH_MLIR_OPT=/path/to/your/torch-mlir-opt bash repro.sh" in issue
    assert "## Self-check\n\nreproduced: reduced.mlir fails with the same signature" in issue
    backtrace = (Path(crash.folder) / "backtrace.txt").read_text()
    assert re.search(r"^> #3 +0x[0-9a-f]+ \(anonymous namespace\)::ConvertAtenViewOp::matchAndRewrite",
                     backtrace, re.MULTILINE)


def test_crash_record_json_holds_the_original_run_bisect_reduce_and_self_check(crash):
    data = json.loads((Path(crash.folder) / "record.json").read_text())
    original = RunRecord.from_json(data["record"])
    assert str(original.signature) == str(crash.signature) and original.signal == "SIGFPE"
    assert data["bisect"]["failing_pass"] == "convert-torch-to-linalg" and data["bisect"]["reproduced"]
    assert data["reduce"]["signature"] == str(crash.signature)
    assert data["reduce"]["ops_after"] == crash.ops_after
    check = data["report"]["self_check"]
    assert check["reproduced"] and check["signature_reproduced"] and check["repro_exit_status"] == 1
    assert str(RunRecord.from_json(data["replay_record"]).signature) == crash.signature
    assert crash.reproduced and crash.self_check.repro_exit_status == 1


def test_issue_and_backtrace_render_the_crash_with_one_renderer(crash):
    """issue.md's summary and backtrace.txt's full stack differ only in the renderer's options:
    the same frame lines, marks and header words, from the record's frames."""
    folder = Path(crash.folder)
    record = RunRecord.from_json(json.loads((folder / "record.json").read_text())["record"])
    top = record.crash.top_frame()
    issue = (folder / "issue.md").read_text()
    backtrace = (folder / "backtrace.txt").read_text()
    assert f"\n{TOP_MARK} {render_frame(top)}\n" in issue
    assert f"\n{TOP_MARK} {render_frame(top, address=True, full=True)}\n" in backtrace
    for text in (issue, backtrace):  # one header for the signal and the pass
        assert "\nsignal:    SIGFPE (exit status " in text
        assert "\npass:      ConvertTorchToLinalg (from its runOnOperation frame)\n" in text
    shown = [line for line in issue.splitlines() if line.startswith((f"{TOP_MARK} #", "  #"))]
    assert len(shown) == 12  # the summary's frame limit
    assert len([line for line in backtrace.splitlines() if re.match(r"^[ >+] #\d", line)]) == \
        len(record.crash.frames)  # every frame


def test_crash_repro_exits_nonzero_exactly_when_it_crashes(crash, no_passes):
    real = _repro(crash.folder, REAL)
    assert real.returncode == 1, real.stdout + real.stderr
    assert "repro.sh: REPRODUCED: SIGFPE (exit status 136)" in real.stdout
    assert "Stack dump:" in real.stderr  # the crash output is shown, not swallowed
    wrapped = _repro(crash.folder, WRAPPER)  # signal 8 as exit status 248
    assert wrapped.returncode == 1 and "SIGFPE (exit status 248)" in wrapped.stdout, wrapped.stdout
    fixed = _repro(crash.folder, no_passes)
    assert fixed.returncode == 0 and "repro.sh: NOT REPRODUCED: no SIGFPE (exit status 0)" in fixed.stdout


def test_redacted_repro_finds_the_binary_through_pythons_site_packages(crash):
    script = (Path(crash.folder) / "repro.sh").read_text()
    assert "RECORDED='<site-packages>/torch_mlir/_mlir_libs/torch-mlir-opt'" in script
    # No $TORCH_MLIR_OPT, no torch-mlir-opt on PATH, but this venv's python3 is.
    venv_python_only = f"{VENV / 'bin'}:/usr/bin:/bin"
    found = _repro(crash.folder, None, path=venv_python_only)
    # 136 = 128+SIGFPE: the real binary, found before the venv's wrapper (which gives 248).
    assert found.returncode == 1 and "SIGFPE (exit status 136)" in found.stdout, found.stdout + found.stderr
    # Nothing to run it with is neither verdict (exit 0 read as "fixed" before): its own status.
    nothing = _repro(crash.folder, None, path="/usr/bin:/bin")
    assert nothing.returncode == CANNOT_RUN_STATUS, nothing.stdout
    assert "repro.sh: CANNOT RUN: no torch-mlir-opt found; run: TORCH_MLIR_OPT=" in nothing.stdout


def test_crash_bundle_is_redacted(crash):
    _assert_redacted(crash)


# --- a legalization failure ----------------------------------------------------------------

def test_legalization_repro_greps_the_left_over_op(legalization, no_passes):
    assert str(legalization.signature) == ("legalization-failure: "
                                           "failed to legalize operation 'torch.aten.nonzero'")
    assert legalization.title == ("[torch-mlir] failed to legalize operation 'torch.aten.nonzero': no "
                                  "conversion in torch-backend-to-linalg-on-tensors-backend-pipeline "
                                  "lowers it")
    assert legalization.blocker == "torch.aten.nonzero" and legalization.reported_op == ""
    script = (Path(legalization.folder) / "repro.sh").read_text()
    assert ("grep -qF -- 'error: failed to legalize operation '\"'\"'torch.aten.nonzero'\"'\"'' "
            '"$ERR"') in script
    real = _repro(legalization.folder, REAL)
    assert real.returncode == 1, real.stdout + real.stderr
    assert "REPRODUCED: stderr has: error: failed to legalize operation 'torch.aten.nonzero'" in real.stdout
    fixed = _repro(legalization.folder, no_passes)
    assert fixed.returncode == 0 and "NOT REPRODUCED: stderr lacks" in fixed.stdout
    issue = (Path(legalization.folder) / "issue.md").read_text()
    assert "no conversion pass of this pipeline lowers `torch.aten.nonzero`" in issue
    assert "## Expected behaviour\n\nA conversion pass of the pipeline lowers `torch.aten.nonzero`" in issue
    assert "Possibly known upstream" not in issue  # no entry of the list matches nonzero


def test_legalization_weights_elided_and_locations_keep_file_and_line(legalization):
    assert legalization.weights is Weights.ELIDED and legalization.reproduced
    folder = Path(legalization.folder)
    text = (folder / "input.mlir").read_text()
    assert BLOB not in text and "dense_resource<w> : tensor<16xf32>" in text
    assert 'loc("<site-packages>/transformers/masking_utils.py":52:0)' in text
    assert 'loc("~/models/opt.py":10:4)' in text
    assert 'loc("<repo>/tests/model.py":3:0)' in text
    assert 'loc("<path>/thing.py":7:1)' in text
    if names_someone(USER):  # short and system account names are left alone (words, <root>)
        assert 'loc("<user>-notes.py":1:0)' in text  # the user name outside any path
    else:
        assert f'loc("{USER}-notes.py":1:0)' in text
    assert 'loc("nonzero.mlir":6:14)' in text  # ops without a location: the original file's line
    reduced = (folder / "reduced.mlir").read_text()
    assert "tanh" not in reduced and 'loc("<site-packages>/transformers/masking_utils.py":52:0)' in reduced
    issue = (folder / "issue.md").read_text()
    assert "<site-packages>/transformers/masking_utils.py:52:0: error: failed to legalize" in issue


def test_legalization_bundle_is_redacted(legalization):
    _assert_redacted(legalization)


def _assert_redacted(result: ReportResult) -> None:
    private = {str(HOME), str(ROOT), str(VENV), str(SITE), sys.base_prefix,
               str(Path(result.folder).parent), os.path.realpath(result.folder)}
    user_word = re.compile(rf"(?<![\w]){re.escape(USER)}(?![\w])")
    for name, text in _texts(result).items():
        for p in private:
            assert p not in text, f"{p} left in {name}"
        assert not names_someone(USER) or not user_word.search(text), f"user name {USER!r} left in {name}"
        assert not re.search(r'(?<![\w.~:/<>-])/(?:tmp|work|root|home|srv)/', text), name


# --- options, the CLI, errors --------------------------------------------------------------

def _cli_report(*args: str) -> dict:
    proc = harness("report", *args, "--json", timeout=120)
    assert proc.returncode == 1, proc.stderr  # the failure asked about is there: a bundle
    return json.loads(proc.stdout)


def test_cli_pass_flags_keep_weights_no_redact_no_reduce(tmp_path):
    src = tmp_path / "nonzero.mlir"
    src.write_text(NONZERO)
    out = tmp_path / "out"
    data = _cli_report(str(src), "--pipeline", "torch-to-linalg", "--out", str(out),
                       "--keep-weights", "--no-redact", "--no-reduce")
    folder = Path(data["folder"])
    assert folder.parent == out and Path(data["archive"]).is_file()
    assert data["signature"] == "legalization-failure: failed to legalize operation 'torch.aten.nonzero'"
    assert Outcome.parse(data["outcome"]) is Outcome.LEGALIZATION_FAILURE
    assert Weights.parse(data["weights"]) is Weights.KEPT
    assert data["ops_before"] == 5 and not data["reduced"] and not data["redacted"]
    check = data["self_check"]
    assert data["reproduced"] and check["replayed_file"] == "input.mlir" and check["signature_reproduced"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(set(BUNDLE_FILES) - {"reduced.mlir"})
    text = (folder / "input.mlir").read_text()
    assert BLOB in text and f'loc("{SITE}/transformers/masking_utils.py":52:0)' in text
    assert f"RECORDED={REAL}" in (folder / "repro.sh").read_text()
    # Unredacted, the recorded binary is the default even with nothing on PATH.
    found = _repro(folder, None, path="/usr/bin:/bin")
    assert found.returncode == 1 and "REPRODUCED" in found.stdout, found.stdout + found.stderr


def test_cli_crash_through_pass_flags(tmp_path):
    out = tmp_path / "out"
    data = _cli_report(str(CRASHERS / "A_remainder_int_by_zero.mlir"), "--pipeline=-canonicalize",
                       "--out", str(out), "--budget-s", "5")
    assert data["title"] == "[torch-mlir] SIGFPE in Canonicalizer at AtenRemainderIntOp::fold"
    assert data["signature"] == ("crash: SIGFPE in Canonicalizer at "
                                 "mlir::torch::Torch::AtenRemainderIntOp::fold")
    assert data["reduced"] and data["ops_before"] == 5 and 1 <= data["ops_after"] <= 5
    folder = Path(data["folder"])
    assert folder.name.startswith("report-sigfpe-in-canonicalizer-at-mlir-torch-torch-atenremainderintop")
    script = (folder / "repro.sh").read_text()
    assert "CMD=(\"$PROGRAM\" \"$INPUT\" -canonicalize -o /dev/null -mlir-disable-threading)" in script
    assert _repro(folder, REAL).returncode == 1


def test_render_is_what_the_cli_prints(legalization):
    lines = legalization.render()
    assert lines[:4] == [f"report: {legalization.folder}", f"archive: {legalization.archive}",
                         f"title: {legalization.title}", f"signature: {legalization.signature}"]
    assert "weights: elided; paths redacted" in lines
    assert any(line.startswith("self-check: reproduced: reduced.mlir fails with the same signature")
               for line in lines)


def test_two_reports_of_one_input_never_collide(tmp_path):
    options = ReportOptions(out_dir=tmp_path, reduce=False)
    a = make_report(CRASHERS / "A_remainder_int_by_zero.mlir", "-canonicalize", options=options)
    b = make_report(CRASHERS / "A_remainder_int_by_zero.mlir", "-canonicalize", options=options)
    assert a.folder != b.folder and a.archive != b.archive
    assert len(list(tmp_path.iterdir())) == 4


def test_file_system_without_hard_links(tmp_path, monkeypatch):
    """The archive is linked into place; where links are refused it is renamed instead."""
    import errno
    import os
    import tarfile

    def refuse(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", refuse)
    result = make_report(CRASHERS / "A_remainder_int_by_zero.mlir", "-canonicalize",
                         options=ReportOptions(out_dir=tmp_path, reduce=False))
    assert result.reproduced
    with tarfile.open(result.archive) as tar:
        assert f"{Path(result.folder).name}/repro.sh" in tar.getnames()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [Path(result.folder).name, Path(result.archive).name])


def test_passing_input_is_an_error_and_writes_nothing(tmp_path):
    src = tmp_path / "ok.mlir"
    src.write_text(PASSING)
    out = tmp_path / "out"
    with pytest.raises(ReportError) as info:
        make_report(src, "torch-to-linalg", options=ReportOptions(out_dir=out))
    assert info.value.reason is Refusal.PASSES and info.value.input_path == str(src)
    assert str(info.value).startswith(f"nothing to report: {src} passes torch-to-linalg")
    assert not out.exists()
    proc = harness("report", str(src), "--pipeline", "torch-to-linalg", "--out", str(out), timeout=120)
    # Not a usage error: the file passes, so there is nothing to do.
    assert proc.returncode == 0 and proc.stdout.startswith(f"nothing to report: {src} passes"), proc.stderr
    assert not out.exists()


def test_unwritable_out_is_an_error_naming_the_input(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    src = CRASHERS / "A_remainder_int_by_zero.mlir"
    with pytest.raises(ReportError) as info:
        make_report(src, "-canonicalize", options=ReportOptions(out_dir=blocker / "reports"))
    message = str(info.value)
    assert info.value.reason is Refusal.OUTPUT
    assert str(src) in message and "is a file, not a folder" in message and "--out" in message
    assert blocker.read_text() == ""


def test_missing_input_is_an_error(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        make_report(tmp_path / "nope.mlir", "torch-to-linalg", options=ReportOptions(out_dir=tmp_path / "o"))
    assert not (tmp_path / "o").exists()


def test_a_bundle_that_does_not_reproduce_says_so(crash):
    """Title and self-check text when the replay differs (built from the crash's real record)."""
    data = json.loads((Path(crash.folder) / "record.json").read_text())
    record = RunRecord.from_json(data["record"])
    check = SelfCheck(replayed_file="reduced.mlir", signature="success", signature_reproduced=False,
                      repro_exit_status=0, repro_output="")
    assert not check.reproduced
    assert check.describe().startswith("NOT REPRODUCED: reduced.mlir gives 'success' instead")
    # One rule for every bundle: only REPRODUCED_STATUS counts, not any non-zero exit.
    cannot = SelfCheck(replayed_file="reduced.mlir", signature="x", signature_reproduced=True,
                       repro_exit_status=CANNOT_RUN_STATUS, repro_output="")
    assert not cannot.reproduced
    assert issue_title(record, None, "builtin.module(x)", reproduced=False).endswith(
        "(did not reproduce from the bundle)")
