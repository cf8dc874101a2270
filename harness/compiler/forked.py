"""Warm steps: a ``python -m MODULE ARGS`` child forked from this process instead of started as
a fresh interpreter, when this process already imported what the child would import again.

A port forked from the sweep's warm server (harness/sweep/warm.py) has torch and torch_mlir
imported; its RefBackend steps (``harness.execute.bindings_tool``: linalg -> LLVM on the
bindings; ``harness.execute.jit_child``: the compiled code on one input set; the
``harness.execute.worker``) each started a fresh Python that imported torch_mlir and numpy
again: a RefBackend run of a one-op program took 1.4 s that way and 0.45-0.7 s forked (its
lowering 0.63 s against 0.11 s), six such steps a port. Forked, a step starts in milliseconds.

- **Off unless asked** (:func:`enable`, which the warm server's children call): a cold
  ``harness port`` keeps today's fresh interpreters, so cold and warm stay comparable, and any
  failure to fork falls back to them.
- **Only the modules** :func:`enable` names (the backends' steps written to run as a child), and only when the
  command is this interpreter's own ``-m`` run and no memory limit is asked for (that limit is
  for a fresh interpreter's address space, not one that holds torch).
- **Isolation as a fresh child has it**: a session of its own (a timeout kills its group), core
  dumps off, ``PR_SET_PDEATHSIG`` (SIGKILL when the thread that forked it exits, i.e. when its
  caller is gone: that thread waits for the child), the caller's watchdog told of its group;
  the signal handlers Python starts with; only fds 0-2 (and the ones asked for) stay open; its
  environment is the one the command would get. The compiled code and the passes run in the
  child only: a crash, an ``abort()`` or a hang ends the child, and the caller reads its status
  as a fresh child's (``-N`` for signal N).
- **Exit as Python exits** (the module's exit status; threads joined, its own atexit functions,
  streams flushed) but without finalizing the interpreter: the caller's objects are not its to
  collect (``gc.freeze`` at once, and ``os._exit`` at the end).
"""

from __future__ import annotations

import ctypes
import fcntl
import gc
import io
import os
import resource
import signal
import sys
import threading
import warnings
from collections.abc import Mapping, Sequence
from typing import NoReturn

#: A forked child's exit when it could not set itself up (before the module ran).
EXIT_SETUP = 70
_PR_SET_PDEATHSIG = 1


class _Steps:
    """Whether (and which) steps fork: off until :func:`enable`."""

    def __init__(self) -> None:
        self.modules: frozenset[str] = frozenset()
        self.forks = 0  # steps forked so far (for the tests and the benchmarks)


_STEPS = _Steps()


def enable(modules: frozenset[str]) -> None:
    """Forks the children of ``modules`` from now on (the warm server's children call it with
    the backends' child modules, ``harness.execute.backends.child_modules()``; ``frozenset()``
    turns it off). ``HARNESS_FORK_STEPS=0`` in the environment keeps them cold."""
    _STEPS.modules = frozenset() if os.environ.get("HARNESS_FORK_STEPS") == "0" else modules


def enabled() -> frozenset[str]:
    return _STEPS.modules


def forks() -> int:
    """How many children this process forked."""
    return _STEPS.forks


def forkable(cmd: Sequence[str]) -> str | None:
    """The module of ``cmd`` when it may be forked (``[sys.executable, -m, MODULE, ...]`` of an
    enabled module), else None."""
    if len(cmd) >= 3 and cmd[1] == "-m" and cmd[2] in _STEPS.modules and sys.executable \
            and os.path.realpath(cmd[0]) == os.path.realpath(sys.executable):
        return cmd[2]
    return None


class ForkedProcess:
    """A forked child as callers use a Popen: ``pid`` (its group), ``stdin``/``stdout``/
    ``stderr`` (the parent's ends of the pipes asked for), ``wait(timeout)``, ``poll()``,
    ``returncode``, ``args``."""

    def __init__(self, args: Sequence[str], pid: int):
        self.args = list(args)
        self.pid = pid
        self.returncode: int | None = None
        self.stdin: io.BufferedWriter | None = None
        self.stdout: io.BufferedReader | None = None
        self.stderr: io.BufferedReader | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is not None:
            import subprocess
            import time

            deadline = time.monotonic() + timeout
            while self.poll() is None:
                if time.monotonic() >= deadline:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                time.sleep(0.01)
        while self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped elsewhere: nothing more to learn
                self.returncode = -signal.SIGKILL
                break
            except InterruptedError:
                continue
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def fork_module(cmd: Sequence[str], fds: Mapping[int, int], *,
                env: Mapping[str, str] | None) -> ForkedProcess:
    """Forks ``cmd`` (``python -m MODULE ARGS``, see :func:`forkable`) with ``fds`` (the child's
    fd -> the parent's fd to give it there; 0, 1 and 2 must be among them) and returns once the
    child is in its own session. ``OSError`` when it could not be forked or set up: start it
    cold then."""
    module, args = cmd[2], list(cmd[3:])
    parent = os.getpid()
    ready_r, ready_w = os.pipe()
    for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    _libc().fflush(None)
    try:
        with warnings.catch_warnings():  # "this process is multi-threaded": see the docstring
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        os.close(ready_r)
        os.close(ready_w)
        raise
    if pid == 0:
        os.close(ready_r)
        _child(module, args, fds, env, parent, ready_w)
    os.close(ready_w)
    try:
        with os.fdopen(ready_r, "rb") as ready:
            said = ready.read()  # end of file once the child is set up (or gone)
    except BaseException:
        _kill(pid)
        raise
    if said:
        _kill(pid)
        raise OSError(f"the forked {module} could not set itself up: {said.decode(errors='replace')}")
    _STEPS.forks += 1
    return ForkedProcess(cmd, pid)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _child(module: str, args: list[str], fds: Mapping[int, int], env: Mapping[str, str] | None,
           parent: int, ready: int) -> NoReturn:
    """In the forked child: set up as a fresh ``python -m`` child would be, run, exit."""
    try:
        gc.freeze()  # the caller's objects: never this child's to collect (or copy)
        os.setsid()
        if _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError("prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:  # the caller is already gone
            os._exit(EXIT_SETUP)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGALRM):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        ready = _install_fds(fds, ready)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        import atexit

        atexit._clear()  # the caller's exit functions are not this child's
        _fresh_stdio()
        os.close(ready)  # set up: the caller may go on
    except BaseException as e:  # never fall back into the caller's code
        try:
            os.write(ready, f"{type(e).__name__}: {e}".encode() or b"?")
        finally:
            os._exit(EXIT_SETUP)
    run_module_and_exit(module, args)


def _install_fds(fds: Mapping[int, int], ready: int) -> int:
    """The child's fds as ``fds`` says (child fd -> parent fd), every other fd above 2 closed
    but the ready pipe's, whose new number is returned. The copies go above every fd named
    first, so no move overwrites another's source."""
    floor = max([*fds, *fds.values(), ready, 2]) + 1
    moved = {target: fcntl.fcntl(source, fcntl.F_DUPFD, floor) for target, source in fds.items()}
    ready = fcntl.fcntl(ready, fcntl.F_DUPFD, floor)
    for target, copy in moved.items():
        os.dup2(copy, target)
    low = 3
    for fd in sorted({*fds, ready}):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, max(low, _fd_limit()))
    return ready


def _fd_limit() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if 0 < soft < 1 << 20 else 1 << 16


def _fresh_stdio() -> None:
    """Python's streams on fds 0-2: stdout buffered (as a fresh Python's is on a pipe; flushed at
    exit), stderr written through."""
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
                                  encoding="utf-8", errors="strict")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", write_through=True)


def run_module_and_exit(module: str, args: Sequence[str]) -> NoReturn:
    """``python -m module *args`` in this (forked) process, ended as Python ends a process (its
    exit status, threads joined, atexit, streams flushed) but without finalizing the
    interpreter: that collects every object the warm parent imported, touching (so copying)
    its whole heap, which took over 10 s a child. The warm sweep's children end this way too."""
    import runpy
    import traceback

    code = 0
    try:
        # The caller imported the harness's packages already; -m in a fresh Python did not.
        warnings.filterwarnings("ignore", message=".*found in sys.modules after import of package",
                                category=RuntimeWarning)
        sys.argv = [module, *args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = _exit_code(e.code)
    except KeyboardInterrupt:  # as Python ends on one: by SIGINT
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 1
    except BaseException:  # as an uncaught exception ends Python: traceback, 1
        traceback.print_exc()
        code = 1
    try:
        import atexit

        for thread in threading.enumerate():
            if thread is not threading.current_thread() and not thread.daemon:
                thread.join()
        atexit._run_exitfuncs()
        _flush()
    finally:
        os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    _libc().fflush(None)


def _exit_code(code: object) -> int:
    """``SystemExit(code)``'s exit status, as Python gives it (a message: printed, 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
