"""What the harness reads of a child: never longer than its timeout
because a process outside the group holds a pipe, and never more memory than a bounded
buffer, whatever the child prints."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

from harness.compiler.capture import KEEP_BYTES, Capture
from harness.compiler.process import DRAIN_GRACE_S, TIMEOUT_DUMP_GRACE_S, execute

from support import ROOT, harness
from support.processes import processes_mentioning

OK_IR = ("func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
         "  return %arg0 : !torch.vtensor<[2],f32>\n}\n")


def _escapee(tmp_path: Path, then: str) -> tuple[str, str]:
    """(a stand-in torch-mlir-opt that leaves a setsid'd child holding its stdout and stderr
    and then does ``then``, the marker in that child's command line)."""
    marker = f"1{uuid.uuid4().int % 10**8}"
    script = tmp_path / "escaping-torch-mlir-opt"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "LLVM version 99"; exit 0;; --help-list) echo torch; exit 0;; esac\n'
        f"setsid sleep {marker} &\n" + then)
    script.chmod(0o755)
    return str(script), marker


def _kill_escapees(marker: str) -> None:
    for pid in processes_mentioning(marker):
        os.kill(pid, signal.SIGKILL)


def _harness(*args: str, timeout: float) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    proc = harness(*args, timeout=timeout)
    return proc, time.monotonic() - start


def test_a_setsid_child_holding_stdout_does_not_hold_a_finished_run(tmp_path):
    # The binary is done at once; its escaped child kept the pipes open, and the harness read
    # them until that child ended (over 90 s), then called the run a timeout.
    opt, marker = _escapee(tmp_path, "exit 0\n")
    src = tmp_path / "ok.mlir"
    src.write_text(OK_IR)
    try:
        proc, took = _harness("run", str(src), "--pipeline=-canonicalize", "--opt", opt,
                              "--timeout", "5", timeout=60)
        assert proc.returncode == 0 and proc.stdout.startswith("success: "), proc.stdout + proc.stderr
        assert took < 5 + 2 * DRAIN_GRACE_S + 10  # (10: starting Python and the harness)
    finally:
        _kill_escapees(marker)


def test_a_hung_run_with_an_escaped_child_ends_at_its_timeout(tmp_path):
    opt, marker = _escapee(tmp_path, "sleep 1000\n")
    src = tmp_path / "ok.mlir"
    src.write_text(OK_IR)
    try:
        proc, took = _harness("run", str(src), "--pipeline=-canonicalize", "--opt", opt,
                              "--timeout", "5", timeout=90)
        assert proc.stdout.startswith("timeout: "), proc.stdout + proc.stderr
        assert took < 5 + TIMEOUT_DUMP_GRACE_S + 2 * DRAIN_GRACE_S + 10
    finally:
        _kill_escapees(marker)


def test_what_is_left_of_the_group_when_the_leader_exits_is_killed():
    marker = f"1{uuid.uuid4().int % 10**8}"
    done = execute(["sh", "-c", f"sleep {marker} & echo started"], timeout_s=30)
    assert done.returncode == 0 and done.stdout == "started\n" and not done.timed_out
    assert done.elapsed_s < 10
    time.sleep(0.2)
    assert processes_mentioning(marker) == []


# ---------------------------------------------------------------------------------------------
# Bounded capture

def test_a_capture_keeps_whole_lines_at_both_ends_and_says_what_it_left_out():
    capture = Capture("stderr", keep=100)
    lines = [f"line {i}\n".encode() for i in range(1000)]
    for line in lines:
        capture.add(line)
    text = capture.text()
    head, _, tail = text.partition("[harness: ")
    kept = text.replace("[harness: " + tail.split("\n", 1)[0] + "\n", "")
    assert head.startswith("line 0\n") and head.endswith("\n") and len(head) <= 100
    assert text.endswith("line 999\n") and capture.total == sum(map(len, lines))
    left_out = capture.total - len(kept)
    assert tail.startswith(f"{left_out:,} bytes of stderr left out here, of {capture.total:,}; ")
    assert set(kept.splitlines()) <= {line.decode().strip() for line in lines}  # no cut lines


def test_a_capture_under_its_limit_is_the_stream_as_text_mode_reads_it():
    capture = Capture("stdout", keep=8)
    for piece in (b"ab\r\n", b"\xff", b"cd\r", b"ef\n"):
        capture.add(piece)
    assert capture.text() == "ab\n\ufffdcd\nef\n" and capture.total == 11
    assert capture.text() == "ab\n\ufffdcd\nef\n"  # read twice, the same


CHILD = textwrap.dedent("""
    import sys, time
    from harness.compiler.process import execute
    size = int(sys.argv[1])
    start = time.monotonic()
    done = execute(["sh", "-c", f"head -c {size} /dev/zero | tr '\\\\0' e >&2; "
                                f"head -c {size} /dev/zero | tr '\\\\0' o; echo; echo last"],
                   timeout_s=120)
    took = time.monotonic() - start
    # VmHWM, not ru_maxrss: that one starts at the forking parent's peak (pytest's).
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    print(peak, took, done.stdout_bytes, done.stderr_bytes, len(done.stdout), len(done.stderr))
    print(done.stdout[-5:] == "last\\n", "left out here" in done.stdout, "left out here" in done.stderr)
""")


def test_100_mb_on_each_stream_costs_bounded_memory():
    # 1 GB of stderr cost 4.2 GB of RSS and 77 s; here 2 x 100 MB, in a child of its own so
    # that its peak RSS is its own (python tools/bench_output.py prints the 1 GB figure).
    size = 100_000_000
    proc = subprocess.run([sys.executable, "-c", CHILD, str(size)], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    peak, took, out_bytes, err_bytes, out_chars, err_chars = (float(x) for x in first.split())
    assert (out_bytes, err_bytes) == (size + 6, size)
    assert out_chars < 2 * KEEP_BYTES + 300 and err_chars < 2 * KEEP_BYTES + 300
    assert second == "True True True"
    assert peak < 200 * 2**20, f"peak RSS {peak / 2**20:.0f} MiB {proc.stdout}"
    assert took < 60


def test_the_blocker_analysis_still_reads_a_dump_bigger_than_the_default_capture(tmp_path):
    # It reads the module printed after the failure from stderr: a cut in its middle would
    # lose the IR (here 20 MB: 2.4 x the 8 MiB a run keeps at each end by default).
    from harness.diagnose.blockers import failure_ir

    script = tmp_path / "dumping-torch-mlir-opt"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "LLVM version 99"; exit 0;; --help-list) echo torch; exit 0;; esac\n'
        'case "$*" in *-pass-pipeline=*) ;; *) exit 0;; esac\n'
        "{ echo \"x.mlir:2:8: error: failed to legalize operation 'torch.aten.nonzero'\"\n"
        "  echo '// -----// IR Dump After ConvertTorchToLinalg Failed (convert-torch-to-linalg) //----- //'\n"
        "  echo 'module {'\n"
        "  yes '  // a line of the dump, long enough to add up ........................' | head -n 250000\n"
        "  echo '}'; } >&2\n"
        "exit 1\n")
    script.chmod(0o755)
    src = tmp_path / "x.mlir"
    src.write_text(OK_IR)
    dump, record = failure_ir(src, "builtin.module(convert-torch-to-linalg)", opt=str(script),
                              timeout_s=60, workdir=tmp_path)
    assert dump is not None and record.outcome.value == "legalization-failure"
    text = dump.read_text()
    assert len(text) > 2 * KEEP_BYTES and "[harness: " not in text
    assert text.startswith("module {\n") and text.endswith("\n}\n")
