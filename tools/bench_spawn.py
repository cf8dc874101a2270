"""What making children die with the harness costs, measured side by side in one process.

    python tools/bench_spawn.py [--runs 200] [--ballast-gb 1]

The process first holds ``--ballast-gb`` of touched memory (a loaded model), since that is what
makes fork() slow. Then, per spawn of ``/bin/true`` (median over ``--runs``):

- vfork, no protection: ``process.execute`` with the watchdog switched off (the runner before);
- vfork + watchdog: ``harness.compiler.process.execute`` (what it does now: a pipe write to
  the watchdog per run);
- exec wrapper: ``setpriv --pdeathsig KILL`` in front of the command (covers the direct child
  only, and fires when the spawning thread exits);
- fork + prctl: a ``preexec_fn`` calling PR_SET_PDEATHSIG, which turns vfork into fork.

and, once: how long the watchdog takes to start, and how long after a SIGKILL of the harness
its child is gone.
"""

from __future__ import annotations

import argparse
import ctypes
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.compiler import process

PR_SET_PDEATHSIG = 1


def _prctl_pdeathsig() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _popen(cmd: list[str], **kw) -> None:
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, **kw)
    proc.communicate()


def _unwatched(true: str) -> None:
    """process.execute as it was: the same spawn, no watchdog."""
    watch, forget = process.watchdog.watch, process.watchdog.forget
    process.watchdog.watch = process.watchdog.forget = lambda pgid: None
    try:
        process.execute([true], timeout_s=60)
    finally:
        process.watchdog.watch, process.watchdog.forget = watch, forget


def _kill_latency() -> float:
    """A harness-like parent that runs `sleep` through process.execute is SIGKILLed: seconds
    until the sleep is gone."""
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
            "from harness.compiler import process\n"
            "process.execute(['sleep', '1000'], timeout_s=1000)\n")
    parent = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 30
    child = None
    while child is None and time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and f"\nPPid:\t{parent.pid}\n" in (entry / "status").read_text() \
                        and b"sleep" in (entry / "cmdline").read_bytes():
                    child = int(entry.name)
            except OSError:
                pass
        time.sleep(0.01)
    if child is None:
        parent.kill()
        parent.wait()
        raise SystemExit("the child did not start")
    parent.kill()
    start = time.monotonic()
    parent.wait()
    while Path(f"/proc/{child}").exists() and "State:\tZ" not in Path(f"/proc/{child}/status").read_text():
        time.sleep(0.001)
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--ballast-gb", type=float, default=1.0)
    args = parser.parse_args()
    size = int(args.ballast_gb * 2**30)
    ballast = bytearray(size)
    ballast[::4096] = b"\1" * len(range(0, size, 4096))  # touch every page
    true = shutil.which("true") or "/bin/true"
    setpriv = shutil.which("setpriv")

    start = time.perf_counter()
    process.execute([true], timeout_s=60)  # starts the watchdog
    first = (time.perf_counter() - start) * 1000
    variants = {"vfork, no protection": lambda: _unwatched(true),
                "vfork + watchdog (harness)": lambda: process.execute([true], timeout_s=60)}
    if setpriv:
        variants["exec wrapper (setpriv --pdeathsig)"] = \
            lambda: process.execute([setpriv, "--pdeathsig", "KILL", true], timeout_s=60)
    variants["fork + prctl in preexec_fn"] = lambda: _popen([true], preexec_fn=_prctl_pdeathsig)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for run in range(args.runs):  # round robin, so load on a shared machine hits all alike
        for name, fn in variants.items():
            if name.startswith("fork") and run % 10:
                continue  # ~0.15 s each: a tenth of the runs is plenty
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    rows = [(name, statistics.median(ts) * 1000) for name, ts in times.items()]
    base = rows[0][1]
    print(f"spawning {true} with {args.ballast_gb:g} GB held by the parent, median of {args.runs} runs:")
    for name, ms in rows:
        print(f"  {name:38s} {ms:7.2f} ms  x{ms / base:.2f}")
    print(f"first run, starting the watchdog:       {first:7.2f} ms")
    print(f"child gone after a SIGKILL of its parent: {_kill_latency() * 1000:7.1f} ms")
    del ballast
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
