"""Stages on the terminal as they run, with their times; nothing when output is not a terminal.

Also the time limit of the stages that run in this process (trace, export, import): a
subprocess gets its timeout from the runner, Python code gets ``SIGALRM``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import NoReturn, TextIO


class StageTimeout(BaseException):
    """Raised into a stage running in this process when its time is up. A BaseException, so
    the libraries' own ``except Exception`` cannot swallow it."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        super().__init__(f"timed out after {seconds:g} s")


def process_age() -> float:
    """Seconds since this process started, read from ``/proc`` (0.0 where it cannot be read).

    A port's own clock starts when the port does, after the imports of torch, transformers and
    torch-mlir: 20-30 s on a cold 2-core machine, which a user waits for too; the record keeps
    it apart (``startup_seconds``) so that neither figure hides the other. A sweep's forked
    child started at its fork, so its start-up is its share, not the server's imports."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            started = int(stat.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
            return max(0.0, float(uptime.read().split()[0]) - started)
    except (OSError, ValueError, IndexError):
        return 0.0


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`StageTimeout` in this block after ``seconds`` (main thread only: elsewhere,
    and for ``None`` or 0, the block is unbounded)."""
    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> NoReturn:
        raise StageTimeout(seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Step:
    """One running stage: the caller marks it failed; ``seconds`` is set when it ends."""

    label: str
    ok: bool = True
    status: str = ""     # shown instead of ok/FAILED when set (e.g. "skipped", "mismatch")
    seconds: float = 0.0


class Progress:
    """Writes ``label ...`` when a stage starts and ``label ok 1.23 s`` when it ends, rewriting
    the line in place on a terminal. Disabled (silent) when the stream is not a terminal."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self._open = ""

    def note(self, text: str) -> None:
        if self.enabled:
            self._close_line()
            self.stream.write(text + "\n")
            self.stream.flush()

    def start(self, label: str) -> float:
        if self.enabled:
            self._close_line()
            self.stream.write(f"  {label} ...")
            self.stream.flush()
            self._open = label
        return time.monotonic()

    def finish(self, label: str, seconds: float, status: str) -> None:
        if not self.enabled:
            return
        line = f"  {label} {status} {seconds:.2f} s"
        if self._open == label:
            self.stream.write("\r" + line + "\x1b[K\n")
        else:
            self._close_line()
            self.stream.write(line + "\n")
        self._open = ""
        self.stream.flush()

    def _close_line(self) -> None:
        if self._open:
            self.stream.write("\n")
            self._open = ""

    @contextmanager
    def stage(self, label: str) -> Iterator[Step]:
        """Time a stage; the caller sets ``step.ok`` (an exception marks it failed)."""
        step = Step(label)
        start = self.start(label)
        try:
            yield step
        except BaseException:
            step.ok = False
            raise
        finally:
            step.seconds = time.monotonic() - start
            self.finish(label, step.seconds, step.status or ("ok" if step.ok else "FAILED"))


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


QUIET = Progress(enabled=False)
