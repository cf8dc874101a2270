"""Property: ``run_pipeline`` on mutated torch IR never raises and never misclassifies.

Inputs are the crashers (tests/data/crashers, the hangs left out) with numbers, op names,
types and lines changed by tests/support/mutations.py, each run through the pass it crashes. What
the record says is checked against what the process did, not against the classifier:

- a run that died by a signal, or printed LLVM's crash banner, is never a success (or any
  diagnostic outcome);
- a file torch-mlir-opt cannot even parse with its verifier off is a parse error, and a file it
  parses is not.

``tools/fuzz.py`` runs the same check on 10,000+ inputs and keeps new crashers.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.compiler.builds import resolve

from support.fuzz_targets import UNSYMBOLIZED, parses, run_and_check
from support.mutations import IRMutator, ir_corpus

CORPUS = ir_corpus()
MUTATOR = IRMutator([text for _, text, _ in CORPUS])
EXAMPLES = int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "300"))
PROPERTY = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(rng=st.randoms(use_true_random=False), seed=st.sampled_from(CORPUS))
def test_run_on_mutated_ir_never_raises_or_misclassifies(rng, seed):
    _name, text, flag = seed
    binary = resolve().path
    mutated = MUTATOR.mutate(text, rng)
    with tempfile.TemporaryDirectory(prefix="harness-fuzz-") as workdir:
        record, wrong = run_and_check(mutated, flag, binary, Path(workdir), UNSYMBOLIZED)
    assert not wrong, f"{wrong}\n--- input ---\n{mutated}\n--- stderr ---\n{record.stderr[:4000]}"


def test_the_unmutated_corpus_crashes_and_the_oracle_sees_it(tmp_path):
    # The check can fail: each seed crashes for real, and a broken file is told from a good one.
    binary = resolve().path
    for name, text, flag in CORPUS:
        record, wrong = run_and_check(text, flag, binary, tmp_path, UNSYMBOLIZED)
        assert record.outcome.is_crash and not wrong, name
    (tmp_path / "broken.mlir").write_text(CORPUS[0][1][:-3])
    assert parses(tmp_path / "broken.mlir", binary) is False
    assert parses(tmp_path / "mutated.mlir", binary) is True
