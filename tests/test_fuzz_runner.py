"""Property: ``run_pipeline`` on mutated torch IR never raises and never misclassifies.

Inputs are the crashers (tests/data/crashers, the hangs left out) with numbers, op names,
types and lines changed by tests/mutations.py, each run through the pass it crashes. What
the record says is checked against what the process did, not against the classifier:

- a run that died by a signal, or printed LLVM's crash banner, is never a success (or any
  diagnostic outcome);
- a file torch-mlir-opt cannot even parse with its verifier off is a parse error, and a file it
  parses is not.

``tools/fuzz.py`` runs the same check on 10,000+ inputs and keeps new crashers.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import IRMutator, ir_corpus

from harness.compiler.binary import resolve
from harness.compiler.records import Outcome, RunRecord
from harness.compiler.runner import RunOptions, run_pipeline

CORPUS = ir_corpus()
MUTATOR = IRMutator([text for _, text, _ in CORPUS])
EXAMPLES = int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "200"))
PROPERTY = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
CRASH_BANNER = ("Stack dump:", "PLEASE submit a bug report", "LLVM ERROR:")


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


def run_and_check(text: str, flag: str, binary: str, workdir: Path) -> RunRecord:
    path = workdir / "mutated.mlir"
    path.write_text(text)
    record = run_pipeline(path, flag, opt=binary, options=RunOptions(timeout_s=20))
    wrong = misclassification(record, path, binary)
    assert not wrong, f"{wrong}\n--- input ---\n{text}\n--- stderr ---\n{record.stderr[:4000]}"
    return record


@PROPERTY
@given(rng=st.randoms(use_true_random=False), seed=st.sampled_from(CORPUS))
def test_run_on_mutated_ir_never_raises_or_misclassifies(rng, seed):
    name, text, flag = seed
    binary = resolve().path
    with tempfile.TemporaryDirectory(prefix="harness-fuzz-") as workdir:
        run_and_check(MUTATOR.mutate(text, rng), flag, binary, Path(workdir))


def test_the_unmutated_corpus_crashes_and_the_oracle_sees_it(tmp_path):
    # The check can fail: each seed crashes for real, and a broken file is told from a good one.
    binary = resolve().path
    for name, text, flag in CORPUS:
        assert run_and_check(text, flag, binary, tmp_path).outcome.is_crash, name
    (tmp_path / "broken.mlir").write_text(CORPUS[0][1][:-3])
    assert parses(tmp_path / "broken.mlir", binary) is False
    assert parses(tmp_path / "mutated.mlir", binary) is True
