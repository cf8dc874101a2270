"""Writing IR to disk: atomically, into unique folders, weights elided or kept.

Text IR with debug locations is what a person reads and what lit checks; weights are elided
by default (OPT-125m's weights as hex text are ~1 GB). Bytecode keeps weights compactly when
the IR is only fed to another tool.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Callable

from harness.errors import OutputError

if TYPE_CHECKING:  # the bindings load numpy (~0.3 s): only write_module needs them
    from torch_mlir import ir


@dataclass(frozen=True)
class WriteOptions:
    keep_weights: bool = False
    debug_info: bool = True
    bytecode: bool = False


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


def write_module(module: ir.Module | ir.Operation, path: str | os.PathLike,
                 options: WriteOptions = WriteOptions()) -> Path:
    """The module as text (weights elided unless kept) or bytecode, written atomically."""
    from torch_mlir import ir

    from .mlir import PrintOptions, print_op

    op = module.operation if isinstance(module, ir.Module) else module
    printing = PrintOptions(debug_info=options.debug_info, elide_weights=not options.keep_weights)

    def write(f: IO) -> None:
        if options.bytecode:
            op.write_bytecode(f)
        else:
            print_op(op, printing, file=f)

    return write_atomically(path, write, binary=options.bytecode)
