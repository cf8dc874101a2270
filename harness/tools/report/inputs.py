"""input.mlir: the user's file, redacted, with its weights elided when that keeps the failure.

Files are read in chunks or parsed from disk by the bindings (``Module.parseFile``), never held
whole as Python strings: an input may be a model with its weights (OPT-125m as text: ~1 GB).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from harness.compiler.mlir import (
    PrintOptions,
    count_ops,
    is_bytecode,
    new_context,
    print_op,
)
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions, run_pipeline

from .redact import Redactor
from .result import Weights

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
    blobs = bytecode or file_contains(src, b"dialect_resources")
    run_options = RunOptions(timeout_s=timeout_s)
    notes: list[str] = []
    if not blobs:
        weights = Weights.NONE
    elif keep_weights:
        weights = Weights.KEPT
    elif print_through_bindings(src, dest, elide=True, bytecode=bytecode):
        redactor.redact_file(dest, ir=True, rename=(str(src), src.name))
        record = run_pipeline(dest, textual, opt=opt, options=run_options)
        if record.signature == original.signature:
            return WrittenInput(Weights.ELIDED, record)
        notes.append(f"eliding the weights changed the failure to '{record.signature}', so "
                     "input.mlir keeps them")
        weights = Weights.KEPT_CHANGES_FAILURE
    else:
        notes.append("the MLIR Python bindings cannot parse the input, so its weights could "
                     "not be elided; input.mlir keeps them")
        weights = Weights.KEPT_UNPARSABLE
    notes += _copy_redacted(src, dest, redactor, bytecode=bytecode)
    record = run_pipeline(dest, textual, opt=opt, options=run_options)
    if record.signature != original.signature:
        notes.append(f"input.mlir fails as '{record.signature}', not as the original "
                     f"'{original.signature}' (a flaky failure, or one that depends on paths)")
    return WrittenInput(weights, record, tuple(notes))


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


def file_contains(path: Path, needle: bytes) -> bool:
    """Whether ``needle`` is in the file (read in chunks: files are big)."""
    tail = b""
    with open(path, "rb") as f:
        while chunk := f.read(_SCAN_CHUNK):
            if needle in tail + chunk:
                return True
            tail = chunk[-len(needle):]
    return False


def _parse_file(path: Path):
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
        print_op(module.operation, PrintOptions(debug_info=debug_info, elide_weights=elide), file=f)
    return True


def count_file_ops(path: Path) -> int | None:
    """Ops in the module but the module itself; None when the bindings cannot parse it."""
    parsed = _parse_file(path)
    return count_ops(parsed[1].operation) if parsed is not None else None
