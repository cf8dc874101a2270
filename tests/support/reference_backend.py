"""A test-only backend: the torch backend contract evaluated op by op in eager PyTorch (the
harness's reference evaluator), with no compiler at all. It implements
``harness.execute.backend.Backend`` in this one module; a test registers it in
``harness.execute.backends.BACKENDS`` and ports a model through it, which shows that the port
needs nothing else from a backend (docs/DEVELOPING.md, "a backend")."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from harness.compiler.outcomes import Outcome
from harness.compiler.records import RunRecord
from harness.compiler.targets import Target
from harness.execute.backend import BackendOptions, Compiled, Lowered, TestcaseSet
from harness.execute.backend_names import BackendName
from harness.execute.reference import evaluate_file
from harness.execute.refbackend import RefBackendResult, Stage
from harness.execute.signature import read_signature


class ReferenceBackend:
    """Runs the torch backend contract in PyTorch: "compiles" nothing."""

    name = BackendName.REFBACKEND  # the slot a test registers it in
    stage = "refbackend-lowering"   # a stage name the record knows
    checked_runs = False
    searchable = False
    child_modules: tuple[str, ...] = ()

    def search_runner(self, *, timeout_s: float, work_dir: str | os.PathLike | None) -> None:
        return None

    def __init__(self) -> None:
        self.ran: list[int] = []  # how many sets each run_sets call ran (the test reads it)

    def needs_linalg(self, target: Target) -> bool:
        return False

    def check(self, options: BackendOptions = BackendOptions()) -> None:
        """Nothing to install."""

    def unavailable(self, options: BackendOptions = BackendOptions()) -> str:
        """It runs wherever PyTorch does."""
        return ""

    def compile(self, lowered: Lowered, folder: Path, options: BackendOptions) -> Compiled:
        record = RunRecord(outcome=Outcome.SUCCESS, command=["true"], pipeline="none",
                           input_path=str(lowered.contract_ir), binary="none", returncode=0,
                           elapsed_s=0.0, output_path=str(lowered.contract_ir))
        return Compiled(self.stage, record, lowered.contract_ir, read_signature(lowered.contract_ir))

    def run_sets(self, compiled: Compiled, sets: Sequence[Sequence[np.ndarray]],
                 works: Sequence[Path], options: BackendOptions) -> list[RefBackendResult]:
        self.ran.append(len(sets))
        results = []
        for inputs in sets:
            try:
                ran = evaluate_file(compiled.artifact, list(inputs))
            except Exception as e:  # the run's failure, as a backend reports it
                results.append(RefBackendResult(compiled.signature.name, Stage.EXECUTION, error=str(e)))
                continue
            outputs = tuple(np.asarray(o.numpy() if hasattr(o, "numpy") else o) for o in ran.outputs)
            results.append(RefBackendResult(compiled.signature.name, outputs=outputs))
        return results

    def testcase(self, compiled: Compiled, sets: Sequence[TestcaseSet], folder: Path,
                 tolerance: tuple[float, float]) -> Path | None:
        return None

    def explain_failure(self, compiled: Compiled, lowered: Lowered,
                        sets: Sequence[tuple[str, Sequence[np.ndarray]]], folder: Path,
                        budget_s: float) -> RefBackendResult | None:
        return None
