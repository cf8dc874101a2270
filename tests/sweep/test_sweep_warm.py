"""The sweep's warm workers (harness/sweep/warm.py), with real processes: a crash or a hang in a
forked child costs that model only, a hang is killed at its timeout, the server never runs the
model's code, a dead server or sweep leaves no child behind, and a warm sweep's records equal a
cold one's.

Where the behaviour under test is the sweep's and not the port's, the port child is a stand-in:
a ``sitecustomize`` module (on PYTHONPATH, so the warm server imports it at its start and every
forked child inherits it) makes ``harness port crash-*`` abort and ``harness port hang-*`` sleep;
every other model is ported for real."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.sweep import records
from harness.sweep.runner import THREAD_VARIABLES, run_logged, thread_env
from harness.sweep.warm import WARM, WarmServer

from support import ROOT
from support.processes import alive, wait_for


HOOK = """
import os, sys, time
import harness.cli as _cli

_real_main = _cli.main


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    model = args[args.index("port") + 1] if "port" in args[:-1] else ""
    if model.startswith(("crash", "hang")):
        with open(os.environ["WARM_TEST_PIDS"], "a") as f:
            f.write(f"{model} {os.getpid()} {os.getppid()} {time.time()}\\n")
    if model.startswith("crash"):
        os.abort()
    if model.startswith("hang"):
        time.sleep(600)
    return _real_main(argv)


_cli.main = main
"""

# A module run as 'python -m warm_probe CODE': what a forked child ran, and as whom.
PROBE = """
import os, sys
with open(os.environ["WARM_TEST_PIDS"], "a") as f:
    f.write(f"probe {os.getpid()} {os.getppid()} 0\\n")
exec(sys.argv[1])
"""


def _env(tmp_path: Path) -> dict[str, str]:
    hook = tmp_path / "hook"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(HOOK)
    (hook / "warm_probe.py").write_text(PROBE)
    path = os.pathsep.join(filter(None, [str(hook), str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "WARM_TEST_PIDS": str(tmp_path / "pids")}


def _started(tmp_path: Path) -> dict[str, tuple[int, int]]:
    """model -> (pid, parent pid) of the stand-ins that started."""
    return {name: (pid, ppid) for name, (pid, ppid, _) in _started_at(tmp_path).items()}


def _started_at(tmp_path: Path) -> dict[str, tuple[int, int, float]]:
    """model -> (pid, parent pid, time.time() at its start) of the stand-ins that started."""
    try:
        lines = (tmp_path / "pids").read_text().splitlines()
    except OSError:
        return {}
    return {name: (int(pid), int(ppid), float(at))
            for name, pid, ppid, at in (line.split() for line in lines)}


def _sweep(tmp_path: Path, *argv: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness", "--progress", "sweep", *argv], cwd=ROOT,
                            env=_env(tmp_path), text=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _gone(pids) -> bool:
    return not any(alive(p) for p in pids)


def _tree(pid: int) -> list[int]:
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _is_server(pid: int) -> bool:
    try:
        return psutil.Process(pid).cmdline()[1:3] == ["-m", "harness.sweep.warm"]
    except psutil.Error:  # gone meanwhile (a watchdog, a child)
        return False


def test_a_crash_and_a_hang_cost_only_themselves_and_the_hang_dies_at_its_timeout(tmp_path):
    out = tmp_path / "sweep"
    start = time.monotonic()
    proc = _sweep(tmp_path, "crash-a", "hang-b", "nosuchmodel", "--out", str(out), "-j", "2",
                  "--timeout", "10", "--no-numerics")
    stdout, stderr = proc.communicate(timeout=240)
    took, ended = time.monotonic() - start, time.time()
    assert proc.returncode == 1, stdout + stderr
    started = _started(tmp_path)
    server = started["crash-a"][1]
    assert started["hang-b"][1] == server != proc.pid  # both forked by the warm server
    assert not alive(started["hang-b"][0]) and not alive(server)
    by_model = records.load(out).by_model()
    crash, hang = by_model["crash-a"].failure, by_model["hang-b"].failure
    assert crash is not None and str(crash.reason) == "crash" and crash.returncode == -signal.SIGABRT
    assert hang is not None and str(hang.reason) == "timeout" and hang.returncode is None
    # killed at its 10 s (its seconds also count the wait for the server's imports)
    assert hang.seconds >= 10 and 10 <= ended - _started_at(tmp_path)["hang-b"][2] < 20
    # the model after them ran the real port, which refused the name (exit 2, its message)
    other = by_model["nosuchmodel"].failure
    assert other is not None and other.returncode == 2 and "config.json" in other.detail, stdout
    assert "warm workers unavailable" not in stderr
    assert took < 200


def test_a_killed_server_takes_its_children_and_the_sweep_goes_on_cold(tmp_path):
    out = tmp_path / "sweep"
    proc = _sweep(tmp_path, "hang-a", "crash-b", "--out", str(out), "--timeout", "300")
    try:
        pid, server = wait_for(lambda: _started(tmp_path).get("hang-a"), timeout_s=180)
        assert _is_server(server)
        os.kill(server, signal.SIGKILL)
        wait_for(lambda: not alive(pid), timeout_s=10)
        _stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "warm workers unavailable" in stderr, stderr
    by_model = records.load(out).by_model()
    lost = by_model["hang-a"].failure
    assert lost is not None and lost.returncode == -signal.SIGKILL
    # the next model started cold: its parent is the sweep itself
    crash = by_model["crash-b"].failure
    assert crash is not None and crash.returncode == -signal.SIGABRT
    assert _started(tmp_path)["crash-b"][1] == proc.pid


def test_a_killed_sweep_leaves_no_server_and_no_child(tmp_path):
    proc = _sweep(tmp_path, "hang-a", "hang-b", "--out", str(tmp_path / "sweep"), "-j", "2")
    try:
        wait_for(lambda: len(_started(tmp_path)) == 2, timeout_s=180)
        tree = _tree(proc.pid)  # the server, its children, the sweep's watchdog
        hangs = [pid for pid, _ in _started(tmp_path).values()]
        assert set(hangs) <= set(tree)
        proc.kill()
        proc.wait(timeout=30)
        wait_for(lambda: _gone(tree), timeout_s=15)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_a_sigkilled_server_leaves_no_child_even_unwatched(tmp_path):
    """PR_SET_PDEATHSIG alone: the server dies, the sweep side (a bare WarmServer here, no
    sweep watchdog told of the children) does nothing, the children die anyway."""
    env = _env(tmp_path)
    old = dict(os.environ)
    os.environ.update(env)
    try:
        server = WarmServer(sys.executable, str(ROOT), tmp_path / "server.log")
        server.start()
        assert server.wait_ready(), server.failure
        with open(tmp_path / "out.log", "w") as log:
            children = [server.spawn([sys.executable, "-m", "warm_probe", "import time; time.sleep(600)"],
                                     log.fileno(), log.fileno(), None, env) for _ in range(2)]
        pids = [c.pid for c in children]
        assert all(alive(p) for p in pids)
        assert psutil.Process(server.pid).num_threads() <= 2  # imports only: no torch thread pool
        os.kill(server.pid, signal.SIGKILL)
        wait_for(lambda: _gone(pids), timeout_s=10)
        for child in children:
            assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        os.environ.clear()
        os.environ.update(old)
        server.close()


def test_a_forked_child_ends_as_a_python_process_would(tmp_path):
    """Exit statuses, output, and the code ran in the child, never in the server."""
    env = _env(tmp_path)
    old = dict(os.environ)
    os.environ.update(env)
    cases = {"print('hello'); import torch; print(torch.ones(3).sum().item())": 0,
             "raise SystemExit(3)": 3, "raise SystemExit('a message')": 1,
             "raise ValueError('boom')": 1, "import os; os.abort()": -signal.SIGABRT,
             "import threading, time; threading.Thread(target=lambda: (time.sleep(0.5), "
             "print('joined'))).start()": 0,
             "import atexit; atexit.register(lambda: print('at exit'))": 0}
    try:
        with WARM.serving(sys.executable, str(ROOT), tmp_path / "server.log") as server:
            assert server is not None and server.wait_ready(), server and server.failure
            for k, (code, expected) in enumerate(cases.items()):
                log = tmp_path / f"{k}.log"
                got, timed_out, _ = run_logged([sys.executable, "-m", "warm_probe", code], log, 60, None)
                assert (got, timed_out) == (expected, False), log.read_text()
            texts = [(tmp_path / f"{k}.log").read_text() for k in range(len(cases))]
            assert texts[0].splitlines()[1:] == ["hello", "3.0"]
            assert "a message" in texts[2] and "ValueError: boom" in texts[3]
            assert "joined" in texts[5] and "at exit" in texts[6]
            ran = list(_started_at(tmp_path).values())
            assert len(ran) == 1  # one name: "probe"
            ran = [line.split() for line in (tmp_path / "pids").read_text().splitlines()]
            assert len(ran) == len(cases)
            assert all(int(ppid) == server.pid != int(pid) for _, pid, ppid, _ in ran)
    finally:
        os.environ.clear()
        os.environ.update(old)


def _outcomes(out: Path) -> dict[str, list[tuple[str, str, str, str]]]:
    found = {}
    for model, entry in records.load(out).by_model().items():
        assert entry.record is not None, model
        found[model] = [(variant.name, port.frontend, port.outcome, port.failed_stage)
                        for variant, port in entry.record.ports()]
    return found


@pytest.mark.parametrize("models", [("gpt2",)])
def test_warm_records_equal_cold_ones(tmp_path, models):
    """A real port (both frontends, numbers on the RefBackend) in a forked child and in a fresh
    Python: the same outcomes, stage by stage."""
    runs = {}
    for mode in ("warm", "cold"):
        out = tmp_path / mode
        proc = _sweep(tmp_path, *models, "--out", str(out), *(["--cold"] if mode == "cold" else []))
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stdout + stderr
        runs[mode] = out
    assert (runs["warm"] / "logs" / "warm-server.log").is_file()
    assert not (runs["cold"] / "logs" / "warm-server.log").exists()
    assert _outcomes(runs["warm"]) == _outcomes(runs["cold"])
    warm, cold = (json.loads((runs[m] / "records" / "gpt2.json").read_text()) for m in ("warm", "cold"))
    stages = [[(s["name"], s["ok"]) for s in port["stages"]] for v in warm["variants"] for port in v["ports"]]
    assert stages == [[(s["name"], s["ok"]) for s in port["stages"]]
                      for v in cold["variants"] for port in v["ports"]]
    assert all(str(outcome) == "verified" for ports in _outcomes(runs["warm"]).values()
               for _, _, outcome, _ in ports)


@pytest.mark.parametrize("when", ["importing", "porting"])
def test_a_stop_signal_ends_a_warm_sweep_within_seconds(tmp_path, when):
    """SIGTERM while the server still imports, or while a (stubborn) port runs: the sweep exits
    within 15 s with 128+15, leaving no server, no child and no record for the stopped model."""
    out = tmp_path / "sweep"
    proc = _sweep(tmp_path, "hang-a", "--out", str(out), "--timeout", "300")
    try:
        if when == "importing":
            server = wait_for(lambda: [p for p in _tree(proc.pid) if _is_server(p)],
                              timeout_s=60, interval_s=0.05)[0]
            hang = None
        else:
            hang, server = wait_for(lambda: _started(tmp_path).get("hang-a"), timeout_s=180)
        tree = _tree(proc.pid)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        took = time.monotonic() - sent
        wait_for(lambda: _gone([server, *tree, *([hang] if hang else [])]), timeout_s=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert took < 15, f"the sweep took {took:.1f} s to stop"
    assert proc.returncode == 128 + signal.SIGTERM
    assert not (out / "records" / "hang-a.json").exists()


WARM_UP_THREADS = """
import json, os, sys
from harness.execute.backends import child_modules
from harness.sweep.warm import PRELOAD, WARM_UP
for name in (*PRELOAD, *sorted(child_modules())):
    __import__(name)
counts = {"imported": len(os.listdir("/proc/self/task"))}
for module, function in WARM_UP:
    getattr(__import__(module, fromlist=[function]), function)()  # raises if it cannot
    counts[f"{module}.{function}"] = len(os.listdir("/proc/self/task"))
print(json.dumps(counts))
"""


def test_the_servers_warm_up_starts_no_thread(tmp_path):
    """What the server does before it forks (the tables, the RefBackend's code generation on a
    small program) leaves it with the threads the imports left: a thread alive at fork time
    would be missing, half-done, in every child."""
    done = subprocess.run([sys.executable, "-c", WARM_UP_THREADS], cwd=ROOT, text=True,
                          capture_output=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert "harness.execute.refbackend.warm_up" in counts
    assert set(counts.values()) == {counts["imported"]}, counts


def test_thread_env_gives_each_port_its_share_of_the_cpus(monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3}, raising=False)
    assert thread_env(2) == dict.fromkeys(THREAD_VARIABLES, "2")
    assert thread_env(3) == dict.fromkeys(THREAD_VARIABLES, "1")
    assert thread_env(8) == dict.fromkeys(THREAD_VARIABLES, "1")  # at least one
    assert thread_env(1) == dict.fromkeys(THREAD_VARIABLES, "4")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")  # the user's own setting stands
    assert "OMP_NUM_THREADS" not in thread_env(2)


def test_ports_warm_and_cold_run_with_the_thread_pools_the_sweep_sized(tmp_path):
    """torch's intra-op pool in a forked child is the one the server sized at its imports:
    the sweep's thread environment goes to the server as to a cold child."""
    env = _env(tmp_path)
    old = dict(os.environ)
    os.environ.update(env)
    for name in THREAD_VARIABLES:
        os.environ.pop(name, None)
    code = "import torch; print('threads', torch.get_num_threads())"
    sized = dict.fromkeys(THREAD_VARIABLES, "1")
    try:
        with WARM.serving(sys.executable, str(ROOT), tmp_path / "server.log", env=sized) as server:
            assert server is not None and server.wait_ready(), server and server.failure
            got, _, _ = run_logged([sys.executable, "-m", "warm_probe", code], tmp_path / "warm.log",
                                   60, None, env=sized)
            assert got == 0 and "threads 1" in (tmp_path / "warm.log").read_text()
            assert int((tmp_path / "pids").read_text().split()[2]) == server.pid  # forked
        got, _, _ = run_logged([sys.executable, "-m", "warm_probe", code], tmp_path / "cold.log",
                               60, None, env=sized)
        assert got == 0 and "threads 1" in (tmp_path / "cold.log").read_text()
        got, _, _ = run_logged([sys.executable, "-m", "warm_probe", code], tmp_path / "two.log",
                               60, None, env=dict.fromkeys(THREAD_VARIABLES, "2"))
        assert got == 0 and "threads 2" in (tmp_path / "two.log").read_text()
    finally:
        os.environ.clear()
        os.environ.update(old)
