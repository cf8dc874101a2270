"""A run-time failure's reduced program still returns a value (the broadcast abort's reduced.mlir
once returned nothing, so no one could run it and see the abort)."""

from __future__ import annotations

import numpy as np

from harness.diagnose.reduce.runtime import RuntimeReduceOptions, reduce_runtime

# The dynamic size-1 broadcast abort (tests/diagnose/test_runtime_report.py's BROADCAST_ABORT, shorter).
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
ABORT = """
func.func @logaddexp_dynamic(%arg0: !torch.vtensor<[?,?,?],f32>, %arg1: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?],f32> {
  %float1 = torch.constant.float 1.000000e+00
  %0 = torch.aten.sub.Tensor %arg0, %arg1, %float1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32>, !torch.float -> !torch.vtensor<[?,?,?],f32>
  %1 = torch.aten.abs %0 : !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  %2 = torch.aten.neg %1 : !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  %3 = torch.aten.exp %2 : !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  return %3 : !torch.vtensor<[?,?,?],f32>
}
"""  # noqa: E501


def test_the_reduced_abort_returns_a_value(tmp_path):
    src = tmp_path / "abort.mlir"
    src.write_text(ABORT)
    np.savez(tmp_path / "inputs.npz", np.ones((3, 2, 4), "f4"), np.ones((3, 1, 4), "f4"))
    out = tmp_path / "reduced.mlir"
    result = reduce_runtime(src, "torch-to-linalg", options=RuntimeReduceOptions(
        output_path=out, inputs_path=str(tmp_path / "inputs.npz"), budget_s=60, out_dir=str(tmp_path)))
    text = out.read_text()
    assert result.failure.signal == "SIGABRT"
    assert "torch.aten.sub.Tensor" in text
    ret = next(line for line in text.splitlines() if line.strip().startswith("return"))
    assert ret.strip().startswith("return %"), text
