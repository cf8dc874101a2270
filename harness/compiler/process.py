"""Child processes that never outlive the harness: spawn, time out, and clean up on any exit.

Each torch-mlir-opt run gets its own session (process group), so a timeout or an interrupt can
kill the whole group: the binary and, behind a wrapper (the wheel's Python script, repro.sh),
its own children. Three ways out, each covered:

- a timeout or an exception in the harness (Ctrl-C's KeyboardInterrupt, and SIGTERM/SIGHUP once
  :func:`stop_on_signals` turns them into :class:`Terminated`): :func:`execute` kills the group;
- the harness dies without running Python code (SIGKILL, the OOM killer, a crash): one watchdog
  process per harness process holds the read end of a pipe and learns each group as it is
  spawned; when the pipe reaches end-of-file (the kernel closes it whatever killed the
  harness) it SIGKILLs the groups still listed, removes the staged outputs still listed
  (``remove_on_death``), then exits. A child is told of only after Popen returns, so a harness
  killed between the child's exec and that pipe write left it running (a CI run caught one):
  each child also carries the watchdog's token in its environment (:data:`WATCHDOG_ENV`), and
  at end-of-file the watchdog kills every process /proc shows with it, listed or not.

Why a watchdog and not PR_SET_PDEATHSIG:

- prctl must run in the child between fork and exec, i.e. in a ``preexec_fn``, which makes
  Popen fork() instead of vfork() (see ``_spawn`` below for what that costs);
- an exec wrapper that sets it (``setpriv --pdeathsig``) covers the direct child only, not a
  wrapper's children, and fires when the spawning *thread* exits, not the process;
- the watchdog costs one short-lived Python start per harness process (not per run), a pipe
  write per run, and works on any POSIX system. ``python tools/bench_spawn.py`` measures it.
"""

from __future__ import annotations

import os
import resource
import secrets
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from . import forked
from .capture import KEEP_BYTES, Capture

# How long a hung process gets to print its stack dump after SIGABRT before SIGKILL.
TIMEOUT_DUMP_GRACE_S = 10.0
# The signals that stop the harness: Ctrl-C, kill's default, a closed terminal.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: The environment variable each child carries, its value the token of the watchdog that
#: kills it if the harness dies: the child of a harness killed before it could tell its watchdog
#: of it (see the module docstring) is found by it in /proc.
WATCHDOG_ENV = "TORCH_MLIR_HARNESS_WATCHDOG"

_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass
class Finished:
    returncode: int | None
    stdout: str
    stderr: str
    elapsed_s: float
    timed_out: bool
    stdout_bytes: int = 0  # what the child wrote, kept or not (harness.compiler.capture)
    stderr_bytes: int = 0


# ---------------------------------------------------------------------------------------------
# Signals as exceptions

class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like Ctrl-C's KeyboardInterrupt so that every cleanup written
    for Ctrl-C (killing the child's group, removing partial output) runs for them too."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


_defer_depth = 0              # > 0 while a child is spawned but not yet known to its caller
_pending: int | None = None   # a stop signal that arrived meanwhile


def _raise_for(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def _on_stop_signal(signum: int, frame: object) -> None:
    global _pending
    if _defer_depth:
        _pending = signum
        return
    _raise_for(signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt / :class:`Terminated` in the main
    thread while inside; the previous handlers come back on the way out. Ignored signals stay
    ignored; outside the main thread (where Python cannot set handlers) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A signal the harness was started with ignored (nohup, a background job's SIGINT) stays so.
    previous = {s: signal.signal(s, _on_stop_signal) for s in STOP_SIGNALS
                if signal.getsignal(s) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """A stop signal that lands while Popen returns a child and the watchdog learns of it is
    raised right after, once the caller holds the child and can kill it."""
    global _defer_depth, _pending
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers run in the main thread: a spawn elsewhere cannot be interrupted
        return
    _defer_depth += 1
    try:
        yield
    finally:
        _defer_depth -= 1
        if not _defer_depth and _pending is not None:
            signum, _pending = _pending, None
            _raise_for(signum)


#: How often a main thread that waits on worker threads wakes to run a pending stop signal's
#: handler (:func:`map_interruptibly`).
SIGNAL_POLL_S = 0.25


def map_interruptibly(pool: Executor, fn: Callable[[_T], _R], items: Iterable[_T]) -> list[_R]:
    """``list(pool.map(fn, items))`` (results in the items' order), waiting with a timeout.

    Why: a stop signal sent to the process is delivered by the kernel to any thread that does
    not block it. When it lands on a worker thread (in ``waitpid``), Python's C handler only
    flags it; the main thread runs the handler at its next bytecode, and a main thread blocked
    in ``Future.result()`` (a lock wait without a timeout) does not get one until a worker
    finishes: a sweep given SIGTERM went on for minutes (a CI flake, 1 run in about 15 under
    load). Waiting in slices of :data:`SIGNAL_POLL_S` bounds that to a fraction of a second.
    Blocking the signals in the workers instead would hand the blocked mask to every child
    they spawn."""
    futures = [pool.submit(fn, item) for item in items]
    try:
        results = []
        for future in futures:  # in order, the first exception raised as pool.map raises it
            while not wait([future], timeout=SIGNAL_POLL_S).done:
                pass
            results.append(future.result())
        return results
    finally:
        for future in futures:  # those not started yet, on an exception or a stop signal
            future.cancel()


# ---------------------------------------------------------------------------------------------
# The watchdog

_WATCHDOG = r"""
import os, signal, sys
for s in (signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
mark = b"\0" + sys.argv[1].encode() + b"\0"
def marked():
    # Every process whose environment holds the mark (Linux's /proc; elsewhere none).
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open("/proc/" + entry + "/environ", "rb") as f:
                    if mark in b"\0" + f.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found
groups, files = set(), set()
with os.fdopen(0, "rb") as pipe:
    for line in pipe:
        kind, rest = line[:1], line[1:].strip()
        try:
            if kind == b"+" or kind == b"-":
                (groups.add if kind == b"+" else groups.discard)(int(rest))
            elif kind == b"f" or kind == b"k":
                (files.add if kind == b"f" else files.discard)(bytes.fromhex(rest.decode()))
        except ValueError:
            pass
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
for _ in range(2):  # twice: a wrapper may have started another child meanwhile
    for pid in marked():
        try:  # a child in a session of its own takes its group; never the harness's group
            os.killpg(pid, signal.SIGKILL) if os.getpgid(pid) == pid else os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
for path in files:
    try:
        os.unlink(path)
    except OSError:
        pass
"""


class _Watchdog:
    """The harness end of the watchdog: started on the first spawn, one per process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.fd: int | None = None
        self.pid = 0
        self.token = secrets.token_hex(8)

    def _start(self) -> int | None:
        """Starts the watchdog; the pipe's write end (``self.fd``), None when none started."""
        if self.pid:
            try:
                os.waitpid(self.pid, os.WNOHANG)  # reap a watchdog that died before
            except ChildProcessError:
                pass
        self.fd, self.pid = None, 0
        if not sys.executable:  # an embedded interpreter: no watchdog, execute() still cleans up
            return None
        read, write = os.pipe()
        try:
            self.pid = os.posix_spawn(
                sys.executable, [sys.executable, "-I", "-S", "-c", _WATCHDOG, self._mark()],
                # not a parent harness's token: its watchdog must not kill this one, which has
                # this harness's children to kill when this harness dies
                {k: v for k, v in os.environ.items() if k != WATCHDOG_ENV},
                file_actions=[(os.POSIX_SPAWN_DUP2, read, 0),
                              # not the harness's stdout/stderr: a reader of those would wait
                              # for the watchdog's end too
                              (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                              (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)],
                setsid=True)
        except (OSError, NotImplementedError):  # no posix_spawn setsid: execute() still cleans up
            os.close(write)
            return None
        finally:
            os.close(read)
        self.fd = write
        return write

    def _send(self, message: bytes, *, start: bool) -> None:
        with self.lock:
            if self.fd is None and start:
                self._start()
            if self.fd is None:
                return
            try:
                os.write(self.fd, message)
            except OSError:  # the watchdog was killed: start another and tell it
                os.close(self.fd)
                self.fd = None
                if start and (fd := self._start()) is not None:
                    os.write(fd, message)

    def ready(self) -> None:
        """Starts the watchdog before a spawn: the harness may be killed the moment the child
        exists, and a group the watchdog learns of only after a Python start is unguarded
        that long (the group is then told by one pipe write right after Popen returns)."""
        with self.lock:
            if self.fd is None:
                self._start()

    def watch(self, pgid: int) -> None:
        self._send(b"+%d\n" % pgid, start=True)

    def forget(self, pgid: int) -> None:
        self._send(b"-%d\n" % pgid, start=False)

    def remove_on_death(self, path: str | os.PathLike) -> None:
        """``path`` is removed if the harness dies before ``keep(path)``: a staged output
        (harness.compiler.irfile.StagedFile) a SIGKILL would otherwise leave beside the file."""
        self._send(b"f%s\n" % os.fsencode(os.path.abspath(path)).hex().encode(), start=True)

    def keep(self, path: str | os.PathLike) -> None:
        self._send(b"k%s\n" % os.fsencode(os.path.abspath(path)).hex().encode(), start=False)

    def _mark(self) -> str:
        return f"{WATCHDOG_ENV}={self.token}"

    def environment(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """``env`` (None: this process's) for a child to start, with this process's watchdog
        token: the watchdog kills it at the harness's death even if it was never told of it."""
        return {**(os.environ if env is None else env), WATCHDOG_ENV: self.token}

    def after_fork_in_child(self) -> None:
        """A forked child (a reduce verifier, a multiprocessing worker) starts its own."""
        if self.fd is not None:
            os.close(self.fd)
        self.lock = threading.Lock()
        self.fd, self.pid = None, 0
        self.token = secrets.token_hex(8)


watchdog = _Watchdog()
os.register_at_fork(after_in_child=watchdog.after_fork_in_child)


# ---------------------------------------------------------------------------------------------
# Spawning and waiting

def _child_limits(memory_limit_mb: int | None) -> Callable[[], None]:
    def setup() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_limit_mb:
            limit = memory_limit_mb * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return setup


def _spawn(cmd: Sequence[str], env: Mapping[str, str] | None,
           memory_limit_mb: int | None) -> subprocess.Popen | forked.ForkedProcess:
    """Popen in a new session, core dumps off (and the memory limit) in the child.

    A ``preexec_fn`` makes Popen fork() instead of vfork(), and fork() of a parent holding a
    model (the tests, ``harness opt``, a reduction started from Python) costs ~0.1 s per GB,
    per run. So the core limit is set right after exec with prlimit (a crash in the
    microseconds before would be the only one to dump core); an exact memory limit, asked for
    explicitly, still pays for the fork.
    """
    watchdog.ready()
    # A memory limit is for a fresh interpreter's address space, not for one holding torch.
    if not memory_limit_mb and forked.forkable(cmd):
        try:
            child = _fork(cmd, env)
        except OSError:  # could not fork, or the child could not set itself up: start it cold
            pass
        else:
            watchdog.watch(child.pid)
            return child
    exact = bool(memory_limit_mb) or not hasattr(resource, "prlimit")
    proc = subprocess.Popen(list(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=watchdog.environment(env),
                            start_new_session=True,
                            # Only setrlimit runs there (async-signal-safe enough).
                            preexec_fn=_child_limits(memory_limit_mb) if exact else None)  # noqa: PLW1509
    watchdog.watch(proc.pid)
    if not exact:
        try:
            resource.prlimit(proc.pid, resource.RLIMIT_CORE, (0, 0))
        except OSError:  # already gone, or not ours to limit: nothing to dump then
            pass
    return proc


def _fork(cmd: Sequence[str], env: Mapping[str, str] | None) -> forked.ForkedProcess:
    """``cmd`` forked from this warm process (harness.compiler.forked) with the pipes ``_spawn``
    gives a fresh child: stdin from /dev/null, stdout and stderr to the caller."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        child = forked.fork_module(cmd, {0: null, 1: out_w, 2: err_w}, env=env)
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        for fd in (null, out_w, err_w):
            os.close(fd)
    child.stdout, child.stderr = os.fdopen(out_r, "rb"), os.fdopen(err_r, "rb")
    return child


def signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def execute(cmd: Sequence[str], *, timeout_s: float, env: Mapping[str, str] | None = None,
            memory_limit_mb: int | None = None, dump_on_timeout: bool = True,
            keep_bytes: int = KEEP_BYTES) -> Finished:
    """Runs ``cmd`` in its own session and waits at most ``timeout_s``; then SIGABRT (for the
    stack, when ``dump_on_timeout``) and SIGKILL the group. Any exception while it runs
    (KeyboardInterrupt, :class:`Terminated`) kills the group before it propagates. ``OSError``
    if ``cmd`` cannot be started.

    The whole call takes at most ``timeout_s`` + ``TIMEOUT_DUMP_GRACE_S`` + ``DRAIN_GRACE_S``
    (and the time SIGKILL takes): the pipes are read while the group lives, and for
    ``DRAIN_GRACE_S`` after, never until a process outside it (a ``setsid``'d grandchild that
    kept stdout) closes them. Each stream is kept in bounded memory: its first and last
    ``keep_bytes`` (harness.compiler.capture)."""
    start = time.monotonic()
    proc: subprocess.Popen | forked.ForkedProcess | None = None
    run: _Reading | None = None
    try:
        with _signals_deferred():
            proc = _spawn(cmd, env, memory_limit_mb)
        run = _Reading(proc, keep_bytes)
        timed_out = not run.until(start + timeout_s)
        elapsed = time.monotonic() - start
        if timed_out and dump_on_timeout:
            # The leader is not reaped yet, so the group id still names our processes only.
            signal_group(proc.pid, signal.SIGABRT)
            run.until(time.monotonic() + TIMEOUT_DUMP_GRACE_S)
        if run.exited is None:
            signal_group(proc.pid, signal.SIGKILL)
            run.until(None)
        if not timed_out:
            elapsed = time.monotonic() - start
        proc.wait()
        return Finished(proc.returncode, run.out.text(), run.err.text(), elapsed, timed_out,
                        stdout_bytes=run.out.total, stderr_bytes=run.err.total)
    except BaseException:
        if proc is not None:
            signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
        raise
    finally:
        if run is not None:
            run.close()
        if proc is not None:
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
            watchdog.forget(proc.pid)


# How long the pipes are still read once the group is gone (what is in them is read at once;
# only a process that left the group can keep them open longer).
DRAIN_GRACE_S = 1.0
_POLL_S = 0.05  # how often the leader is checked for where a pidfd cannot say when it exits


class _Reading:
    """A child's two pipes read into bounded captures while it runs.

    The leader's exit is seen without reaping it (``waitid(WNOWAIT)``), so its pid, and with it
    the group id, stays ours while what is left of the group is killed: once the leader is
    gone the run is over, and a straggler would otherwise hold the pipes (and outlive us)."""

    def __init__(self, proc: subprocess.Popen | forked.ForkedProcess, keep_bytes: int):
        self.proc = proc
        self.out, self.err = Capture("stdout", keep_bytes), Capture("stderr", keep_bytes)
        self.exited: float | None = None  # monotonic time the leader was seen to exit
        self.selector = selectors.DefaultSelector()
        for pipe, capture in ((proc.stdout, self.out), (proc.stderr, self.err)):
            assert pipe is not None
            os.set_blocking(pipe.fileno(), False)
            self.selector.register(pipe.fileno(), selectors.EVENT_READ, capture)
        self.pidfd: int | None = None
        try:
            self.pidfd = os.pidfd_open(proc.pid)
            self.selector.register(self.pidfd, selectors.EVENT_READ, None)
        except (AttributeError, OSError):  # no pidfd (not Linux >= 5.3): poll the leader
            self.pidfd = None

    def until(self, deadline: float | None) -> bool:
        """Reads until the leader has exited and the pipes are closed or drained (True), or
        until ``deadline`` passes with the leader still running (False)."""
        while True:
            if self.exited is None and self._leader_exited():
                self.exited = time.monotonic()
                signal_group(self.proc.pid, signal.SIGKILL)  # what is left of the group
                if self.pidfd is not None:
                    self.selector.unregister(self.pidfd)  # readable from now on
            now = time.monotonic()
            if self.exited is not None and \
                    (not self._pipes_open() or now >= self.exited + DRAIN_GRACE_S):
                return True
            if self.exited is None and deadline is not None and now >= deadline:
                return False
            drained = None if self.exited is None else self.exited + DRAIN_GRACE_S
            limits = [t for t in (deadline, drained) if t is not None]
            wait = min([t - now for t in limits], default=None)
            if self.pidfd is None and self.exited is None:
                wait = _POLL_S if wait is None else min(wait, _POLL_S)
            for key, _ in self.selector.select(None if wait is None else max(wait, 0)):
                if key.data is not None:
                    self._read(key.fd, key.data)

    def _leader_exited(self) -> bool:
        try:
            return os.waitid(os.P_PID, self.proc.pid,
                             os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:  # reaped elsewhere
            return True

    def _pipes_open(self) -> bool:
        return any(key.data is not None for key in self.selector.get_map().values())

    def _read(self, fd: int, capture: Capture) -> None:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if data:
            capture.add(data)
        else:
            self.selector.unregister(fd)

    def close(self) -> None:
        """Stops reading (the pipes' ends are closed by ``execute``); twice is once."""
        self.selector.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
