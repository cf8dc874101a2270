"""Stopping the harness never leaves torch-mlir-opt running: Ctrl-C, SIGTERM and SIGHUP kill
the running child's group and exit 128+N; a harness killed outright (SIGKILL) has its children
killed by its watchdog. Each test runs the real binary on a real hang
(tests/data/crashers/P_softmax_dim_oob_HANG.mlir) under a name no other process holds, and
checks /proc afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from harness.compiler import process
from support import CRASHERS, ROOT
from support.processes import alive, catches, children, compiler_processes, processes_mentioning, wait_for

HANG = CRASHERS / "P_softmax_dim_oob_HANG.mlir"
PASS = "--pipeline=-torch-decompose-complex-ops"


def hung_input(tmp_path: Path) -> Path:
    path = tmp_path / f"hang-{uuid.uuid4().hex}.mlir"
    path.write_text(HANG.read_text())
    return path


def _default_stop_signals() -> None:
    """The harness as a terminal starts it: a test runner started in the background (``&``
    ignores SIGINT) or under nohup (SIGHUP) passes its ignored signals on, and the harness
    keeps ignored signals ignored (test_signals_ignored_at_start_stay_ignored)."""
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_default_stop_signals)


def stop(proc: subprocess.Popen) -> None:
    """Cleanup whatever a failing test left: the harness and its compiler children."""
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


def extra_args(command: str, tmp_path: Path) -> list[str]:
    return {"run": [], "bisect": ["--out", str(tmp_path)],
            "reduce": ["-o", str(tmp_path / "reduced.mlir")],
            "report": ["--out", str(tmp_path / "reports"), "--no-reduce"]}[command]


@pytest.mark.parametrize("command, signum", [
    ("run", signal.SIGTERM), ("run", signal.SIGHUP), ("run", signal.SIGINT),
    ("bisect", signal.SIGTERM), ("reduce", signal.SIGHUP), ("report", signal.SIGTERM),
])
def test_a_stop_signal_kills_the_hung_compiler_and_exits(tmp_path, command, signum):
    hang = hung_input(tmp_path)
    proc = start(command, str(hang), PASS, "--timeout", "600", *extra_args(command, tmp_path))
    try:
        compiler = wait_for(lambda: compiler_processes(hang.stem))
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + signum, err
        said = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
        assert err.strip().splitlines()[-1] == f"harness: {said}"
        assert "Traceback" not in err
        assert not any(alive(pid) for pid in compiler)
        assert compiler_processes(hang.stem) == []
    finally:
        stop(proc)


def test_a_killed_harness_takes_the_hung_compiler_with_it(tmp_path):
    # SIGKILL runs no Python: the watchdog process sees its pipe close and kills the group.
    hang = hung_input(tmp_path)
    proc = start("run", str(hang), PASS, "--timeout", "600")
    try:
        compiler = wait_for(lambda: compiler_processes(hang.stem))
        proc.kill()
        proc.communicate(timeout=60)
        wait_for(lambda: not any(alive(pid) for pid in compiler), timeout_s=10)
        assert compiler_processes(hang.stem) == []
    finally:
        stop(proc)


def _kill_and_check_the_shell_and_its_sleeper_die(proc: subprocess.Popen, marker: str) -> None:
    """SIGKILLs ``proc`` once the shell whose command line holds ``marker`` has its child, and
    waits for both to be gone."""
    try:
        shell = wait_for(lambda: processes_mentioning(marker))[0]
        sleeper = wait_for(lambda: children(shell))[0]
        proc.kill()
        proc.communicate(timeout=60)
        wait_for(lambda: not alive(shell) and not alive(sleeper), timeout_s=10)
    finally:
        stop(proc)

def test_a_killed_harness_takes_a_wrappers_children_too(tmp_path):
    # A --opt wrapper script (like the wheel's bin/torch-mlir-opt) runs the work in a child of
    # its own: a parent-death signal on the direct child would not reach it; the group kill does.
    marker = uuid.uuid4().hex
    wrapper = tmp_path / f"opt-{marker}"
    wrapper.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "LLVM version 99"; exit 0;; --help-list) echo torch; exit 0;; esac\n'
        "sleep 1000 &\nwait\n")
    wrapper.chmod(0o755)
    ir = tmp_path / "x.mlir"
    ir.write_text("func.func @f() {\n  return\n}\n")
    proc = start("run", str(ir), "--pipeline", "torch-to-linalg", "--opt", str(wrapper))
    _kill_and_check_the_shell_and_its_sleeper_die(proc, marker)


def test_ctrl_c_while_the_cli_imports_exits_130_quietly(tmp_path):
    # A Ctrl-C in the first ~0.3 s (importing the CLI) printed a KeyboardInterrupt traceback.
    # The entry point's first lines install quiet handlers (SIGTERM's handler shows in /proc);
    # the interrupt then lands during the imports, or later during the run.
    hang = hung_input(tmp_path)
    for delay in (0.0, 0.01, 0.03, 0.1, 0.3):
        proc = start("run", str(hang), PASS, "--timeout", "600")
        try:
            wait_for(lambda proc=proc: catches(proc.pid, signal.SIGTERM), timeout_s=30, interval_s=0.001)
            time.sleep(delay)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
            assert (proc.returncode, err.strip(), out) == (130, "harness: interrupted", ""), delay
        finally:
            stop(proc)
    assert compiler_processes(hang.stem) == []


@pytest.mark.parametrize("where", ["enter", "exit"])
def test_a_stop_signal_while_the_handlers_change_still_exits_quietly(monkeypatch, capsys, where):
    # The race behind a flaky -2 above: a Ctrl-C that lands while cli.main installs (or
    # restores) its handlers was raised outside the try that turns it into exit 130.
    from contextlib import contextmanager

    from harness import cli

    @contextmanager
    def interrupted_handlers():
        if where == "enter":
            raise KeyboardInterrupt
        yield
        raise process.Terminated(signal.SIGTERM)

    monkeypatch.setattr(process, "stop_on_signals", interrupted_handlers)
    expected = 130 if where == "enter" else 128 + signal.SIGTERM
    assert cli.main(["pipelines"]) == expected
    assert capsys.readouterr().err.strip().startswith("harness: ")


def test_signals_ignored_at_start_stay_ignored(tmp_path):
    # nohup: SIGHUP stays ignored, so closing the terminal does not stop the run.
    hang = hung_input(tmp_path)
    proc = subprocess.Popen(["nohup", sys.executable, "-m", "harness", "run", str(hang), PASS,
                             "--timeout", "600"], cwd=tmp_path, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_default_stop_signals)  # then nohup ignores SIGHUP
    try:
        wait_for(lambda: compiler_processes(hang.stem))
        proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert proc.poll() is None and compiler_processes(hang.stem)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
        assert proc.returncode == 128 + signal.SIGTERM
        assert compiler_processes(hang.stem) == []
    finally:
        stop(proc)
        if os.path.exists(tmp_path / "nohup.out"):
            os.unlink(tmp_path / "nohup.out")


def test_the_watchdog_runs_before_the_first_child_exists():
    # The harness may be SIGKILLed the moment its first torch-mlir-opt exists (the test above
    # kills it as soon as the compiler shows in /proc): a watchdog started only after Popen
    # returned left the group unguarded for a whole Python start, and the compiler outlived it.
    probe = (
        "import subprocess, sys\n"
        "from harness.compiler import process\n"
        "real = subprocess.Popen\n"
        "class Spy(real):\n"
        "    def __init__(self, *a, **k):\n"
        "        print('watchdog running at spawn:', process.watchdog.fd is not None, flush=True)\n"
        "        super().__init__(*a, **k)\n"
        "subprocess.Popen = Spy\n"
        "done = process.execute(['true'], timeout_s=30)\n"
        "print('exit', done.returncode)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.splitlines() == ["watchdog running at spawn: True", "exit 0"], out.stderr


def test_a_child_the_watchdog_was_never_told_of_dies_with_the_harness(tmp_path):
    # The watchdog learns of a child by a pipe write after Popen returns; a harness killed
    # between the child's exec and that write left the child running (a CI run killed it there,
    # in test_a_killed_harness_takes_the_hung_compiler_with_it). The child's environment carries
    # the watchdog's token, and the watchdog finds it in /proc. Here the write never happens.
    marker = uuid.uuid4().hex
    harness = (
        "import subprocess, time\n"
        "from harness.compiler.process import watchdog\n"
        "watchdog.ready()\n"
        f"subprocess.Popen(['sh', '-c', 'sleep 1000; : {marker}'], start_new_session=True,\n"
        "                 env=watchdog.environment())\n"
        "time.sleep(1000)\n"
    )
    script = tmp_path / "harness_like.py"  # the marker in a file: not in this process's argv
    script.write_text(harness)
    proc = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdin=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    _kill_and_check_the_shell_and_its_sleeper_die(proc, marker)


def test_a_watchdog_does_not_carry_a_parent_harness_token(monkeypatch):
    # A harness started by a harness (a sweep's port) inherits its parent's token; its own
    # watchdog must not, or the parent's watchdog would kill it first and this harness's
    # children would outlive both.
    monkeypatch.setenv(process.WATCHDOG_ENV, "a-parent-token")
    dog = process._Watchdog()
    dog.ready()
    try:
        assert dog.pid
        environ = (Path("/proc") / str(dog.pid) / "environ").read_bytes().split(b"\0")
        assert not [v for v in environ if v.startswith(process.WATCHDOG_ENV.encode() + b"=")]
        assert dog.environment()[process.WATCHDOG_ENV] == dog.token != "a-parent-token"
    finally:
        assert dog.fd is not None
        os.close(dog.fd)
        os.waitpid(dog.pid, 0)


def test_a_stop_signal_that_lands_on_a_worker_thread_still_stops_the_main_thread():
    """The kernel may deliver a process-directed SIGTERM to any thread; one that lands on a
    worker (here sent to it alone with pthread_kill) is only flagged, and the main thread must
    still raise within a fraction of a second, not when the worker's job ends (a sweep given
    SIGTERM ran on for minutes while its main thread sat in ``Future.result()``)."""
    from concurrent.futures import ThreadPoolExecutor
    import threading

    release = threading.Event()

    def job(item: int) -> int:
        time.sleep(0.5)  # the main thread is waiting by now
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
        release.wait(30)  # a port that runs on
        return item

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=1) as pool:
        try:
            with process.stop_on_signals(), pytest.raises(process.Terminated):
                process.map_interruptibly(pool, job, [1])
            took = time.monotonic() - started
        finally:
            release.set()
    assert took < 5, f"the main thread ran the handler only after {took:.1f} s"


def test_map_interruptibly_keeps_the_order_and_raises_the_first_failure():
    from concurrent.futures import ThreadPoolExecutor

    def job(item: int) -> int:
        time.sleep(0.3 if item == 0 else 0)
        if item == 2:
            raise ValueError(item)
        return item * 10

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert process.map_interruptibly(pool, job, [0, 1, 3]) == [0, 10, 30]
        with pytest.raises(ValueError):
            process.map_interruptibly(pool, job, [0, 1, 2, 3])
