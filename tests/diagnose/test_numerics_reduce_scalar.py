"""The numerics reducer's oracle on a candidate whose result is a scalar: the reference evaluator
computes it, but the RefBackend runs only tensors in and out, so the candidate is not kept and
no run is spent on it. A tensor-returning twin of it is run (the oracle can say yes to running)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from harness.diagnose.reduce.miscompile import NumericsReduceOptions, NumericsSession
from harness.execute.probe import ProbeOptions
from harness.execute.worker import RefBackendWorker

ARG = '%arg0: !torch.vtensor<[2,3],f32> {harness.arg_source = "in0"}'
RETURNS_INT = f"""
func.func @forward({ARG}) -> !torch.int {{
  %int0 = torch.constant.int 0
  %0 = torch.aten.size.int %arg0, %int0 : !torch.vtensor<[2,3],f32>, !torch.int -> !torch.int
  return %0 : !torch.int
}}
"""
RETURNS_TENSOR = f"""
func.func @forward({ARG}) -> !torch.vtensor<[2,3],f32> {{
  %0 = torch.aten.sin %arg0 : !torch.vtensor<[2,3],f32> -> !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}}
"""


def _session(tmp_path: Path, worker: RefBackendWorker) -> NumericsSession:
    out = tmp_path / "reduced.mlir"
    probe = ProbeOptions(to_linalg="torch-backend-to-linalg-on-tensors-backend-pipeline")
    session = NumericsSession(tmp_path, out, NumericsReduceOptions(output_path=out), probe, worker,
                              time.monotonic())
    session.table["in0"] = np.arange(6, dtype=np.float32).reshape(2, 3)
    return session


def test_a_candidate_returning_a_torch_int_is_not_kept_and_not_run(tmp_path):
    with RefBackendWorker(timeout_s=120, work_dir=tmp_path) as worker:
        session = _session(tmp_path, worker)
        assert session.interesting(RETURNS_INT) is False
        assert session.tries == 1 and worker.runs == 0  # judged, and refused before the worker
        assert session.pending is None


def test_its_tensor_twin_is_run(tmp_path):
    with RefBackendWorker(timeout_s=120, work_dir=tmp_path) as worker:
        session = _session(tmp_path, worker)
        # sin lowers right: run, and not kept (the numbers match), so the skip above is the int's
        assert session.interesting(RETURNS_TENSOR) is False
        assert session.tries == 1 and worker.runs == 1
