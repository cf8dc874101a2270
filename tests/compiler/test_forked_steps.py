"""Warm steps (harness/compiler/forked.py): a ``python -m`` child of the RefBackend forked from a
process that has torch and torch_mlir imported, isolated as a fresh child is. Real processes:
a probe module run both ways, the real RefBackend (bindings lowering, ExecutionEngine) and the
real worker; what is checked comes from /proc and from the children themselves."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
import torch  # noqa: F401  (the warm process has it imported: the probe checks its child sees it)
from support import ROOT
from support.processes import alive, children, wait_for

from harness.compiler import forked, process
from harness.execute.backends import child_modules
from harness.execute.lowering import run_stage
from harness.execute.refbackend import Stage, run_refbackend
from harness.execute.worker import RefBackendWorker


# What a step child reports of itself, then does what its argument says.
PROBE = """
import ctypes, json, os, resource, signal, subprocess, sys, time
print(json.dumps({
    "torch_at_start": "torch" in sys.modules,
    "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0),
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "core": resource.getrlimit(resource.RLIMIT_CORE)[0],
    "sigint_default": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
    "sigterm_default": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
    "env": os.environ.get("PROBE_ENV", ""), "argv": sys.argv[1:],
}), flush=True)
what = sys.argv[1]
if what == "segv":
    ctypes.string_at(0)
elif what == "hang":
    grandchild = subprocess.Popen(["sleep", "600"])
    print(json.dumps({"grandchild": grandchild.pid}), flush=True)
    time.sleep(600)
elif what == "exit":
    print("bye", file=sys.stderr)
    sys.exit(3)
"""


@pytest.fixture
def probe(tmp_path, monkeypatch):
    """The probe's module name, importable here (sys.path) and in a fresh child (PYTHONPATH);
    forking on for it and the RefBackend's steps, off again after."""
    name = f"forkprobe_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT)]))
    yield name
    forked.enable(frozenset())


def run(module: str, what: str, *, warm: bool, timeout_s: float = 60.0) -> process.Finished:
    forked.enable(child_modules() | {module} if warm else frozenset())
    return process.execute([sys.executable, "-m", module, what], timeout_s=timeout_s,
                           env={**os.environ, "PROBE_ENV": "given"}, dump_on_timeout=False)


def first_json(text: str) -> dict:
    return json.loads(text.splitlines()[0])


def no_children_left() -> None:
    """Nothing of ours runs on, and no zombie: only the watchdog (a ``-c`` script) may stay."""
    left = [pid for pid in children(os.getpid()) if pid != process.watchdog.pid]
    assert left == [], [Path(f"/proc/{p}/cmdline").read_bytes() for p in left]


def test_a_warm_step_is_forked_with_torch_imported_and_isolated(probe):
    before = forked.forks()
    warm = run(probe, "ok", warm=True)
    assert warm.returncode == 0, warm.stderr
    seen = first_json(warm.stdout)
    assert forked.forks() == before + 1
    assert seen["torch_at_start"]            # no fresh interpreter: torch was there already
    assert seen["ppid"] == os.getpid()       # forked from this process
    assert seen["sid"] == seen["pid"]        # a session of its own: a timeout kills its group
    assert seen["fds"][:3] == [0, 1, 2] and len(seen["fds"]) <= 4  # 0-2 (and listdir's own)
    assert seen["core"] == 0
    assert seen["sigint_default"] and seen["sigterm_default"]
    assert seen["env"] == "given" and seen["argv"] == ["ok"]
    cold = run(probe, "ok", warm=False)
    assert cold.returncode == 0, cold.stderr
    assert not first_json(cold.stdout)["torch_at_start"]  # the cold path: a fresh interpreter
    assert forked.forks() == before + 1
    no_children_left()


def test_a_step_forked_from_another_thread_is_set_up_alike(probe):
    # The port runs its input sets' executions side by side, from a thread pool's threads.
    import threading

    before, done = forked.forks(), []
    thread = threading.Thread(target=lambda: done.append(run(probe, "ok", warm=True)))
    thread.start()
    thread.join()
    assert forked.forks() == before + 1 and done[0].returncode == 0, done[0].stderr
    seen = first_json(done[0].stdout)
    assert seen["torch_at_start"] and seen["sid"] == seen["pid"] and seen["sigint_default"]
    no_children_left()


def test_a_warm_step_exits_as_a_fresh_one(probe):
    warm, cold = run(probe, "exit", warm=True), run(probe, "exit", warm=False)
    assert warm.returncode == cold.returncode == 3
    assert warm.stderr == cold.stderr == "bye\n"
    no_children_left()


def test_a_crash_in_a_warm_step_ends_that_step_only_as_a_cold_one_does(probe):
    warm = run(probe, "segv", warm=True)
    cold = run(probe, "segv", warm=False)
    assert warm.returncode == cold.returncode == -signal.SIGSEGV
    assert not warm.timed_out and first_json(warm.stdout)["ppid"] == os.getpid()
    assert run(probe, "ok", warm=True).returncode == 0  # the caller goes on
    no_children_left()


def test_a_hung_warm_step_is_killed_with_its_group_at_its_timeout(probe):
    start = time.monotonic()
    done = run(probe, "hang", warm=True, timeout_s=3)
    assert done.timed_out and done.returncode == -signal.SIGKILL
    assert time.monotonic() - start < 3 + process.DRAIN_GRACE_S + 5
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["ppid"] == os.getpid()
    step, grandchild = lines[0]["pid"], lines[1]["grandchild"]
    assert not alive(step) and not alive(grandchild)  # the whole group went
    no_children_left()


KILLED_CALLER = """
import json, os, sys
import torch
from harness.compiler import forked
from harness.execute.backends import child_modules
forked.enable(child_modules() | {sys.argv[1]})
out = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
null = os.open(os.devnull, os.O_RDONLY)
child = forked.fork_module([sys.executable, "-m", sys.argv[1], "hang"], {0: null, 1: out, 2: out},
                           env=None)
print(child.pid, flush=True)
child.wait()
"""


def test_a_warm_step_dies_with_the_process_that_forked_it(probe, tmp_path):
    # The caller (a port) is SIGKILLed mid-step: no Python of it runs, the kernel ends the step
    # (PR_SET_PDEATHSIG).
    out = tmp_path / "step.out"
    caller = subprocess.Popen([sys.executable, "-c", KILLED_CALLER, probe, str(out)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert caller.stdout is not None
        step = int(caller.stdout.readline())
        wait_for(lambda: out.exists() and "grandchild" in out.read_text(), 60)
        assert alive(step)
        caller.kill()
        caller.wait()
        wait_for(lambda: not alive(step), 10)
    finally:
        caller.kill()
        caller.wait()
        if caller.stdout is not None:
            caller.stdout.close()
    grandchild = json.loads(out.read_text().splitlines()[1])["grandchild"]
    os.kill(grandchild, signal.SIGKILL)  # the group's straggler is the sweep's watchdog's job
    no_children_left()


_T = "!torch.vtensor<[?],f32>"
DYNAMIC_ADD = f"""
func.func @forward(%a: {_T}, %b: {_T}) -> {_T} {{
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %a, %b, %int1 : {_T}, {_T}, !torch.int -> {_T}
  return %0 : {_T}
}}
"""


def to_linalg(tmp_path: Path) -> Path:
    src = tmp_path / "m.torch.mlir"
    src.write_text(textwrap.dedent(DYNAMIC_ADD))
    backend, out = tmp_path / "m.backend.mlir", tmp_path / "m.linalg.mlir"
    for stage, a, b in (("function-to-torch", src, backend), ("torch-to-linalg", backend, out)):
        assert run_stage(a, stage, output_path=b).ok
    return out


def test_the_refbackend_forks_its_steps_and_records_an_abort_as_before(tmp_path):
    linalg = to_linalg(tmp_path)
    a, b, c = np.ones(3, np.float32), np.full(3, 2, np.float32), np.ones(4, np.float32)
    results = {}
    try:
        for mode in ("cold", "warm"):
            forked.enable(child_modules() if mode == "warm" else frozenset())
            before = forked.forks()
            ok = run_refbackend(linalg, [a, b])
            # Sizes 3 and 4: torch-to-linalg's shape assert aborts the compiled code.
            bad = run_refbackend(linalg, [a, c])
            results[mode] = (ok, bad, forked.forks() - before)
    finally:
        forked.enable(frozenset())
    for mode, (ok, bad, _) in results.items():
        assert ok.ok and ok.outputs[0].tolist() == [3.0, 3.0, 3.0], mode
        assert bad.failed_stage is Stage.EXECUTION and bad.signal == "SIGABRT", mode
        assert "mismatched size for broadcast" in bad.error, mode
        assert "harness.execute.jit_child" in bad.command  # the command to rerun it, either way
    assert results["cold"][2] == 0
    assert results["warm"][2] == 4  # two lowerings, two executions
    # The lowering's record names the same command either way.
    assert results["warm"][0].lowering.command[:3] == results["cold"][0].lowering.command[:3]
    no_children_left()


def test_the_worker_is_forked_and_an_abort_costs_one_request(tmp_path):
    linalg = to_linalg(tmp_path)
    from harness.execute.signature import read_signature

    signature = read_signature(tmp_path / "m.torch.mlir")
    a = np.arange(3, dtype=np.float32)
    forked.enable(child_modules())
    try:
        with RefBackendWorker(work_dir=tmp_path) as worker:
            assert worker.run(linalg, [a, a], signature).outputs[0].tolist() == [0.0, 2.0, 4.0]
            assert isinstance(worker._proc, forked.ForkedProcess)
            pid = worker._proc.pid
            bad = worker.run(linalg, [a, np.ones(4, np.float32)], signature)
            assert bad.failed_stage is Stage.EXECUTION and "SIGABRT" in bad.error
            assert not alive(pid)
            assert worker.run(linalg, [a, a], signature).ok
            assert worker._proc.pid != pid
    finally:
        forked.enable(frozenset())
    no_children_left()


def test_a_step_with_a_memory_limit_starts_fresh(probe):
    # The limit is for a fresh interpreter's address space: one holding torch would exceed it.
    forked.enable(child_modules() | {probe})
    before = forked.forks()
    done = process.execute([sys.executable, "-m", probe, "ok"], timeout_s=60, memory_limit_mb=2048)
    assert done.returncode == 0, done.stderr
    assert not first_json(done.stdout)["torch_at_start"] and forked.forks() == before
    no_children_left()


def test_forking_stays_off_unless_enabled_and_for_other_commands():
    assert forked.enabled() == frozenset()
    assert forked.forkable([sys.executable, "-m", "harness.execute.jit_child"]) is None
    forked.enable(child_modules())
    try:
        assert forked.forkable([sys.executable, "-m", "harness.execute.jit_child", "x"])
        assert forked.forkable([sys.executable, "-m", "harness", "port"]) is None
        assert forked.forkable(["/bin/python-other", "-m", "harness.execute.jit_child"]) is None
    finally:
        forked.enable(frozenset())
