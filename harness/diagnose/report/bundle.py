"""Assembling and publishing the bundle: all of it or nothing.

- The folder is assembled in a hidden sibling (``.report-partial-*``) that is removed on every
  way out: an error, Ctrl-C, and SIGTERM or SIGHUP too (their default action would end the
  process without running any cleanup, leaving the hidden folder behind).
- It is published under a name reserved with ``irfile.unique_dir`` (two reports never
  collide): the archive is written beside it first, the folder renamed into place, then the
  archive linked (a link never replaces a file; renamed where links are refused).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import NoReturn

from harness.compiler import jsonfile
from harness.compiler.irfile import unique_dir
from harness.errors import OutputError, ReportError

from .redact import Redactor
from .result import BundleFindings, Refusal

STAGING_PREFIX = ".report-partial-"
_TERMINATING = (signal.SIGTERM, signal.SIGHUP)


class BundleTerminated(SystemExit):
    """SIGTERM or SIGHUP arrived: unwinds like Ctrl-C, so cleanup runs, then exits 128+N."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(128 + signum)


@contextlib.contextmanager
def _terminate_by_exception() -> Iterator[None]:
    """While the bundle is assembled, SIGTERM/SIGHUP (when nobody else handles them) raise
    BundleTerminated; a second one during the cleanup is ignored. Only the main thread can set
    handlers: elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in _TERMINATING}

    def handler(signum: int, _frame: FrameType | None) -> NoReturn:
        for s in _TERMINATING:
            if previous[s] == signal.SIG_DFL:
                signal.signal(s, signal.SIG_IGN)
        raise BundleTerminated(signum)

    for s in _TERMINATING:
        if previous[s] == signal.SIG_DFL:
            signal.signal(s, handler)
    try:
        yield
    finally:
        for s in _TERMINATING:
            if previous[s] == signal.SIG_DFL:
                signal.signal(s, signal.SIG_DFL)


@contextlib.contextmanager
def staging_folder(out_dir: Path, src: Path) -> Iterator[Path]:
    """A fresh hidden folder under ``out_dir`` to assemble the bundle in, gone afterwards."""
    with _terminate_by_exception():
        try:
            staging = unique_dir(STAGING_PREFIX, parent=out_dir)
        except OutputError as e:
            raise ReportError(str(src), Refusal.OUTPUT, f"cannot write the report for {src}: {e}") from None
        try:
            yield staging
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def check_out_dir(out_dir: Path, src: Path) -> None:
    """Fails before any run when --out cannot hold a folder (nothing is created here)."""
    probe = out_dir
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    problem = ""
    if probe.exists() and not probe.is_dir():
        problem = f"{probe} is a file, not a folder"
    elif not os.access(probe, os.W_OK | os.X_OK):
        problem = f"{probe} is not writable"
    if problem:
        raise ReportError(str(src), Refusal.OUTPUT,
                          f"cannot write the report for {src} under {out_dir}: {problem}. "
                          "Choose a writable --out folder.")


def write_text(path: Path, text: str) -> None:
    """A plain write: bundle files go into the private staging folder, which ``publish``
    renames into place whole, so they need no atomic write of their own."""
    with open(path, "w") as f:
        f.write(text)


def write_texts(staging: Path, findings: BundleFindings, issue: str, redactor: Redactor) -> None:
    """record.json (``findings.record()``, redacted) and issue.md (``issue``, written from the
    same findings and redacted already), the same way for every bundle kind."""
    write_text(staging / "record.json", jsonfile.dumps(redactor.json(findings.record()), indent=2) + "\n")
    write_text(staging / "issue.md", issue)


def publish(staging: Path, out_dir: Path, slug: str, *, redacted: bool) -> tuple[Path, Path]:
    """Reserves a unique name, writes the archive, renames the folder into place, then links
    the archive beside it. Undoes itself on any error."""
    final = unique_dir(f"report-{slug}-", parent=out_dir)
    archive = final.with_name(final.name + ".tar.gz")
    fd, tmp_archive = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tar.gz", dir=out_dir)
    os.close(fd)
    moved = False
    try:
        staging.chmod(0o755)

        def scrub(info: tarfile.TarInfo) -> tarfile.TarInfo:
            if redacted:  # tar headers carry the owner's name too
                info.uid = info.gid = 0
                info.uname = info.gname = ""
            return info

        with tarfile.open(tmp_archive, "w:gz") as tar:
            tar.add(staging, arcname=final.name, recursive=False, filter=scrub)
            for name in sorted(p.name for p in staging.iterdir()):
                tar.add(staging / name, arcname=f"{final.name}/{name}", filter=scrub)
        os.chmod(tmp_archive, 0o644)
        os.rename(staging, final)  # onto the empty folder unique_dir reserved
        moved = True
        try:
            os.link(tmp_archive, archive)
        except OSError as e:
            if e.errno == errno.EEXIST:
                raise
            # No hard links here (some network and FUSE file systems): reserve the name with
            # O_EXCL, then rename onto that empty file of ours.
            os.close(os.open(archive, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            os.replace(tmp_archive, archive)
    except BaseException:
        if moved:
            shutil.rmtree(final, ignore_errors=True)
        else:
            try:
                final.rmdir()
            except OSError:
                pass
        raise
    finally:
        try:
            os.unlink(tmp_archive)
        except FileNotFoundError:  # renamed into place
            pass
    return final, archive
