"""The ONNX frontend's pipeline (pipelines.toml ``onnx-to-torch``) keeps the ops upstream's own
``onnx`` e2e config keeps backend-legal (``aten.flatten.using_ints``, ``aten.adaptive_avg_pool1d``,
``aten.unflatten.int``): decomposed, a flatten of dynamic sizes becomes an ``aten.view`` to
``[-1, 1, 1]`` that torch-to-linalg lowers wrongly, and the code aborts ("mismatching contracting
dimension"; tools/onnx_conformance.py found it on IndexTensorSelectDimModule_basic, which upstream's
config passes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from harness.compiler import pipelines
from harness.compiler.stages import StageHooks, StageOptions, run_stages
from harness.execute.backend import BackendOptions, run_linalg
from harness.execute.backends import backend
from harness.execute.lowering import run_stage

# What the wheel's onnx_importer makes of torch.onnx.export's graph for
# torch.ops.aten.index(a, (None, ind, None)) with every size dynamic.
GATHER_ND = """\
module {
  func.func @main_graph(%arg0: !torch.vtensor<[?,?,?],f32>, %arg1: !torch.vtensor<[?,?],si64>) -> !torch.vtensor<[?,?,?,?],f32> attributes {torch.onnx_meta.ir_version = 10 : si64, torch.onnx_meta.opset_version = 20 : si64, torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "2.13.0"} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<-1> : tensor<1xsi64>} : () -> !torch.vtensor<[1],si64>
    %1 = torch.operator "onnx.Transpose"(%arg0) {torch.onnx.perm = [1 : si64, 0 : si64, 2 : si64]} : (!torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?],f32>
    %2 = torch.operator "onnx.Unsqueeze"(%arg1, %0) : (!torch.vtensor<[?,?],si64>, !torch.vtensor<[1],si64>) -> !torch.vtensor<[?,?,1],si64>
    %3 = torch.operator "onnx.GatherND"(%1, %2) {torch.onnx.batch_dims = 0 : si64} : (!torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,1],si64>) -> !torch.vtensor<[?,?,?,?],f32>
    %4 = torch.operator "onnx.Transpose"(%3) {torch.onnx.perm = [2 : si64, 0 : si64, 1 : si64, 3 : si64]} : (!torch.vtensor<[?,?,?,?],f32>) -> !torch.vtensor<[?,?,?,?],f32>
    return %4 : !torch.vtensor<[?,?,?,?],f32>
  }
}
"""  # noqa: E501 (the importer's IR, one op a line as it prints it)

UPSTREAM_ONNX_LEGAL = ("aten.flatten.using_ints", "aten.adaptive_avg_pool1d", "aten.unflatten.int")


def test_onnx_to_torch_keeps_upstreams_backend_legal_ops():
    textual = pipelines.default().get("onnx-to-torch").textual()
    assert f"backend-legal-ops={','.join(UPSTREAM_ONNX_LEGAL)}" in textual


def test_a_dynamic_gather_nd_through_the_onnx_pipeline_runs_right(tmp_path: Path):
    source = tmp_path / "gather_nd.mlir"
    source.write_text(GATHER_ND)

    def run(input_path, stage, _textual, out, options):
        return run_stage(input_path, stage, output_path=out, options=options)

    stages = run_stages(source, ("onnx-to-torch", "torch-to-linalg"), tmp_path, stem="gather_nd",
                        options=StageOptions(timeout_s=120), hooks=StageHooks(run=run))
    assert all(s.ok for s in stages), [str(s.record.first_error()) for s in stages]
    assert "torch.aten.flatten.using_ints" in Path(stages[0].output_path).read_text()
    g = torch.Generator().manual_seed(0)
    a, ind = torch.rand(2, 4, 6, generator=g), torch.randint(0, 3, (2, 3), generator=g)
    result = run_linalg(backend("refbackend"), Path(stages[1].output_path), [a.numpy(), ind.numpy()],
                        None, tmp_path, BackendOptions(timeout_s=120))
    assert result.ok, (result.error, result.signal)
    np.testing.assert_array_equal(result.outputs[0], torch.ops.aten.index(a, (None, ind, None)).numpy())
