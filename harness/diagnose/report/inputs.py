"""input.mlir: the user's file, redacted, with its weights (resource blobs and large inline
literals) elided, and its comment-only lines left out, when that keeps the failure.

Files are read in chunks or parsed from disk by the bindings (``Module.parseFile``), never held
whole as Python strings: an input may be a model with its weights (OPT-125m as text: ~1 GB).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.compiler.mlir import (
    ELIDE_LITERALS_OVER_ELEMENTS,
    PrintOptions,
    is_bytecode,
    new_context,
    print_op,
)
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions, run_pipeline

from .redact import Redactor
from .result import Weights

if TYPE_CHECKING:
    from torch_mlir import ir

_SCAN_CHUNK = 1 << 20


@dataclass(frozen=True)
class WrittenInput:
    weights: Weights
    record: RunRecord            # input.mlir through the pipeline
    notes: tuple[str, ...] = ()


def write_input(src: Path, dest: Path, textual: str, original: RunRecord, *, opt: str,
                timeout_s: float, keep_weights: bool, redactor: Redactor) -> WrittenInput:
    """input.mlir, weights elided when that keeps the failure."""
    bytecode = is_bytecode_file(src)
    resources = bytecode or file_contains(src, b"dialect_resources")
    literals = not resources and has_large_literal(src)
    run_options = RunOptions(timeout_s=timeout_s)
    notes: list[str] = []
    if not resources and not literals:
        weights = Weights.NONE
    elif keep_weights:
        weights = Weights.KEPT
    elif (print_through_opt(src, dest, opt=opt, timeout_s=timeout_s) if literals
          else print_through_bindings(src, dest, elide=True, bytecode=bytecode)):
        redactor.redact_file(dest, ir=True, rename=(str(src), src.name))
        record = run_pipeline(dest, textual, opt=opt, options=run_options)
        if record.signature == original.signature:
            return WrittenInput(Weights.ELIDED, record)
        notes.append(f"eliding the weights changed the failure to '{record.signature}', so "
                     "input.mlir keeps them")
        weights = Weights.KEPT_CHANGES_FAILURE
    else:
        reader = "torch-mlir-opt" if literals else "the MLIR Python bindings"
        notes.append(f"{reader} cannot reprint the input, so its weights could not be elided; "
                     "input.mlir keeps them")
        weights = Weights.KEPT_UNPARSABLE
    notes += _copy_redacted(src, dest, redactor, bytecode=bytecode)
    if not bytecode:
        stripped = _strip_comment_lines(dest, textual, original, opt=opt, options=run_options)
        if stripped is not None:
            return WrittenInput(weights, stripped[0], (*notes, stripped[1]))
    record = run_pipeline(dest, textual, opt=opt, options=run_options)
    if record.signature != original.signature:
        notes.append(f"input.mlir fails as '{record.signature}', not as the original "
                     f"'{original.signature}' (a flaky failure, or one that depends on paths)")
    return WrittenInput(weights, record, tuple(notes))


# A line that is only a comment; ``// -----`` is not one (it splits the file for
# --split-input-file).
_COMMENT_LINE = re.compile(rb"^[ \t]*//(?![ \t]*-----[ \t]*\r?$)")


def _strip_comment_lines(dest: Path, textual: str, original: RunRecord, *, opt: str,
                         options: RunOptions) -> tuple[RunRecord, str] | None:
    """``dest`` without its comment-only lines, and its run, when it has some and the failure
    stays the same without them; else None and ``dest`` as it was. A file of 200 MB of
    comments made a 209 MB input.mlir. Streams line by line; costs one run."""
    kept = dest.with_name(f".{dest.name}.with-comments")
    os.replace(dest, kept)
    dropped = lines = 0
    try:
        with open(kept, "rb") as fin, open(dest, "wb") as fout:
            for line in fin:
                if _COMMENT_LINE.match(line):
                    dropped += len(line)
                    lines += 1
                else:
                    fout.write(line)
        if dropped:
            record = run_pipeline(dest, textual, opt=opt, options=options)
            if record.signature == original.signature:
                os.unlink(kept)
                return record, (f"input.mlir leaves out the {lines:,} comment-only lines "
                                f"({dropped:,} bytes) of the input: it fails the same without them")
    except BaseException:
        os.replace(kept, dest)
        raise
    os.replace(kept, dest)
    return None


def _copy_redacted(src: Path, dest: Path, redactor: Redactor, *, bytecode: bool) -> list[str]:
    if not bytecode:
        redactor.copy_file(src, dest, ir=True)
        return []
    if redactor.enabled and print_through_bindings(src, dest, elide=False, bytecode=True):
        redactor.redact_file(dest, ir=True, rename=(str(src), src.name))  # bytecode: print to redact
        return []
    shutil.copyfile(src, dest)
    if redactor.enabled:
        return ["input.mlir is MLIR bytecode the bindings cannot read: copied as is, its "
                "locations are NOT redacted"]
    return []


def is_bytecode_file(path: Path) -> bool:
    with open(path, "rb") as f:
        return is_bytecode(f.read(4))


def file_contains(path: Path, pattern: bytes | re.Pattern[bytes], *, longest: int = 0) -> bool:
    """Whether the file holds ``pattern`` (bytes, or a regex whose matches are at most
    ``longest`` bytes). Read in chunks, each with the previous one's tail: files are big, and a
    match may straddle two chunks."""
    if isinstance(pattern, bytes):
        longest = len(pattern)
        pattern = re.compile(re.escape(pattern))
    tail = b""
    with open(path, "rb") as f:
        while chunk := f.read(_SCAN_CHUNK):
            window = tail + chunk
            if pattern.search(window):
                return True
            tail = window[-longest:] if longest else b""
    return False


# An inline hex literal of over 64 bytes (16 f32) is a weight (a resource's text form).
_LARGE_LITERAL_DIGITS = 2 * 4 * ELIDE_LITERALS_OVER_ELEMENTS + 2
_LARGE_LITERAL = re.compile(rb'dense<"0x[0-9A-Fa-f]{%d}' % _LARGE_LITERAL_DIGITS)


def has_large_literal(path: Path) -> bool:
    """Whether the file holds an inline ``dense<"0x...">`` literal of over 64 bytes."""
    return file_contains(path, _LARGE_LITERAL,
                         longest=len(b'dense<"0x') + _LARGE_LITERAL_DIGITS)


def _parse_file(path: Path) -> tuple[ir.Context, ir.Module] | None:
    """(context, module) parsed from disk by the bindings (text or bytecode), or None."""
    from torch_mlir import ir

    context = new_context(threading=False)
    try:
        with context:
            return context, ir.Module.parseFile(str(path))
    except ir.MLIRError:
        return None


def print_through_bindings(src: Path, dest: Path, *, elide: bool, bytecode: bool) -> bool:
    """Re-prints ``src`` as text (resources over the elision limit left out when ``elide``);
    ops without a location of their own get ``src``'s path, as given, in theirs."""
    parsed = _parse_file(src)
    if parsed is None:
        return False
    _context, module = parsed
    debug_info = bytecode or file_contains(src, b"loc(")
    with open(dest, "w") as f:
        print_op(module.operation, PrintOptions(debug_info=debug_info, elide_weights=elide,
                                                elide_literals=elide), file=f)
    return True


def print_through_opt(src: Path, dest: Path, *, opt: str, timeout_s: float) -> bool:
    """Re-prints a text file without resources, its large inline literals elided, by
    torch-mlir-opt: a 100 MB literal costs the bindings twice its size in this process, the
    binary no more than a run of the file does."""
    extra = [f"--mlir-elide-elementsattrs-if-larger={ELIDE_LITERALS_OVER_ELEMENTS:d}"]
    if file_contains(src, b"loc("):
        extra.append("--mlir-print-debuginfo")
    record = run_pipeline(src, "builtin.module()", opt=opt, options=RunOptions(
        timeout_s=timeout_s, output_path=str(dest), extra_args=tuple(extra)))
    return record.ok
