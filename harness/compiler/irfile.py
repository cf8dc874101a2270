"""Writing files: atomically, into unique folders. A leaf of the compiler package (no MLIR):
every module that writes reads it, and ``mlir.write_module`` writes IR through it."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import IO, Any
from collections.abc import Callable

from harness.errors import OutputError

from .process import watchdog


def unique_dir(prefix: str, parent: str | os.PathLike | None = None) -> Path:
    """A fresh folder (mkdtemp: no collisions, no races), under ``parent`` or the temp dir."""
    try:
        if parent is not None:
            Path(parent).mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    except OSError as e:
        raise OutputError(
            f"cannot create a folder under {parent or tempfile.gettempdir()}: {e.strerror}. "
            "Choose a writable location (or set TMPDIR)."
        ) from None


def write_atomically(path: str | os.PathLike, data: str | bytes | Callable[[IO], None], *,
                     binary: bool = False, hint: str = "Choose a writable output location.") -> Path:
    """Writes to a temp file beside ``path`` and renames it into place, so a reader (or a
    parallel lit test) never sees half a file and a failed write leaves nothing behind.
    ``data`` is the text/bytes, or a function that writes into the open file.

    An existing ``path`` that is not a regular file (``/dev/null``, a fifo, a terminal) is
    written in place: renaming over it would replace the device itself, and as root that turns
    ``/dev/null`` into a regular file for every process on the machine."""
    path = Path(path)
    binary = binary or isinstance(data, bytes)
    if _is_special(path):
        try:
            with open(path, "wb" if binary else "w") as f:
                if callable(data):
                    data(f)
                else:
                    f.write(data)
        except OSError as e:
            raise OutputError(f"cannot write {path}: {e.strerror or e}. {hint}") from None
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror}. {hint}") from None
    try:
        with os.fdopen(fd, "wb" if binary else "w") as f:
            os.fchmod(f.fileno(), _mode_for(path))  # not mkstemp's 0o600: as open() would
            if callable(data):
                data(f)
            else:
                f.write(data)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):  # a full disk, a quota: the user's to fix, not a traceback
            raise OutputError(f"cannot write {path}: {e.strerror or e}. {hint}") from None
        raise
    return path


class StagedFile:
    """A temp file beside ``target`` for a writer that takes a path (a child's ``-o``), renamed
    into place by ``commit``; left uncommitted (a crash, a failure, the harness killed: then
    by the watchdog of harness.compiler.process) it is removed and ``target`` keeps what it
    held. As with ``write_atomically``, a ``target``
    that is not a regular file (``/dev/null``, a fifo) is written in place."""

    def __init__(self, target: str | os.PathLike, hint: str = "Choose a writable output location."):
        # A symlink is written through, as the writer's open() would: it stays a link.
        self.target = Path(os.path.realpath(target)) if os.path.islink(target) else Path(target)
        self.staged = not _is_special(self.target)  # False: written in place, or committed
        if not self.staged:
            self.path = self.target
            return
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", dir=self.target.parent)
            os.fchmod(fd, _mode_for(self.target))  # the mode the writer's open() would leave
            os.close(fd)
        except OSError as e:
            raise OutputError(f"cannot write {self.target}: {e.strerror or e}. {hint}") from None
        self.path = Path(tmp)
        watchdog.remove_on_death(self.path)  # a SIGKILLed harness leaves no temp file either

    def commit(self) -> Path:
        if self.staged:
            os.replace(self.path, self.target)
            self.staged = False
            watchdog.keep(self.path)
        return self.target

    def discard(self) -> None:
        if self.staged:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            self.staged = False
            watchdog.keep(self.path)

    def __enter__(self) -> StagedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def _is_special(path: Path) -> bool:
    try:
        return not stat.S_ISREG(path.stat().st_mode) and not stat.S_ISDIR(path.stat().st_mode)
    except OSError:  # missing (the usual case) or unreadable: the temp-and-rename path reports it
        return False


def _mode_for(path: Path) -> int:
    """The mode ``open(path, "w")`` would leave: the existing file's, else 0o666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        pass
    try:
        with open("/proc/self/status") as f:
            umask = next(int(line.split()[1], 8) for line in f if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        umask = os.umask(0o022)  # no /proc: read it the only other way, and put it back
        os.umask(umask)
    return 0o666 & ~umask


def unlink_link(path: str | os.PathLike) -> None:
    """Removes ``path`` when it is a symbolic link or a hard link to a file named elsewhere too:
    a folder that may hold earlier output (a sweep's ``--out``) is written into, never through a
    link planted there (round-4 probes: the lock file, a model's log and merged records
    overwrote the files their links named)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or (stat.S_ISREG(info.st_mode) and info.st_nlink > 1):
        os.unlink(path)


def copy_fresh(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """``source``'s bytes into a file of ``target``'s own (``open_fresh``)."""
    import shutil

    with open(source, "rb") as src, open_fresh(target, "wb") as dst:
        shutil.copyfileobj(src, dst)


def open_fresh(path: str | os.PathLike, mode: str = "w", **kwargs: Any) -> IO:
    """``open(path, mode)`` for writing ("w", "a", "wb", "ab") that replaces a symbolic link at
    ``path`` with a file of its own, and refuses to follow one that appears in between
    (``O_NOFOLLOW``)."""
    unlink_link(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    flags |= os.O_APPEND if "a" in mode else os.O_TRUNC
    return os.fdopen(os.open(path, flags, 0o644), mode, **kwargs)
