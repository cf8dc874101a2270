"""One sweep at a time in a sweep folder. Two sweeps writing one ``--out`` overwrite each
other's logs and leave ports no record points to; so a sweep holds an ``flock`` on
``DIR/.sweep.lock`` while it runs, and a second one stops at once, naming the holder.

- ``flock``, not a pid file: the kernel drops the lock whatever ends the holder (SIGKILL
  included), so there is never a stale lock to remove by hand; the file's text (pid, host,
  start, command) only says who holds it.
- Shards (``--shard I/N``) each write their own ``--out``, and ``--merge`` writes only its
  ``--out``: neither needs two sweeps in one folder.
- Taking the lock is also where an unusable ``--out`` (a file, a read-only folder) is told, before
  any model runs.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.compiler import jsonfile
from harness.compiler.irfile import unlink_link
from harness.errors import OutputError

LOCK_FILE = ".sweep.lock"
#: The folders a sweep writes into: those already there must be writable before a model runs.
_WRITTEN = ("records", "logs", "ports")


@dataclass(frozen=True)
class Holder:
    """Who holds a sweep folder: what the lock file says."""

    pid: int
    host: str
    started: float   # seconds since the epoch
    command: str     # shlex-joined: pastes as shown

    def describe(self) -> str:
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.started))
        minutes = max(0, int(time.time() - self.started) // 60)
        return (f"pid {self.pid} on {self.host}, started {since} ({minutes} min ago), "
                f"running: {self.command}")

    @classmethod
    def read(cls, text: str) -> Holder | None:
        try:
            data = jsonfile.loads(text)
            return cls(int(data["pid"]), str(data["host"]), float(data["started"]),
                       str(data["command"]))
        except (ValueError, KeyError, TypeError):
            return None


def _unusable(out: Path, why: str) -> OutputError:
    return OutputError(f"cannot use {out} as the sweep folder (--out): {why}. Give --out a "
                       "folder that can be created and written (records/, logs/, ports/ and "
                       "index.html go there); nothing was run.")


def _said(e: OSError) -> str:
    return f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)


@contextmanager
def hold(out: Path) -> Iterator[Holder]:
    """The sweep folder ``out``, created if needed and locked for this process until the block
    ends. :class:`OutputError` (exit 2) when it cannot be written or another sweep holds it."""
    if out.exists() and not out.is_dir():
        raise _unusable(out, "it is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        unlink_link(out / LOCK_FILE)  # a planted link is replaced, never written through
        fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        raise _unusable(out, _said(e)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = Holder.read(os.pread(fd, 64 * 1024, 0).decode("utf-8", "replace"))
            raise OutputError(
                f"another sweep is writing {out}: "
                + (holder.describe() if holder else "its lock file does not say who (it is being "
                   "written, or an older harness holds it)")
                + ". Two sweeps in one folder overwrite each other's logs and leave ports no "
                "record points to. Wait for it to end (or stop it"
                + (f": kill {holder.pid} on {holder.host}" if holder else "")
                + "), or give --out another folder (shards each take their own, then --merge)."
            ) from None
        except OSError as e:  # a file system without locks
            raise _unusable(out, f"cannot lock {out / LOCK_FILE}: {e.strerror or e}") from None
        for name in _WRITTEN:  # left by an earlier sweep, maybe someone else's
            if (out / name).exists() and not ((out / name).is_dir()
                                              and os.access(out / name, os.W_OK | os.X_OK)):
                raise _unusable(out, f"{out / name} is not a writable folder")
        holder = Holder(os.getpid(), socket.gethostname(), time.time(),
                        shlex.join(getattr(sys, "orig_argv", sys.argv)))
        text = jsonfile.dumps(asdict(holder)).encode() + b"\n"
        try:  # in place: a rename would swap the inode the lock is on
            os.ftruncate(fd, 0)
            os.pwrite(fd, text, 0)
        except OSError as e:
            raise _unusable(out, f"cannot write {out / LOCK_FILE}: {e.strerror or e}") from None
        yield holder
    finally:
        os.close(fd)  # drops the lock
