"""A port's runs leave MLIR's runtime checks out; a set whose run crashed or mismatched runs again
with them, within a budget, and only a failed runtime check replaces the run's own result."""

from __future__ import annotations

import textwrap
from pathlib import Path

import torch

from harness.compiler.targets import Target
from harness.execute import backend_ref
from harness.execute.backend import BackendOptions, Lowered
from harness.execute.lowering import run_stage

from support.programs import FLATTEN


class _Runs:
    """The RefBackend's checked rerun (explain_failure) on one compiled module."""

    def __init__(self, tmp_path: Path):
        src, backend, linalg = (tmp_path / f"m.{s}.mlir" for s in ("torch", "backend", "linalg"))
        src.write_text(textwrap.dedent(FLATTEN))
        for stage, a, b in (("function-to-torch", src, backend), ("torch-to-linalg", backend, linalg)):
            assert run_stage(a, stage, output_path=b).ok
        self.backend = backend_ref.RefBackend()
        self.lowered = Lowered(Target.LINALG, src, linalg, linalg, "m")
        self.compiled = self.backend.compile(self.lowered, tmp_path, BackendOptions())
        assert self.compiled.record.ok
        self.folder = tmp_path
        self.checked_llvm = tmp_path / "m.checked.llvm.mlir"

    def first_failure(self, sets):
        return self.backend.explain_failure(self.compiled, self.lowered, sets, self.folder, 600.0)


def _runs(tmp_path: Path) -> _Runs:
    return _Runs(tmp_path)


def _set(seq: int):
    return "traced", [torch.ones(2, seq, 4).numpy()]


def test_the_checked_rerun_names_the_failed_check(tmp_path):
    runs = _runs(tmp_path)
    assert runs.first_failure([_set(1)]) is None  # the cast holds: nothing to name
    failed = runs.first_failure([_set(3)])
    assert failed is not None and failed.signal == "SIGABRT"
    assert "Runtime op verification failed" in failed.error and "memref.cast" in failed.error
    assert b"Runtime op verification".hex().upper() in runs.checked_llvm.read_text()


def test_a_checked_rerun_out_of_its_budget_leaves_the_runs_own_result(tmp_path, monkeypatch):
    monkeypatch.setattr(backend_ref, "CHECKED_MIN_S", 0.01)  # the lowering alone takes longer
    runs = _runs(tmp_path)
    assert runs.first_failure([_set(3)]) is None
    assert runs.backend.checked[runs.checked_llvm] is False


def test_the_checked_lowering_and_runs_share_one_budget(tmp_path, monkeypatch):
    """What the checked lowering and a set's run took is gone from the next set's time, and no
    run starts past the budget (gemma3n_vision's two sets each ran into a 60 s budget of their
    own). Each run here is held 4 s longer than it takes: of a 6 s budget, the first run gets
    what the lowering left, the second what is left after the first, a third none."""
    import itertools
    import time

    monkeypatch.setattr(backend_ref, "CHECKED_MIN_S", 6.0)
    runs = _runs(tmp_path)
    budgets: list[float] = []
    real = backend_ref.execute_llvm

    def held(*args, options, **kwargs):
        budgets.append(options.timeout_s)
        time.sleep(4.0)
        return real(*args, options=options, **kwargs)

    monkeypatch.setattr(backend_ref, "execute_llvm", held)
    assert runs.first_failure([_set(1), _set(1), _set(1)]) is None
    assert 1 <= len(budgets) <= 2 and budgets[0] <= 6.0
    assert all(later <= first - 4.0 for first, later in itertools.pairwise(budgets))
