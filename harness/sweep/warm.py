"""Warm workers: one process imports torch, transformers, torch_mlir and the harness once, then
forks a child per ``python -m MODULE ARGS`` the sweep would have started (``harness port``,
``harness check``). Each cold start paid those imports again
(5-7 s of a 15-25 s port).

- **The server** (``python -m harness.sweep.warm --fd N``) is started by the sweep, in its own
  session, its group known to the sweep's watchdog. It only imports (:data:`PRELOAD`) and
  does the work of :data:`WARM_UP` (tables, and LLVM's code generation warmed on a small MLIR
  program compiled but not run; no torch op runs there, so no intra-op thread pool
  exists to be broken by fork; the one extra thread is OpenBLAS's, which handles fork itself),
  then forks on request. It never runs model code:
  the job runs in the child, after the fork. It talks over one ``SOCK_SEQPACKET`` socket: a
  request is a JSON message with the child's stdout and stderr as passed descriptors (the
  sweep opens its log files as before); replies say ``started`` (the pid) and ``exited`` (the
  exit code, ``-N`` for signal N).
- **A child** is a session of its own (a timeout kills its group: the port and its
  torch-mlir-opt); it asks the kernel for SIGKILL when the server dies
  (``PR_SET_PDEATHSIG``; the server is single-threaded, so "the thread that forked" is the
  process), then runs the module as ``python -m`` does (``runpy``) and ends the way a Python
  process ends: its exit status is the cold path's.
- **Crash isolation**: a crash or a hang ends the child only; the sweep kills a child's group
  on its timeout, as it does a cold one (:func:`~.runner.run_logged` gets a process-like
  :class:`WarmProcess`). The server exits, killing its children, when the sweep's end of the
  socket closes (the sweep returned, or died: the kernel closes it), and its children die with
  it (``PR_SET_PDEATHSIG``). The sweep's watchdog also learns each child's group, so a SIGKILLed
  sweep takes them whichever goes first.
- A server that cannot start (its imports fail) or dies is reported on the sweep's progress
  and the remaining models start cold: slower, same records.
"""

from __future__ import annotations

import ctypes
import gc
import itertools
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from harness.compiler.irfile import open_fresh
from harness.compiler.process import signal_group, watchdog

MODULE = "harness.sweep.warm"
#: What the server imports before it forks: what every port (and check) would import again.
PRELOAD = ("numpy", "torch", "transformers", "transformers.models.auto.modeling_auto",
           "transformers.models.auto.configuration_auto", "torch_mlir.ir",
           "torch_mlir.passmanager", "torch_mlir.execution_engine",
           "torch_mlir.extras.fx_importer", "harness.cli", "harness.commands.models",
           "harness.port.model", "harness.port.frontend", "harness.port.lowering",
           "harness.port.verify", "harness.execute.backends",
           "harness.frontends.fx", "harness.frontends.torchscript", "harness.models.generic",
           "harness.execute.refbackend", "harness.execute.check",
           # what every port imported next (416 modules, 0.7 s on a quiet machine): torch.export's
           # tracer (with networkx and sympy's parts), the FX importer, the linalg dialect
           "torch.export._trace", "torch_mlir.fx", "torch_mlir.dialects.linalg",
           "harness.models.drivers", "harness.port.render", "harness.fixes.loop",
           "harness.diagnose.blockers")
#: Work every port would do the same, done once in the server (no torch op runs, no thread
#: starts): tables built on first use, pure Python over the op registry (the FX importer's
#: decomposition table, ``functools.cache``, took 0.5 s a port on a quiet machine, 2 s under
#: load), and LLVM's code generation warmed for the RefBackend's execution children (0.035 s
#: each, two a port).
WARM_UP = (("torch_mlir.extras.fx_decomp_util", "get_decomposition_table"),
           ("harness.compiler.pipelines", "default"),
           ("harness.execute.refbackend", "warm_up"))
#: How long the server may take to import PRELOAD (5-12 s on a quiet 2-core machine).
READY_TIMEOUT_S = 180.0
#: How long a fork may take to be reported (milliseconds when the server is well).
START_TIMEOUT_S = 60.0
_MESSAGE_BYTES = 1 << 20
#: Room in the server's command line for each child's own (:func:`_retitle`).
TITLE_ROOM = 2048
_PR_SET_PDEATHSIG = 1
#: A child's exit when it could not set itself up (before the module ran).
EXIT_SETUP = 70


class WarmUnavailable(Exception):
    """The server is not there (it could not start, or it died): start the child cold."""


# ---------------------------------------------------------------------------------------------
# The server and its children (python -m harness.sweep.warm --fd N)

@dataclass(frozen=True)
class Job:
    """What a forked child runs: ``python -m module *args``."""

    module: str
    args: tuple[str, ...]

    def run(self) -> NoReturn:
        """As ``python -m`` would, and the process ends with it (SystemExit and exceptions end
        it as they would there); its RefBackend steps fork from it too (torch_mlir is imported)."""
        from harness.compiler import forked
        from harness.execute.backends import child_modules

        forked.enable(child_modules())
        forked.run_module_and_exit(self.module, self.args)


def serve(fd: int) -> Job | None:
    """The server's loop; returns None when the sweep is gone (in the server), a :class:`Job`
    in a forked child (which runs it and exits as a Python process does)."""
    for signum in (signal.SIGINT, signal.SIGHUP):  # the sweep stops the children itself
        signal.signal(signum, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    if not _preload(sock):
        return None
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ, None)
    running: dict[int, tuple[int, int | None]] = {}  # pid -> (request id, pidfd)
    while True:
        poll = None if all(pidfd is not None for _, pidfd in running.values()) else 0.1
        for key, _ in selector.select(poll):
            if key.data is not None:
                continue  # a pidfd: reaped below
            try:
                message, fds, _, _ = socket.recv_fds(sock, _MESSAGE_BYTES, 2)
            except OSError:
                message, fds = b"", []
            if not message:  # the sweep is gone (or done): its children go too
                for fd_ in fds:
                    os.close(fd_)
                _kill_all(running)
                return None
            request = json.loads(message)
            pid = _fork(request, fds)
            if pid == 0:  # the child: leave the server's loop and objects behind
                selector.close()
                sock.close()
                for _, pidfd in running.values():
                    if pidfd is not None:
                        os.close(pidfd)
                return Job(str(request["module"]), tuple(request["args"]))
            for fd_ in fds:
                os.close(fd_)
            _started(sock, selector, running, request["id"], pid)
        _reap(sock, selector, running)


def _preload(sock: socket.socket) -> bool:
    """:data:`PRELOAD` imported and frozen, then "ready" sent; "failed" (and False) when an
    import fails."""
    start = time.monotonic()
    name = ""
    try:
        from harness.execute.backends import child_modules

        # and each backend's child steps (the RefBackend's), which the children fork into
        for name in (*PRELOAD, *sorted(child_modules())):
            __import__(name)
    except BaseException as e:  # any failure means: go cold, and say why
        _send(sock, {"kind": "failed", "error": f"importing {name}: {type(e).__name__}: {e}"})
        return False
    for module, function in WARM_UP:
        try:
            getattr(__import__(module, fromlist=[function]), function)()
        except Exception:  # the children build it themselves then
            pass
    gc.freeze()  # the imported objects: no child's collection touches (so copies) them
    threads = sorted(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else []
    _send(sock, {"kind": "ready", "pid": os.getpid(), "seconds": round(time.monotonic() - start, 2),
                 "threads": len(threads) or threading.active_count()})
    return True


def _started(sock: socket.socket, selector: selectors.BaseSelector,
             running: dict[int, tuple[int, int | None]], request_id: int, pid: int) -> None:
    """In the server, after a fork: the child watched (its pidfd where there is one) and
    "started" sent, or "exited" when the fork failed (``pid`` < 0)."""
    if pid < 0:
        _send(sock, {"kind": "exited", "id": request_id, "pid": 0, "code": None,
                     "error": "fork failed"})
        return
    pidfd = _pidfd(pid)
    if pidfd is not None:
        selector.register(pidfd, selectors.EVENT_READ, pid)
    running[pid] = (request_id, pidfd)
    _send(sock, {"kind": "started", "id": request_id, "pid": pid})


def _fork(request: Mapping, fds: Sequence[int]) -> int:
    """The child's pid (0 in the child, set up to run the job; -1 when fork failed)."""
    server = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        return -1
    if pid:
        return pid
    try:
        os.setsid()
        _die_with(server)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        out, err = [*fds, 2, 2][:2]
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd_ in set(fds):
            if fd_ > 2:
                os.close(fd_)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _fresh_stdio()
        _retitle([request.get("python", sys.executable), "-m", request["module"], *request["args"]])
        return 0
    except BaseException:  # never fall back into the server's code
        os._exit(EXIT_SETUP)


def _die_with(server: int) -> None:
    """SIGKILL this process when the server dies; if it already has, now."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        os._exit(EXIT_SETUP)
    if os.getppid() != server:
        os._exit(EXIT_SETUP)


def _retitle(argv: Sequence[str]) -> None:
    """Shows the child's own command in ``ps`` and ``/proc/PID/cmdline`` (the sweep's tests and
    its users find a port by its command line): written over the server's argument strings,
    which hold :data:`TITLE_ROOM` bytes of room for it (a longer command is cut there). Python
    keeps its own copy of argv, so nothing reads that memory after start-up."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (stat fields 48, 49)
    except (OSError, IndexError, ValueError):
        return
    title = b"\0".join(os.fsencode(a) for a in argv)[:end - start - 1]
    ctypes.memmove(start, title + b"\0" * (end - start - len(title)), end - start)


def _fresh_stdio() -> None:
    """Python's streams on the new fds 1 and 2, unbuffered as the cold path's
    ``PYTHONUNBUFFERED=1`` has them."""
    import io

    for name, fd_, errors in (("stdout", 1, "strict"), ("stderr", 2, "backslashreplace")):
        old = getattr(sys, name)
        stream = io.TextIOWrapper(io.FileIO(fd_, "w", closefd=False),
                                  encoding=getattr(old, "encoding", None) or "utf-8",
                                  errors=errors, write_through=True)
        setattr(sys, name, stream)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux >= 5.3: polled instead
        return None


def _reap(sock: socket.socket, selector: selectors.BaseSelector,
          running: dict[int, tuple[int, int | None]]) -> None:
    for pid in list(running):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if not done:
            continue
        request_id, pidfd = running.pop(pid)
        if pidfd is not None:
            selector.unregister(pidfd)
            os.close(pidfd)
        _send(sock, {"kind": "exited", "id": request_id, "pid": pid,
                     "code": os.waitstatus_to_exitcode(status)})


def _kill_all(running: Mapping[int, tuple[int, int | None]]) -> None:
    for pid in running:
        signal_group(pid, signal.SIGKILL)
    for pid in running:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def _send(sock: socket.socket, message: dict) -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:  # the sweep is gone: the loop sees the end of the socket
        pass


# ---------------------------------------------------------------------------------------------
# The sweep's end

class WarmProcess:
    """A forked child as :func:`~.runner.run_logged` and :mod:`.children` use a Popen: ``pid``
    (its group), ``wait(timeout)`` raising ``subprocess.TimeoutExpired``, ``poll()``,
    ``returncode``."""

    def __init__(self, args: Sequence[str]):
        self.args = list(args)
        self.pid = 0
        self.returncode: int | None = None
        self.error = ""
        self._started = threading.Event()
        self._done = threading.Event()

    def wait(self, timeout: float | None = None) -> int | None:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode if self._done.is_set() else None

    def _exited(self, code: int | None, error: str = "") -> None:
        self.returncode, self.error = code, error
        self._started.set()
        self._done.set()


class WarmServer:
    """One server process and the thread that reads its replies."""

    def __init__(self, python: str, cwd: str | None, log: Path | None = None,
                 env: Mapping[str, str] | None = None):
        self.python = python
        self.cwd = cwd
        self.log = log
        self.env = dict(env or {})     # added to the server's environment (read by its imports)
        self.failure = ""             # why the server is not there, once it is not
        self.ready_seconds = 0.0      # its imports' time
        self.threads = 0              # its threads when ready (1, or 2 with OpenBLAS's pool)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, WarmProcess] = {}
        self._ready = threading.Event()
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        return self._proc.pid if self._proc is not None else 0

    def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        if self.log:
            self.log.parent.mkdir(parents=True, exist_ok=True)
        out = open_fresh(self.log, "ab") if self.log else open(os.devnull, "wb")  # noqa: SIM115
        try:
            watchdog.ready()
            self._proc = subprocess.Popen(
                [self.python, "-m", MODULE, "--fd", str(theirs.fileno()), "--room", " " * TITLE_ROOM],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=self.cwd,
                start_new_session=True, env=watchdog.environment({**os.environ, **self.env}))
            watchdog.watch(self._proc.pid)
        finally:
            theirs.close()
            out.close()
        self._sock = ours
        threading.Thread(target=self._read, args=(ours,), name="warm-server-replies",
                         daemon=True).start()

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> bool:
        """Whether the server imported PRELOAD (``failure`` says why not)."""
        if not self._ready.wait(timeout_s) and not self.failure:
            self.failure = f"the warm server did not finish its imports in {timeout_s:g} s"
            self.close()
        return not self.failure

    def spawn(self, argv: Sequence[str], stdout: int, stderr: int, cwd: str | None,
              env: Mapping[str, str]) -> WarmProcess:
        """Forks ``argv`` (``PYTHON -m MODULE ARGS``) with these output descriptors; the child
        is started when this returns. :class:`WarmUnavailable` when the server is not there."""
        if not self.wait_ready():
            raise WarmUnavailable(self.failure)
        process = WarmProcess(argv)
        with self._lock:
            if self._sock is None or self.failure:
                raise WarmUnavailable(self.failure or "the warm server is closed")
            request_id = next(self._ids)
            request = {"id": request_id, "python": argv[0], "module": argv[2], "args": list(argv[3:]),
                       "cwd": os.path.abspath(cwd or os.getcwd()), "env": dict(env)}
            self._pending[request_id] = process
            try:
                socket.send_fds(self._sock, [json.dumps(request).encode()], [stdout, stderr])
            except OSError as e:
                self._pending.pop(request_id, None)
                raise WarmUnavailable(f"the warm server is gone ({e})") from None
        if not process._started.wait(START_TIMEOUT_S) or not process.pid:
            raise WarmUnavailable(process.error or self._failure_or("the warm server did not fork"))
        return process

    def _failure_or(self, default: str) -> str:
        """``failure`` read afresh: the reader thread may have set it since it was checked."""
        return self.failure or default

    def takes(self, argv: Sequence[str]) -> bool:
        """Whether ``argv`` is a ``-m`` run of this server's Python."""
        return len(argv) >= 3 and argv[0] == self.python and argv[1] == "-m"

    def _read(self, sock: socket.socket) -> None:
        while True:
            try:
                data = sock.recv(_MESSAGE_BYTES)
            except OSError:
                data = b""
            if not data:
                break
            message = json.loads(data)
            kind = message.get("kind")
            if kind == "ready":
                self.ready_seconds, self.threads = message["seconds"], message["threads"]
                self._ready.set()
            elif kind == "failed":
                self.failure = f"the warm server could not start: {message['error']}"
                self._ready.set()
            elif kind == "started":
                process = self._pending.get(message["id"])
                if process is not None:
                    process.pid = message["pid"]
                    watchdog.watch(process.pid)
                    process._started.set()
            elif kind == "exited":
                with self._lock:
                    process = self._pending.pop(message["id"], None)
                if process is not None:
                    process._exited(message["code"], message.get("error", ""))
        # The server is gone: its children were killed with it.
        self.failure = self.failure or "the warm server exited"
        self._ready.set()
        with self._lock:
            left, self._pending = list(self._pending.values()), {}
        for process in left:
            process._exited(-signal.SIGKILL, self.failure)

    def close(self, timeout_s: float = 3.0) -> None:
        """Ends the server (it kills what children it still has); twice is once. A caller
        still waiting for its imports goes cold at once."""
        with self._lock:
            sock, self._sock = self._sock, None
            self.failure = self.failure or "the warm server is closed"
        self._ready.set()
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        if self._proc is not None:
            try:
                self._proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                signal_group(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
            watchdog.forget(self._proc.pid)


class Warm:
    """The sweep's warm server while one serves (:meth:`serving`), for :func:`~.runner.run_logged`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.server: WarmServer | None = None
        self._said = False
        self._say: Callable[[str], None] | None = None

    @contextmanager
    def serving(self, python: str, cwd: str | None, log: Path | None = None,
                say: Callable[[str], None] | None = None,
                env: Mapping[str, str] | None = None) -> Iterator[WarmServer | None]:
        """A server for the block (its imports overlap the first models' queueing), ``env``
        added to its environment (the thread pools' sizes: its children inherit the pools it
        sized at import); nested blocks share the outer one."""
        with self._lock:
            if self.server is not None:
                outer = self.server
            else:
                outer = None
                self.server = WarmServer(python, cwd, log, env)
                self.server.start()
                self._said = False
                self._say = say
        if outer is not None:
            yield outer
            return
        try:
            yield self.server
        finally:
            with self._lock:
                server, self.server = self.server, None
            if server is not None:
                server.close()

    def keep(self, python: str, cwd: str | None, log: Path | None = None) -> WarmServer:
        """A server for this process's life (a Dask worker's), started on first use and again
        after it died."""
        with self._lock:
            if self.server is None or (self.server.failure and self.server.ready_seconds):
                self.server = WarmServer(python, cwd, log)
                self.server.start()
                self._say = None
            return self.server

    def for_argv(self, argv: Sequence[str]) -> WarmServer | None:
        server = self.server
        return server if server is not None and server.takes(argv) else None

    def unavailable(self, server: WarmServer, why: str) -> None:
        """Says once that the models start cold from here on."""
        with self._lock:
            said, self._said = self._said, True
        if said:
            return
        line = f"warm workers unavailable ({why}); the models start cold from here"
        if server.log is not None:
            with open_fresh(server.log, "a", encoding="utf-8") as log:
                log.write(f"harness sweep: {line}\n")
        if self._say is not None:
            self._say(line)


#: The one registry of a sweep process.
WARM = Warm()


def _main(argv: Sequence[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    parser.add_argument("--fd", type=int, required=True, help="the sweep's socket (SOCK_SEQPACKET)")
    parser.add_argument("--room", default="", help="spaces: room for each child's command line")
    job = serve(parser.parse_args(argv).fd)
    if job is None:
        return 0
    job.run()


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
