"""Runs torch-mlir-opt as a subprocess and classifies what happened.

A subprocess keeps a crash in the compiler from taking the Python process down (passes can
emit an error without signalling failure, which asserts in-process: upstream #3506), and it
works the same for the wheel's binary and a user's own debug build.
"""

from __future__ import annotations

import os
import shlex
import signal as signal_module
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from . import binary as binary_module
from .errors import InputFileError
from .records import Outcome, RunRecord, parse_diagnostics

DEFAULT_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class RunOptions:
    timeout_s: float = DEFAULT_TIMEOUT_S
    extra_args: tuple[str, ...] = ()
    output_path: str | None = None  # None: discard stdout's IR unless the caller reads it
    emit_bytecode: bool = False


# Texts the MLIR parser prints before any pass runs.
_PARSE_MARKERS = ("custom op '", "expected operation name", "unexpected character",
                  "Failed to parse", "expected SSA operand", "undefined symbol", "use of undeclared SSA value")


def _classify(returncode: int, stderr: str) -> tuple[Outcome, str]:
    if returncode < 0:
        sig = signal_module.Signals(-returncode).name
        return (Outcome.ASSERTION if "Assertion" in stderr and "failed" in stderr else Outcome.CRASH), sig
    if returncode == 0:
        return Outcome.SUCCESS, ""
    if "failed to legalize operation" in stderr:
        return Outcome.LEGALIZATION_FAILURE, ""
    if "Stack dump:" in stderr:
        return Outcome.CRASH, ""
    if any(marker in stderr for marker in _PARSE_MARKERS):
        return Outcome.PARSE_ERROR, ""
    if "verification failed" in stderr.lower():
        return Outcome.VERIFIER_ERROR, ""
    return Outcome.PASS_FAILURE, ""


def run_pipeline(input_path: str | os.PathLike, pipeline: str, *, opt: str | None = None,
                 options: RunOptions = RunOptions()) -> RunRecord:
    """Runs ``torch-mlir-opt -pass-pipeline=PIPELINE INPUT`` and returns its record."""
    path = Path(input_path)
    if not path.is_file():
        raise InputFileError(f"input IR file {path} does not exist or is not a file. Check the path.")
    if path.stat().st_size == 0:
        raise InputFileError(f"input IR file {path} is empty. Regenerate it (e.g. harness opt).")
    exe = binary_module.resolve(opt)
    cmd = [exe.path, f"-pass-pipeline={pipeline}", str(path)]
    if options.emit_bytecode:
        cmd.append("--emit-bytecode")
    cmd += ["-o", options.output_path or os.devnull]
    cmd += list(options.extra_args)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=options.timeout_s,
                              stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired as e:
        stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return RunRecord(Outcome.TIMEOUT, cmd, pipeline, str(path), exe.path, None,
                         time.monotonic() - start, stderr=stderr)
    elapsed = time.monotonic() - start
    outcome, sig = _classify(proc.returncode, proc.stderr)
    return RunRecord(
        outcome=outcome, command=cmd, pipeline=pipeline, input_path=str(path), binary=exe.path,
        returncode=proc.returncode, elapsed_s=elapsed, stderr=proc.stderr,
        output_path=options.output_path or "", signal=sig,
        diagnostics=parse_diagnostics(proc.stderr),
    )


def shell_command(cmd: Sequence[str]) -> str:
    """A command line a user can paste into a POSIX shell."""
    return " ".join(shlex.quote(c) for c in cmd)


def repro_command(pipeline: str, input_path: str | os.PathLike, binary_name: str = "torch-mlir-opt") -> str:
    """``torch-mlir-opt -pass-pipeline='...' FILE``, the form users paste from bug reports."""
    return f"{binary_name} -pass-pipeline={shlex.quote(pipeline)} {shlex.quote(os.fspath(input_path))}"
