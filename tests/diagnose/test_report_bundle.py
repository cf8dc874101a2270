"""The bundle is published whole or not at all: a SIGTERM in the middle of a report leaves no
hidden staging folder behind, and no torch-mlir-opt running."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.compiler import builds as builds_module

from support import CRASHERS

CRASHER = CRASHERS / "A_remainder_int_by_zero.mlir"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/status").is_file() and \
        "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()


def test_sigterm_mid_report_leaves_nothing_behind(tmp_path):
    """bisect's run (the one with the crash reproducer flag) hangs in a stand-in binary, so the
    report is surely in the middle, its staging folder written, when SIGTERM arrives."""
    real = builds_module.resolve().path
    pid_file = tmp_path / "hung.pid"
    opt = tmp_path / "torch-mlir-opt"
    opt.write_text("#!/bin/sh\n"
                   'case "$*" in *crash-reproducer*) echo $$ > ' + shlex.quote(str(pid_file))
                   + "; exec sleep 300 ;; esac\n"
                   f'exec {shlex.quote(real)} "$@"\n')
    opt.chmod(0o755)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "report", str(CRASHER),
                             "--pipeline=-canonicalize", "--out", str(out), "--opt", str(opt),
                             "--no-reduce"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hung = None
    try:
        deadline = time.monotonic() + 60
        while hung is None and time.monotonic() < deadline and proc.poll() is None:
            if pid_file.is_file() and pid_file.read_text().strip():
                hung = int(pid_file.read_text())
            time.sleep(0.05)
        assert hung is not None, proc.communicate(timeout=10)
        staged = list(out.glob(".report-partial-*"))
        assert len(staged) == 1 and (staged[0] / "input.mlir").is_file()  # mid-report indeed
        proc.send_signal(signal.SIGTERM)
        _stdout, stderr = proc.communicate(timeout=30)
        assert proc.returncode != 0, stderr
        assert sorted(p.name for p in out.iterdir()) == [], "left behind under --out"
        deadline = time.monotonic() + 5
        while _alive(hung) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(hung), "the hung torch-mlir-opt is still running"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if hung is not None and _alive(hung):
            os.kill(hung, signal.SIGKILL)
