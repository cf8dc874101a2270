"""One reduced case per distinct failure (five missing shape/dtype functions in one
module showed as one bug, the first the pipeline met).

The pipeline stops at its first failure, so the others are found by knocking the found one
out: its subject ops (``subject``) are removed from the input (their functions, or the ops
alone with stand-ins for their results) and the rest is run again. Each distinct failure (its
signature and subject) is reduced from the input it was met in, into its own file.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from torch_mlir import ir

from harness.compiler import pipelines
from harness.compiler.irfile import unique_dir, write_atomically
from harness.compiler.mlir import print_op
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions, check_input, run_pipeline
from harness.errors import NothingToReduceError, OutputError

from . import ReduceOptions, ReduceResult, reduce_file
from .edits import knock_out, parse_input
from .subject import subject_ops

DEFAULT_MAX_FAILURES = 8


@dataclass(frozen=True)
class DistinctFailure:
    """One distinct failure: the input it is met in (the module with the failures met before
    it knocked out), its run, and its subject ops."""

    input: Path
    record: RunRecord
    subject: tuple[str, ...]


def distinct_failures(path: str | os.PathLike, pipeline: str, work: str | os.PathLike, *,
                      opt: str | None = None, timeout_s: float = 60.0,
                      disable_threading: bool = True,
                      max_failures: int = DEFAULT_MAX_FAILURES) -> list[DistinctFailure]:
    """The distinct failures of ``path`` through ``pipeline``, in the order the pipeline meets
    them; each after the first is met in a file written under ``work`` (the caller's folder,
    which it removes). Raises NothingToReduceError when the input passes."""
    src = check_input(path)
    textual = pipelines.default().resolve(pipeline)
    text = src.read_text(errors="replace")
    extra = ("-mlir-disable-threading",) if disable_threading else ()
    found: list[DistinctFailure] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    current = src
    while len(found) < max_failures:
        record = run_pipeline(current, textual, opt=opt,
                              options=RunOptions(timeout_s=timeout_s, extra_args=extra))
        if record.ok:
            if not found:
                raise NothingToReduceError(str(src), pipeline)
            break
        # Locations keep naming the input, so its text tells which op they point at.
        subject = subject_ops(record, text, (str(src), record.input_path))
        key = (str(record.signature), subject)
        if key in seen or (found and not subject):
            break  # knocking out did not get past it: no new failure to find
        seen.add(key)
        found.append(DistinctFailure(current, record, subject))
        following = _knocked_out(current, subject, Path(work) / f"knocked-{len(found)}.mlir")
        if following is None:
            break
        current = following
    return found


def reduce_each(path: str | os.PathLike, pipeline: str, out_dir: str | os.PathLike, *,
                options: ReduceOptions = ReduceOptions(),
                max_failures: int = DEFAULT_MAX_FAILURES) -> list[ReduceResult]:
    """Reduces each distinct failure of ``path`` through ``pipeline`` into
    ``out_dir/reduced-N.mlir`` (N from 1, in the order the pipeline meets them); ``options``
    apply to each reduction (its budget is per failure). Raises NothingToReduceError when the
    input passes."""
    check_input(path)
    textual = pipelines.default().resolve(pipeline)
    folder = Path(out_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot make the folder {folder} for the reduced cases: {e.strerror}. "
                          "Name a folder (-o) that can be made or exists.") from None
    work = unique_dir("reduce-each-")
    try:
        failures = distinct_failures(
            path, pipeline, work, opt=options.opt,
            timeout_s=options.try_timeout_s or max(60.0, options.budget_s),
            disable_threading=options.disable_threading, max_failures=max_failures)
        return [reduce_file(failure.input, textual, options=replace(
                    options, output_path=folder / f"reduced-{n}.mlir", original=failure.record))
                for n, failure in enumerate(failures, 1)]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _knocked_out(path: Path, subject: tuple[str, ...], out: Path) -> Path | None:
    """``path`` without its subject ops (``edits.knock_out``), written to ``out``; None when
    they cannot go or the result does not verify."""
    if not subject:
        return None
    parsed = parse_input(path.read_bytes(), str(path))
    if parsed is None:
        return None
    context, module = parsed
    with context, ir.Location.unknown():
        if not knock_out(module, subject):
            return None
        try:
            module.verify()
        except ir.MLIRError:
            return None
        text = print_op(module)
        assert text is not None, "print_op returns the text when no file is given"
        write_atomically(out, text)
    return out


__all__ = ["DEFAULT_MAX_FAILURES", "DistinctFailure", "distinct_failures", "reduce_each"]
