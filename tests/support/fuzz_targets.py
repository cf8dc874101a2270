"""The fuzz targets: what the property tests (tests/compiler/test_fuzz_*.py) and ``tools/fuzz.py`` do
with each mutated input, and the checks that do not trust the code under test."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from harness.compiler.crash import parse_crash
from harness.compiler.records import Outcome, RunRecord, parse_diagnostics, render_record
from harness.compiler.runner import RunOptions, classify, run_pipeline

CRASH_BANNER = ("Stack dump:", "PLEASE submit a bug report", "LLVM ERROR:")


def parse_everything(text: str, status: int | None, at_timeout: bool) -> RunRecord:
    """What the runner does with a finished run's stderr, and what tools then read of it."""
    diagnostics = parse_diagnostics(text)
    crash = parse_crash(text, returncode=status, pass_hint="canonicalize", at_timeout=at_timeout)
    outcome = classify(status, text, crash, diagnostics, timed_out=at_timeout)
    record = RunRecord(outcome=outcome, command=["torch-mlir-opt"], pipeline="p",
                       input_path="x.mlir", binary="torch-mlir-opt", returncode=status,
                       elapsed_s=0.0, stderr=text, diagnostics=diagnostics,
                       crash=crash if outcome.is_crash else None)
    str(record.signature)
    record.signature.slug()
    render_record(record)
    if crash is not None:
        crash.relevant_frames()
        crash.top_frame()
        crash.torch_frame()
    assert RunRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
    return record


def parses(path: Path, binary: str) -> bool | None:
    """Whether torch-mlir-opt parses ``path`` with its verifier off (None: that crashed too)."""
    proc = subprocess.run([binary, str(path), "--mlir-very-unsafe-disable-verifier-on-parsing",
                           "-o", os.devnull], capture_output=True, text=True, errors="replace",
                          timeout=60, stdin=subprocess.DEVNULL)
    if proc.returncode < 0 or any(b in proc.stderr for b in CRASH_BANNER):
        return None
    return proc.returncode == 0


def misclassification(record: RunRecord, path: Path, binary: str) -> str:
    """What the record gets wrong about the run, or ""."""
    died = record.returncode is not None and record.returncode < 0
    banner = any(b in record.stderr for b in CRASH_BANNER)
    if (died or banner) and not record.outcome.is_crash:
        return f"the run crashed (status {record.returncode}) but is recorded as {record.outcome.value}"
    if record.outcome is Outcome.SUCCESS and record.returncode != 0:
        return f"exit status {record.returncode} recorded as success"
    if record.outcome.is_crash:
        return ""
    syntax = parses(path, binary)
    if syntax is False and record.outcome is not Outcome.PARSE_ERROR:
        return f"a file that does not parse is recorded as {record.outcome.value}"
    if syntax is True and record.outcome is Outcome.PARSE_ERROR:
        return "a file that parses is recorded as parse-error"
    return ""


# Crash stacks unnamed: LLVM's in-process symbolization (~0.4 s a crash) is not what is tested.
UNSYMBOLIZED = RunOptions(timeout_s=20.0, symbolize=False, env={"LLVM_DISABLE_SYMBOLIZATION": "1"})


def run_and_check(text: str, flag: str, binary: str, workdir: Path,
                  options: RunOptions = RunOptions(timeout_s=20.0)) -> tuple[RunRecord, str]:
    """``text`` run through ``flag``; the record and what it gets wrong ("" if nothing)."""
    path = workdir / "mutated.mlir"
    path.write_text(text)
    record = run_pipeline(path, flag, opt=binary, options=options)
    return record, misclassification(record, path, binary)
