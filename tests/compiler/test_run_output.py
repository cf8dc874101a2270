"""``run -o`` and the machine it runs on: the output is written to a
temp file and renamed only when the run succeeded and what it wrote parses; an unwritable
temp folder is the machine's problem, never a compiler result."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.compiler.binary import wheel_binary
from harness.compiler.records import Outcome
from harness.compiler.runner import RunOptions, run_pipeline
from harness.errors import HarnessEnvironmentError

from support import CRASHERS, ROOT, harness
from support.processes import wait_for

REAL = str(wheel_binary())
CRASHER = CRASHERS / "A_remainder_int_by_zero.mlir"
OK_IR = ("func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
         "  return %arg0 : !torch.vtensor<[2],f32>\n}\n")
OLD = "// the file that was there before\n"
HALF = "module {\n  func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"


def fake_opt(tmp_path: Path, on_pipeline: str) -> str:
    """The real binary, but a run with a pipeline does ``on_pipeline`` (Python, with ``out``
    the ``-o`` path) instead: reading a file back with no pass stays the real binary's."""
    script = tmp_path / "fake-torch-mlir-opt"
    script.write_text(f"""#!{sys.executable}
import os, signal, sys, time
args = sys.argv[1:]
if any(a.startswith("-pass-pipeline=") for a in args):
    out = args[args.index("-o") + 1]
{''.join('    ' + line + chr(10) for line in on_pipeline.splitlines())}
os.execv({REAL!r}, [{REAL!r}, *args])
""")
    script.chmod(0o755)
    return str(script)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ---------------------------------------------------------------------------------------------
# Item 5: -o is renamed into place, never written there

def test_a_crash_keeps_the_file_that_was_there(tmp_path):
    # The real binary removes its -o when it crashes: the previous output was lost.
    out = tmp_path / "out.mlir"
    out.write_text(OLD)
    record = run_pipeline(CRASHER, "-canonicalize", options=RunOptions(output_path=str(out)))
    assert record.outcome is Outcome.CRASH
    assert out.read_text() == OLD and leftovers(tmp_path) == []
    assert record.command[record.command.index("-o") + 1] == str(out)  # what a user pastes


def test_half_a_module_and_a_crash_never_reach_the_final_path(tmp_path):
    opt = fake_opt(tmp_path, f"open(out, 'w').write({HALF!r})\nos.kill(os.getpid(), signal.SIGSEGV)")
    out = tmp_path / "out.mlir"
    out.write_text(OLD)
    src = tmp_path / "ok.mlir"
    src.write_text(OK_IR)
    record = run_pipeline(src, "builtin.module(canonicalize)", opt=opt,
                          options=RunOptions(output_path=str(out)))
    assert record.outcome is Outcome.CRASH and record.signal == "SIGSEGV"
    assert out.read_text() == OLD and leftovers(tmp_path) == []
    # A new file is not created either.
    fresh = tmp_path / "fresh.mlir"
    run_pipeline(src, "builtin.module(canonicalize)", opt=opt, options=RunOptions(output_path=str(fresh)))
    assert not fresh.exists()


def test_a_success_replaces_the_file_with_the_mode_open_would_give(tmp_path):
    out = tmp_path / "out.mlir"
    out.write_text(OLD)
    out.chmod(0o640)
    src = tmp_path / "ok.mlir"
    src.write_text(OK_IR)
    record = run_pipeline(src, "builtin.module(canonicalize)", options=RunOptions(output_path=str(out)))
    assert record.ok and "func.func @f" in out.read_text()
    assert out.stat().st_mode & 0o777 == 0o640 and leftovers(tmp_path) == []


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "elsewhere" / "real.mlir"
    real.parent.mkdir()
    real.write_text(OLD)
    link = tmp_path / "out.mlir"
    link.symlink_to(real)
    src = tmp_path / "ok.mlir"
    src.write_text(OK_IR)
    assert run_pipeline(src, "builtin.module(canonicalize)", options=RunOptions(output_path=str(link))).ok
    assert link.is_symlink() and "func.func @f" in real.read_text()
    assert leftovers(tmp_path) == [] and leftovers(real.parent) == []


def test_dev_null_is_written_in_place_not_renamed_over(tmp_path):
    src = tmp_path / "ok.mlir"
    src.write_text(OK_IR)
    before = os.stat(os.devnull)
    assert run_pipeline(src, "builtin.module(canonicalize)", options=RunOptions(output_path=os.devnull)).ok
    after = os.stat(os.devnull)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_killed_harness_leaves_the_old_file_whole(tmp_path):
    # It writes half a module and hangs; the harness is SIGKILLed meanwhile.
    started = tmp_path / "half-written"
    opt = fake_opt(tmp_path, f"open(out, 'w').write({HALF!r})\nopen({str(started)!r}, 'w').close()\n"
                             "time.sleep(300)")
    out = tmp_path / "out.mlir"
    out.write_text(OLD)
    src = tmp_path / "ok.mlir"
    src.write_text(OK_IR)
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(src), "--pipeline",
                             "builtin.module(canonicalize)", "--opt", opt, "-o", str(out)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(started.exists, timeout_s=120)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert out.read_text() == OLD
    # The watchdog removes the staged file (after it has killed the binary).
    wait_for(lambda: leftovers(tmp_path) == [], timeout_s=30)


# ---------------------------------------------------------------------------------------------
# Item 7: a success is a success only when -o holds IR

def test_a_binary_that_exits_0_without_writing_is_not_a_success(tmp_path):
    opt = fake_opt(tmp_path, "sys.exit(0)")
    out = tmp_path / "out.mlir"
    out.write_text(OLD)
    src = tmp_path / "ok.mlir"
    src.write_text(OK_IR)
    record = run_pipeline(src, "builtin.module(canonicalize)", opt=opt,
                          options=RunOptions(output_path=str(out)))
    assert record.outcome is Outcome.BAD_OUTPUT and not record.ok
    assert record.first_error().message == "exited 0 but wrote nothing to its output file (-o)"
    assert out.read_text() == OLD and leftovers(tmp_path) == []
    # The command line says so, exit 1, and no "success".
    proc = harness("run", str(src), "--pipeline", "builtin.module(canonicalize)", "--opt", opt,
                   "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("bad-output: ok.mlir through builtin.module(canonicalize)")
    assert "success" not in proc.stdout and "wrote nothing to its output file (-o)" in proc.stdout


def test_half_a_module_and_exit_0_is_not_a_success(tmp_path):
    opt = fake_opt(tmp_path, f"open(out, 'w').write({HALF!r})\nsys.exit(0)")
    out = tmp_path / "out.mlir"
    src = tmp_path / "ok.mlir"
    src.write_text(OK_IR)
    record = run_pipeline(src, "builtin.module(canonicalize)", opt=opt,
                          options=RunOptions(output_path=str(out), read_back_output=True))
    assert record.outcome is Outcome.BAD_OUTPUT
    assert record.first_error().message.startswith("exited 0 but its output (-o) does not parse back: ")
    assert not out.exists() and leftovers(tmp_path) == []
    # harness run -o reads it back.
    proc = harness("run", str(src), "--pipeline", "builtin.module(canonicalize)", "--opt", opt,
                   "-o", str(out))
    assert proc.returncode == 1 and proc.stdout.startswith("bad-output: "), proc.stdout + proc.stderr
    assert "does not parse back" in proc.stdout and not out.exists()


# ---------------------------------------------------------------------------------------------
# Item 11: an unwritable temp folder

@pytest.mark.parametrize("tmpdir", ["{tmp}/missing", "{tmp}/a-file", "/proc"])
def test_an_unwritable_tmpdir_is_an_environment_error_not_a_crash(tmp_path, monkeypatch, tmpdir):
    # The real binary's crash handler writes into $TMPDIR; without it the crash read "LLVM
    # ERROR: IO failure on output stream" and was reported as a torch-mlir bug.
    (tmp_path / "a-file").write_text("")
    folder = tmpdir.format(tmp=tmp_path)
    monkeypatch.setenv("TMPDIR", folder)
    with pytest.raises(HarnessEnvironmentError) as info:
        run_pipeline(CRASHER, "-canonicalize")
    text = str(info.value)
    assert info.value.exit_code == 2 and "\n" not in text
    assert f"$TMPDIR ({folder}) cannot be written" in text and "not a torch-mlir bug" in text


def test_run_and_report_under_an_unwritable_tmpdir_exit_2_with_no_bundle(tmp_path):
    env = {"TMPDIR": str(tmp_path / "missing")}
    proc = harness("run", str(CRASHER), "--pipeline=-canonicalize", env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("harness: error: the temp folder $TMPDIR") and "crash" not in proc.stdout
    out = tmp_path / "reports"
    proc = harness("report", str(CRASHER), "--pipeline=-canonicalize", "--out", str(out), env=env)
    assert proc.returncode == 2 and "$TMPDIR" in proc.stderr, proc.stderr
    assert "did not reproduce" not in proc.stdout + proc.stderr and proc.stderr.count("\n") == 1
    assert not out.exists() or not any(out.iterdir())


def test_llvm_takes_tmp_when_tmpdir_is_unset(tmp_path, monkeypatch):
    # LLVM reads TMPDIR, TMP, TEMP, TEMPDIR in that order: TMP is the one checked here.
    for name in ("TMPDIR", "TEMP", "TEMPDIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TMP", str(tmp_path / "missing"))
    with pytest.raises(HarnessEnvironmentError, match=r"\$TMP \("):
        run_pipeline(CRASHER, "-canonicalize")
    monkeypatch.setenv("TMP", str(tmp_path))
    start = time.monotonic()
    assert run_pipeline(CRASHER, "-canonicalize").outcome is Outcome.CRASH
    assert time.monotonic() - start < 60


def test_port_checks_the_temp_folder_before_building_the_model(tmp_path):
    # It traced the model first, and failed at the first torch-mlir-opt run.
    out = tmp_path / "ports"
    proc = harness("port", "gpt2", "--frontend", "torchscript", "--out", str(out),
                   env={"TMPDIR": str(tmp_path / "missing")})
    assert proc.returncode == 2 and "the temp folder $TMPDIR" in proc.stderr
    assert not out.exists() and "trace" not in proc.stdout + proc.stderr
