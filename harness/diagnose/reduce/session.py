"""Runs candidates: the "still the same failure" test, the budget, per-try timeouts, the output,
and the best input so far (``IRState``: a module on the bindings; ``LineState``: text lines).

Each candidate is one torch-mlir-opt run (a subprocess, through the runner); the bindings'
verifier runs in a forked child, since torch-mlir's verifiers can crash on IR a reduction made.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from torch_mlir import ir

from harness.compiler.irfile import write_atomically
from harness.compiler.mlir import count_ops, print_op
from harness.compiler.outcomes import Signature
from harness.compiler.records import Outcome, RunRecord
from harness.compiler.runner import RunOptions, run_pipeline
from harness.enums import ParsableEnum
from harness.errors import OutputError

from .options import ReduceOptions
from .subject import keeps_subject

# A candidate may take this many times the original run (plus the slack) before it counts as a hang.
TRY_TIMEOUT_FACTOR = 5.0
TRY_TIMEOUT_SLACK_S = 5.0
VERIFY_TIMEOUT_S = 120.0
_CAN_FORK = hasattr(os, "fork")


class Stopped(ParsableEnum):
    """Why the search ended."""

    DONE = "done"            # a whole round found nothing smaller
    BUDGET = "budget"        # the wall-clock budget is spent: the best file so far
    MAX_TRIES = "max-tries"  # the try limit is reached: the best file so far


class Stop(Exception):
    """The budget or the try limit is spent: keep what was found."""


@dataclass(frozen=True)
class Failure:
    """What a candidate must reproduce: the signature, and for a diagnosed failure the op the
    first error is about (its message, else "see current operation") and where that op came
    from. The same message from another op, or from the same kind of op elsewhere (a value the
    reduction itself made unranked), is a different failure."""

    signature: Signature
    op: str = ""
    location: str = ""  # the first error's file:line:col; "" where it does not count
    # The failing op's operand and result types as the failing pass saw them ("see current
    # operation"): a candidate whose op fails with other types (a dynamic size made static by a
    # folded constant, a view of [1,?,64] become [1,1,4,16]) is another case, not a smaller one.
    types: str = ""

    @classmethod
    def of(cls, record: RunRecord, *, located: bool = True) -> Failure:
        """``located=False`` for line deletion, which moves every line after the cut."""
        first = record.first_error()
        if record.ok or record.outcome.is_crash or first is None:
            return cls(record.signature)  # a crash is told by its stack, not a diagnostic
        return cls(record.signature, first.op, first.location if located else "",
                   op_types(first.current_op_text))

    def __str__(self) -> str:
        return str(self.signature)


_TRAILING_LOC = re.compile(r"\s+loc\((?:[^()]|\([^()]*\))*\)\s*$")


def op_types(op_text: str) -> str:
    """The type signature of an op as MLIR printed it (``(A, B) -> C`` after the last ``:``,
    without its location), whitespace folded; "" when there is none."""
    text = _TRAILING_LOC.sub("", op_text.strip())
    _, colon, types = text.rpartition(" : ")
    return " ".join(types.split()) if colon else ""


class Session:
    """Runs candidates, counts tries, watches the budget and writes each kept file."""

    def __init__(self, textual: str, original: RunRecord, options: ReduceOptions,
                 workdir: Path, out: Path, start: float):
        self.textual = textual
        self.original = original
        self.options = options
        self.extra = ("-mlir-disable-threading",) if options.disable_threading else ()
        self.workdir = workdir
        self.out = out
        self.start = start
        self.tries = 0
        self.kept = 0
        self.stopped = Stopped.DONE
        self.located = True
        self.failure = Failure.of(original)
        self.subject: tuple[str, ...] = ()  # op names every candidate keeps (``subject``)
        self._seen: set[bytes] = set()
        self.hang = original.outcome is Outcome.TIMEOUT
        if options.try_timeout_s:
            self.try_timeout = options.try_timeout_s
        elif self.hang:
            self.try_timeout = original.elapsed_s
        else:
            self.try_timeout = original.elapsed_s * TRY_TIMEOUT_FACTOR + TRY_TIMEOUT_SLACK_S

    def by_lines(self) -> None:
        """Line deletion moves locations: from now on the signature and the op decide."""
        self.located = False
        self.failure = Failure.of(self.original, located=False)

    def remaining_s(self) -> float:
        return self.options.budget_s - (time.monotonic() - self.start)

    def _check_budget(self) -> None:
        if self.tries >= self.options.max_tries:
            self.stopped = Stopped.MAX_TRIES
            raise Stop
        if self.remaining_s() <= 0.05:
            self.stopped = Stopped.BUDGET
            raise Stop

    def run(self, path: Path, pipeline: str | None = None, output: Path | None = None,
            extra: tuple[str, ...] = ()) -> RunRecord:
        self._check_budget()
        if self.hang and pipeline is None and self.remaining_s() < self.try_timeout:
            # Cut short by the budget, any candidate would "hang": that proves nothing.
            self.stopped = Stopped.BUDGET
            raise Stop
        self.tries += 1
        timeout = max(0.1, min(self.try_timeout, self.remaining_s()))
        if pipeline is None and self.options.runner is not None:  # the caller's own test
            return self.options.runner(path, timeout)
        return run_pipeline(path, pipeline or self.textual, opt=self.options.opt,
                            options=RunOptions(timeout_s=timeout, extra_args=self.extra + extra,
                                               output_path=str(output) if output else None))

    def interesting(self, text: str) -> bool:
        """Whether ``text`` fails as the original did (each distinct text runs once)."""
        digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
        if digest in self._seen:
            return False
        self._check_budget()
        self._seen.add(digest)
        if not keeps_subject(text, self.subject):
            return False  # the symptom without the op it is about: not the same bug
        path = self.workdir / "candidate.mlir"
        path.write_text(text)
        return Failure.of(self.run(path), located=self.located) == self.failure

    def keep(self, text: str, ops: int, what: str, *, reduction: bool = True) -> None:
        self.kept += reduction
        write_output(self.out, text)
        if self.options.progress:
            self.options.progress(f"{what}: {ops} ops, {len(text)} chars "
                                  f"(try {self.tries}, {time.monotonic() - self.start:.1f} s)")

    def verified_text(self, context: ir.Context, clone: ir.Operation) -> str | None:
        """The clone's text if it verifies, else None; checked in a forked child where possible.

        torch-mlir's verifiers can crash on IR a reduction made (a ``torch.nn_module`` whose
        class type is gone), and such a crash must cost one candidate, not the whole reduction.
        """
        path = self.workdir / "verified.mlir"
        pid = -1
        if _CAN_FORK:
            try:
                pid = os.fork()
            except OSError:  # no memory to copy a big parent: verify here, as without fork
                pid = -1
        if pid < 0:
            with context:
                try:
                    clone.verify()
                except ir.MLIRError:
                    return None
            return print_op(clone)
        if pid == 0:  # the child: verify, print, and leave without running Python's exit hooks
            code = 1
            try:
                with context:
                    clone.verify()
                    with open(path, "w") as f:
                        print_op(clone, file=f)
                    code = 0
            finally:
                os._exit(code)
        status = _wait_child(pid, VERIFY_TIMEOUT_S)
        return path.read_text() if status == 0 else None


def _wait_child(pid: int, timeout_s: float) -> int | None:
    """The child's exit status (a signal counts as None); killed after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    pause = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.01)


def check_output(src: Path, out: Path) -> None:
    """Fails before the search, not after it, when the output cannot be written."""
    if out.exists() and out.is_dir():
        raise OutputError(f"reduce output {out} is a folder. Name a file, e.g. {out / 'reduced.mlir'}.")
    if src.exists() and out.exists() and os.path.samefile(src, out):
        raise OutputError(f"reduce output {out} is the input file; name another file so the "
                          "original failure stays on disk.")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise OutputError(f"cannot write the reduced file {out}: {e.strerror}. "
                          "Choose a writable output location (-o).") from None


def write_output(path: Path, data: str | bytes) -> None:
    write_atomically(path, data, hint="Choose a writable output location (-o).")


# --- the best input so far -------------------------------------------------------------------


class IRState:
    """Holds the best module so far and tries edits on clones of it."""

    def __init__(self, session: Session, context: ir.Context, module: ir.Operation):
        self.session = session
        self.ctx = context  # the best module's; a kept cleanup output brings its own
        self.best = module
        self.text = print_op(module)
        self.ops_before = count_ops(module)
        self.ops_now = self.ops_before
        self.metric = (self.ops_now, len(self.text))

    def roundtrips(self) -> bool:
        """The bindings' printing of the input must fail the same way, or reduce by lines."""
        if self.session.interesting(self.text):
            self.session.keep(self.text, self.ops_now, "reprinted", reduction=False)
            return True
        return False

    def attempt(self, edit: Callable[[ir.Operation], bool], what: str) -> bool:
        """Applies ``edit`` to a clone; keeps the clone if it verifies, is smaller and fails alike."""
        with self.ctx, ir.Location.unknown():
            clone = self.best.clone()
            try:
                edited = edit(clone)
            except (ir.MLIRError, ValueError, RuntimeError):  # what the bindings raise for bad IR
                edited = False
        text = self.session.verified_text(self.ctx, clone) if edited else None
        if text is None:
            clone.erase()
            return False
        return self.offer(clone, what, text=text)

    def offer(self, clone: ir.Operation, what: str, context: ir.Context | None = None,
              text: str | None = None) -> bool:
        """Keeps ``clone`` (in ``context``, else the best's) if it is smaller and fails alike."""
        text = text if text is not None else print_op(clone)
        ops = count_ops(clone)
        if (ops, len(text)) >= self.metric or not self.session.interesting(text):
            clone.erase()
            return False
        self.best.erase()
        self.best, self.text, self.ops_now, self.metric = clone, text, ops, (ops, len(text))
        self.ctx = context or self.ctx
        self.session.keep(text, ops, what)
        return True


class LineState:
    """The best text so far as lines; a copy is kept when it still fails alike."""

    def __init__(self, session: Session, text: str):
        self.session = session
        self.best = text.splitlines(keepends=True)
        self.ops_before = count_op_lines(text)
        self.ops_now = self.ops_before
        self.metric = (self.ops_now, len(text))

    def attempt(self, edit: Callable[[list[str]], bool], what: str) -> bool:
        candidate = list(self.best)
        if not edit(candidate) or not candidate:
            return False
        text = "".join(candidate)
        if not self.session.interesting(text):
            return False
        self.best = candidate
        self.ops_now = count_op_lines(text)
        self.metric = (self.ops_now, len(text))
        self.session.keep(text, self.ops_now, what)
        return True


_NOT_OP_LINE = re.compile(r"^\s*($|//|}|\{-#|#-}|#|\^|module\b)")


def count_op_lines(text: str) -> int:
    """Lines that hold an op: what 'ops' means for a file the bindings cannot parse."""
    return sum(1 for line in text.splitlines() if not _NOT_OP_LINE.match(line))
