"""harness sweep's processes and folder: a stop signal ends it within seconds whatever the
timeouts, a SIGKILL of the sweep takes its port children with it, one sweep at a time per
--out, and an unusable --out is a usage error before any model runs.

The port children are fakes (a script standing in for ``python -m harness port``) where the
behaviour under test is the sweep's, not the port's; one test runs a real port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness.sweep import lock

from support import ROOT, harness
from support.processes import alive, children, processes_mentioning, wait_for


# A port child at its worst: it ignores the polite signals and sits in a long stage.
STUBBORN_PORT = """#!/bin/bash
echo $$ >> "$SWEEP_TEST_PIDS"
trap '' TERM INT HUP
exec sleep 600
"""

# The sweep's CLI, with every child started through a fake Python (SweepOptions.python), cold
# (the warm server's equivalents are in test_sweep_warm.py).
DRIVER = """
import sys
from harness.sweep import runner
Options = runner.SweepOptions
runner.SweepOptions = lambda **kw: Options(**{**kw, "python": sys.argv[1], "warm": False})
from harness.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _default_stop_signals() -> None:
    """As a terminal starts it (a test runner in the background ignores SIGINT)."""
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def fake_sweep(tmp_path: Path, *argv: str) -> tuple[subprocess.Popen, Path]:
    """``harness sweep ARGV`` whose port children are STUBBORN_PORT; (process, pid file)."""
    fake = tmp_path / "python"
    fake.write_text(STUBBORN_PORT)
    fake.chmod(0o755)
    pids = tmp_path / "pids"
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(fake), "sweep", *argv], cwd=ROOT,
                            text=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_default_stop_signals,
                            env={**os.environ, "SWEEP_TEST_PIDS": str(pids)})
    return proc, pids


def started_ports(pids: Path) -> list[int]:
    try:
        return [int(line) for line in pids.read_text().split()]
    except OSError:
        return []


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def finish(proc: subprocess.Popen) -> tuple[str, str]:
    if proc.poll() is None:
        proc.kill()
    return proc.communicate(timeout=60)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_ends_the_sweep_within_seconds_whatever_the_timeouts(tmp_path, signum):
    """A port that ignores SIGTERM in a 200 s stage: the sweep still exits within 15 s, its
    child killed, no record for the stopped model, the next model never started."""
    out = tmp_path / "sweep"
    proc, pids = fake_sweep(tmp_path, "m1", "m2", "--out", str(out), "--stage-timeout", "200")
    try:
        port = wait_for(lambda: started_ports(pids), timeout_s=60)[0]
        sent = time.monotonic()
        proc.send_signal(signum)
        proc.wait(timeout=30)
        took = time.monotonic() - sent
        wait_for(lambda: not alive(port), timeout_s=5)
    finally:
        _, err = finish(proc)
    assert took < 15, f"the sweep took {took:.1f} s to stop"
    assert proc.returncode == 128 + signum, err
    assert started_ports(pids) == [port]
    assert not (out / "records" / "m1.json").exists() and not (out / "records" / "m2.json").exists()


def test_a_killed_sweep_takes_its_port_children_with_it(tmp_path):
    proc, pids = fake_sweep(tmp_path, "m1", "--out", str(tmp_path / "sweep"))
    try:
        port = wait_for(lambda: started_ports(pids), timeout_s=60)[0]
        tree = descendants(proc.pid)  # the port and the sweep's watchdog
        assert port in tree and len(tree) >= 2
        proc.kill()
        proc.wait(timeout=30)
        wait_for(lambda: not any(alive(p) for p in tree), timeout_s=10)
    finally:
        finish(proc)


@pytest.mark.parametrize("mode", ["cold", "warm"])
def test_a_killed_sweep_takes_a_real_port_and_its_compiler_children(tmp_path, mode):
    """The real chain: sweep -> harness port (and the port's own watchdog) -> its --opt, here a
    wrapper that hangs in a child of its own (a hung stage; the stage timeout is far off).
    Warm, the port is a child of the sweep's warm server (harness/sweep/warm.py)."""
    marker = uuid.uuid4().hex
    wrapper = tmp_path / f"opt-{marker}"
    wrapper.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "LLVM version 99"; exit 0;; --help-list) echo torch; exit 0;; esac\n'
        "sleep 1000 &\nwait\n")
    wrapper.chmod(0o755)
    proc = subprocess.Popen([sys.executable, "-m", "harness", "sweep", "gpt2", "--out",
                             str(tmp_path / "sweep"), "--no-numerics", "--frontend", "torchscript",
                             "--opt", str(wrapper), "--stage-timeout", "600",
                             *(["--cold"] if mode == "cold" else [])], cwd=ROOT, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_default_stop_signals)
    try:
        def hung_stage() -> list[int]:
            return [p for p in processes_mentioning(marker)
                    if "harness" not in _argv(p) and children(p)]  # not the sweep nor the port

        shell = wait_for(hung_stage, timeout_s=120, interval_s=0.2)[0]
        tree = descendants(proc.pid)  # the port, its watchdog, the wrapper, its sleep, ours
        port = [p for p in tree if _argv(p)[1:5] == ["-m", "harness", "--no-progress", "port"]]
        assert port and shell in tree and children(shell)[0] in tree
        if mode == "warm":  # a child of the server, showing its own command line
            server = [p for p in tree if _argv(p)[1:3] == ["-m", "harness.sweep.warm"]]
            assert server and port[0] in children(server[0])
        proc.kill()
        proc.wait(timeout=30)
        wait_for(lambda: not any(alive(p) for p in tree), timeout_s=10)
    finally:
        finish(proc)


def _argv(pid: int) -> list[str]:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_text().split("\0")
    except OSError:
        return []


def test_a_second_sweep_on_the_same_folder_says_who_holds_it(tmp_path):
    out = tmp_path / "sweep"
    with lock.hold(out):
        proc = harness("sweep", "nosuchmodel", "--out", str(out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = proc.stderr.strip()
    assert len(message.splitlines()) == 1 and message.startswith("harness: error: another sweep")
    assert f"pid {os.getpid()} on {socket.gethostname()}" in message and "started" in message
    assert "pytest" in message  # the holder's command
    assert not (out / "records").exists() and not (out / "logs").exists()  # nothing ran


def test_the_lock_dies_with_its_holder(tmp_path):
    """flock: a SIGKILLed sweep leaves no stale lock behind."""
    out = tmp_path / "sweep"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom harness.sweep import lock\n"
         "with lock.hold(__import__('pathlib').Path(sys.argv[1])):\n"
         "    print('held', flush=True); time.sleep(600)\n", str(out)],
        cwd=ROOT, text=True, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "held"
        proc = harness("sweep", "nosuchmodel", "--out", str(out))
        assert proc.returncode == 2 and f"pid {holder.pid} " in proc.stderr, proc.stderr
        holder.kill()
        holder.wait(timeout=30)
        with lock.hold(out) as mine:
            assert mine.pid == os.getpid()
    finally:
        finish(holder)


def test_shards_in_their_own_folders_and_a_merge_are_not_blocked(tmp_path):
    """--shard and --merge each write their own --out: the lock is per folder."""
    a, b = tmp_path / "a", tmp_path / "b"
    with lock.hold(a):
        proc = harness("sweep", "nosuchmodel", "--shard", "1/1", "--out", str(b))
        assert proc.returncode == 1 and (b / "records" / "nosuchmodel.json").is_file(), proc.stderr
        merged = harness("sweep", "--merge", str(b), "--out", str(tmp_path / "m"))
        assert merged.returncode == 1 and (tmp_path / "m" / "index.html").is_file(), merged.stderr


@pytest.mark.parametrize("where", ["file", "under-a-file", "unwritable", "unwritable-parent"])
def test_an_unusable_out_is_a_usage_error_before_any_model_runs(tmp_path, where):
    a_file = tmp_path / "taken"
    a_file.write_text("not a folder\n")
    # /sys refuses new entries even to root: an unwritable folder whatever the user.
    out = {"file": a_file, "under-a-file": a_file / "sweep", "unwritable": Path("/sys"),
           "unwritable-parent": Path("/sys/harness-sweep-test")}[where]
    proc = harness("sweep", "nosuchmodel", "--out", str(out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = proc.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert message.startswith(f"harness: error: cannot use {out} as the sweep folder (--out)")
    assert "Traceback" not in message and "nothing was run" in message
    assert a_file.read_text() == "not a folder\n"
    merged = harness("sweep", "--merge", str(tmp_path), "--out", str(out))
    assert merged.returncode == 2 and "as the sweep folder (--out)" in merged.stderr, merged.stderr
