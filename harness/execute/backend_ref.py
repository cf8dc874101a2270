"""The RefBackend as a :class:`~harness.execute.backend.Backend`: the linalg file lowered to LLVM
on the bindings (``refbackend-lowering``), each input set run by the ExecutionEngine in a child.

Runs are unchecked (MLIR's runtime op verification costs minutes of code generation on big
models); :meth:`RefBackend.explain_failure` lowers again with the checks for sets that crashed
or mismatched, so a bad access then aborts naming the op and the model's line.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from harness.compiler.irfile import unique_dir
from harness.compiler.targets import Target
from harness.errors import HarnessError, UsageError

from .backend import BackendOptions, Compiled, Lowered, TestcaseSet
from .backend_names import BackendName, Device
from .lowering import LLVM_PIPELINE
from .refbackend import (
    RefBackendOptions,
    RefBackendResult,
    Stage,
    execute_llvm,
    execute_llvm_sets,
    lower_to_llvm,
)
from .signature import read_signature
from .worker import RefBackendWorker

#: The checked rerun's time budget: this many times the unchecked run's, at least CHECKED_MIN_S.
CHECKED_BUDGET = 4.0
CHECKED_MIN_S = 60.0

#: What a failed runtime check prints (MLIR's ``generate-runtime-verification``).
RUNTIME_CHECK_FAILED = re.compile(r"Runtime op verification failed")


class RefBackend:
    """torch-mlir's RefBackend, with the harness's process isolation and runtime checks."""

    name = BackendName.REFBACKEND
    stage = Stage.LOWERING.value
    checked_runs = True
    searchable = True
    child_modules: tuple[str, ...] = ("harness.execute.bindings_tool", "harness.execute.jit_child",
                                      "harness.execute.worker")

    def __init__(self) -> None:
        self.run_seconds = 0.0  # the unchecked runs' wall time (the checked rerun's budget)
        self.checked: dict[Path, bool] = {}  # each checked lowering made, and whether it lowered

    def needs_linalg(self, target: Target) -> bool:
        return True

    def search_runner(self, *, timeout_s: float,
                      work_dir: str | os.PathLike | None) -> RefBackendWorker:
        """The worker child that keeps the MLIR bindings loaded between the search's runs."""
        return RefBackendWorker(timeout_s=timeout_s, work_dir=work_dir)

    def check(self, options: BackendOptions = BackendOptions()) -> None:
        """The RefBackend is the wheel's: it runs wherever the harness does, in a child or in
        the harness's process, on the CPU alone (its JIT is LLVM's for the host)."""
        if options.device is not Device.CPU:
            raise UsageError(
                f"--device {options.device.value} runs the compiled module on a GPU, which the "
                "RefBackend cannot: it JIT-compiles linalg for this machine's CPU (torch-mlir's test "
                f"backend). Use --backend iree with --device {options.device.value} (IREE's cuda "
                "target; pip install -e '.[iree]'), or leave --device out.")

    def unavailable(self, options: BackendOptions = BackendOptions()) -> str:
        """It runs wherever it compiles."""
        return ""

    def compile(self, lowered: Lowered, folder: Path, options: BackendOptions) -> Compiled:
        # a refused signature raises first
        signature = lowered.signature or read_signature(lowered.contract_ir)
        llvm = folder / f"{lowered.stem}.llvm.mlir"
        record = lower_to_llvm(lowered.linalg, llvm, options=RefBackendOptions(
            timeout_s=options.timeout_s, runtime_checks=options.runtime_checks))
        return Compiled(self.stage, record, llvm, signature, harness_rerun=True,
                        rerun=["run", str(lowered.linalg), "--pipeline", LLVM_PIPELINE])

    def run_sets(self, compiled: Compiled, sets: Sequence[Sequence[np.ndarray]],
                 works: Sequence[Path], options: BackendOptions) -> list[RefBackendResult]:
        """The sets in one child that JITs the module once (refbackend.execute_llvm_sets)."""
        start = time.perf_counter()
        try:
            results = execute_llvm_sets(compiled.artifact, [list(s) for s in sets], compiled.signature,
                                        list(works), options=RefBackendOptions(
                                            timeout_s=options.timeout_s, isolate=not options.in_process,
                                            opt_level=options.opt_level,
                                            runtime_checks=options.runtime_checks))
        except HarnessError as error:  # inputs that do not fit the lowered signature
            results = [RefBackendResult(compiled.signature.name, Stage.EXECUTION, error=str(error))
                       for _ in sets]
        self.run_seconds = max(self.run_seconds, time.perf_counter() - start)
        return results

    def testcase(self, compiled: Compiled, sets: Sequence[TestcaseSet], folder: Path,
                 tolerance: tuple[float, float]) -> Path | None:
        """The RefBackend is the harness's own: `harness check` is its test case."""
        return None

    def explain_failure(self, compiled: Compiled, lowered: Lowered,
                        sets: Sequence[tuple[str, Sequence[np.ndarray]]], folder: Path,
                        budget_s: float) -> RefBackendResult | None:
        """The first of ``sets`` whose run, lowered again with runtime op verification, fails a
        runtime check. The checked lowering and runs together get CHECKED_BUDGET times the
        unchecked run's time (at least CHECKED_MIN_S, at most ``budget_s``): its code generation
        grows faster than linear on big models (gemma3n_vision: 9 s of lowering, then each
        set's run cut at 60 s, 129 s for no answer, when each had a budget of its own)."""
        deadline = time.monotonic() + self._checked_budget(budget_s)
        for which, inputs in sets:
            result = self._checked(compiled, lowered, which, inputs, folder, deadline)
            if result is not None and not result.ok and \
                    RUNTIME_CHECK_FAILED.search(f"{result.error}\n{result.stderr}"):
                return result
        return None

    def checked_run(self, compiled: Compiled, lowered: Lowered, which: str,
                    inputs: Sequence[np.ndarray], folder: Path, budget_s: float) -> RefBackendResult | None:
        """``inputs`` run on the checked lowering, whatever comes of it: the set that did not
        crash is run under the same checks as the one that did, so "it runs" is said of the
        same code. The budget as for :meth:`explain_failure`."""
        deadline = time.monotonic() + self._checked_budget(budget_s)
        return self._checked(compiled, lowered, which, inputs, folder, deadline)

    def _checked_budget(self, budget_s: float) -> float:
        return min(budget_s, max(CHECKED_MIN_S, CHECKED_BUDGET * self.run_seconds))

    def _checked(self, compiled: Compiled, lowered: Lowered, which: str, inputs: Sequence[np.ndarray],
                 folder: Path, deadline: float) -> RefBackendResult | None:
        """One set's run on the checked lowering (made once per module); None when that
        lowering failed, the time is up, or the inputs do not fit."""
        checked_llvm = compiled.artifact.with_name(
            compiled.artifact.name.removesuffix(".llvm.mlir") + ".checked.llvm.mlir")
        checked = RefBackendOptions(timeout_s=max(deadline - time.monotonic(), 1e-3), runtime_checks=True)
        if checked_llvm not in self.checked:
            self.checked[checked_llvm] = lower_to_llvm(lowered.linalg, checked_llvm, options=checked).ok
        left = deadline - time.monotonic()
        if not self.checked[checked_llvm] or left <= 0:
            return None
        work = unique_dir(f"execution-{which}-checked-", folder)
        try:
            return execute_llvm(checked_llvm, list(inputs), compiled.signature,
                                options=replace(checked, timeout_s=left), work_dir=work)
        except HarnessError:
            return None
