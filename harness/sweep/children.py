"""The sweep's child processes (``harness port``, ``harness check``), each in its own process
group, that never outlive the sweep:

- a stop signal (SIGINT, SIGTERM, SIGHUP: raised in the main thread by ``stop_on_signals``)
  stops them all at once: SIGTERM to each group (the harness child kills its torch-mlir-opt and
  exits), SIGKILL to what is left after :data:`STOP_GRACE_S`. Waiting for the running ports to
  end instead took their stage timeouts (122 s with ``--stage-timeout 40``).
- a sweep that dies without running Python code (SIGKILL, the OOM killer): process.py's
  watchdog, which guards torch-mlir-opt children the same way, learns each child's group and
  SIGKILLs it when the sweep's end of its pipe closes. A killed port's own watchdog then kills
  its torch-mlir-opt.

A child that ends because the sweep stopped leaves no failure record: :class:`SweepStopped` is
raised instead, so the next sweep ports that model again.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Any, Protocol

from harness.compiler.process import STOP_SIGNALS, signal_group, watchdog

#: How long the children get to exit after SIGTERM before SIGKILL: well inside the 15 s a
#: stopped sweep may take.
STOP_GRACE_S = 5.0


class Process(Protocol):
    """A child as the sweep uses it: a Popen, or a forked warm worker (:mod:`.warm`)."""

    pid: int

    def wait(self, timeout: float | None = None) -> int | None: ...

    def poll(self) -> int | None: ...


class SweepStopped(Exception):
    """Raised in a worker whose child ended because the sweep is stopping: nothing is recorded."""


class Children:
    """The running children; after :meth:`stop`, no new one starts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[Process] = set()
        self.stopping = False

    def start(self, argv: Sequence[str], spawn: Callable[[], Process] | None = None,
              **popen: Any) -> Process:
        """Popen in a new session (or ``spawn()``: a warm worker, in a session of its own too),
        its group known to the watchdog before anything can kill the sweep unnoticed;
        :class:`SweepStopped` once the sweep is stopping."""
        with self._lock:  # stop() sees every child started before it, and none after
            if self.stopping:
                raise SweepStopped(argv[0])
            watchdog.ready()
            if spawn is not None:
                process = spawn()
            else:
                env = watchdog.environment(popen.pop("env", None))
                process = subprocess.Popen(list(argv), start_new_session=True, env=env, **popen)
            watchdog.watch(process.pid)
            self._running.add(process)
        return process

    def finished(self, process: Process) -> None:
        with self._lock:
            self._running.discard(process)
        watchdog.forget(process.pid)

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM every running child's group, SIGKILL them after ``grace_s``; further stop
        signals are ignored meanwhile (a second Ctrl-C must not cut the cleanup short)."""
        with self._lock:
            self.stopping = True
            running = list(self._running)
        with _signals_ignored():
            stop_groups(running, grace_s)

    @contextmanager
    def stopped_on_exit(self, pool: Executor | None = None) -> Iterator[None]:
        """Stops every child when the block raises (a stop signal, an error), and cancels the
        ``pool``'s models not started yet. Inside the pool's ``with``: the pool's exit then
        waits only for workers whose child is gone."""
        with self._lock:
            self.stopping = False  # a run after a stopped one, in the same process
        try:
            yield
        except BaseException:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            self.stop()
            raise


def stop_groups(processes: Sequence[Process], grace_s: float) -> None:
    for process in processes:
        signal_group(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for process in processes:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for process in processes:  # the leader's children too, whether or not it exited
        signal_group(process.pid, signal.SIGKILL)


@contextmanager
def _signals_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


#: The one registry of a sweep process.
CHILDREN = Children()
