"""``harness check`` end to end, as a user runs it, and the pool-flatten-mm miscompile (ResNet18's
pool -> flatten -> mm with adaptive_avg_pool2d kept backend-legal) found with it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from harness import torchscript
from harness.compiler import pipelines
from harness.execute.check import CheckOptions, CheckOutcome, check_file
from harness.execute.closeness import compare
from harness.execute.refbackend import RefBackendOptions, run_refbackend

from support import harness
from support.programs import SMALL

LEGAL_POOL = ("builtin.module(torchscript-module-to-torch-backend-pipeline{backend-legal-ops="
              "aten.adaptive_avg_pool2d},torch-backend-to-linalg-on-tensors-backend-pipeline)")


def test_check_verifies_a_small_module(tmp_path):
    src = tmp_path / "small.mlir"
    src.write_text(SMALL)
    # Hand-written torch IR is not yet at the backend contract: function-to-torch first.
    proc = harness("check", src, "--pipeline", "function-to-torch,torch-to-linalg", "--random-inputs",
                   "--seed", "3", "--out", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == (f"verified: @forward of {src} through function-to-torch,torch-to-linalg and the "
                        "RefBackend matches the reference evaluator (5 ops in eager PyTorch)")
    assert lines[1] == "  inputs: random (seed 3; integers in [0, 2))"
    assert lines[2].startswith("  output 0: float32[2,3]  max abs diff ")
    # the float output is judged by the float64 rule (the file evaluated again in float64)
    flat, _, rule = lines[2].partition("; by float64, which decides: ")
    assert flat.endswith("ok") and rule.startswith("error against float64 ") and rule.endswith("pass")
    assert lines[3] == "  output 1: int64[]  max abs diff 0  max rel diff 0  (exact)  ok"
    [work] = list(tmp_path.glob("harness-check-*"))
    with np.load(work / "inputs.npz") as inputs, np.load(work / "actual.npz") as actual:
        x, m = inputs["arg0"], inputs["arg1"]
        assert actual["result1"] == m.sum()  # counted by numpy, not by the code under test
        np.testing.assert_allclose(actual["result0"], np.where(m, 0, 1 / (1 + np.exp(-x))), rtol=1e-6)

    as_json = harness("check", src, "--pipeline", "function-to-torch,torch-to-linalg", "--json",
                      "--out", tmp_path)
    record = json.loads(as_json.stdout)
    assert record["schema"] == "harness.check/1" and record["outcome"] == "verified"
    assert record["signature"]["args"] == [{"dtype": "float32", "shape": [2, 3]},
                                           {"dtype": "bool", "shape": [2, 3]}]
    assert [o["ok"] for o in record["numerics"]["outputs"]] == [True, True]
    assert record["refbackend"]["lowering"]["outcome"] == "success"


def test_check_reports_a_pipeline_failure_with_its_command(tmp_path):
    src = tmp_path / "scalar.mlir"
    src.write_text("""
func.func @forward(%arg0: !torch.vtensor<[],f32>) -> !torch.vtensor<[],f64> {
  %0 = torch.aten.ScalarImplicit %arg0 : !torch.vtensor<[],f32> -> !torch.float
  %1 = torch.prim.NumToTensor.Scalar %0 : !torch.float -> !torch.vtensor<[],f64>
  return %1 : !torch.vtensor<[],f64>
}
""")
    proc = harness("check", src, "--pipeline", "torch-to-linalg", "--out", tmp_path)
    assert proc.returncode == 1
    out = proc.stdout
    assert out.startswith(f"fails at torch-to-linalg: @forward of {src}")
    assert "'torch_c.to_f64' op operand #0 must be Torch FloatType, but got 'f32'" in out
    assert ("reproduce: torch-mlir-opt "
            "-pass-pipeline='builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)'") in out


def test_check_bad_usage_is_exit_2_and_one_paragraph(tmp_path):
    src = tmp_path / "small.mlir"
    src.write_text(SMALL)
    missing = harness("check", tmp_path / "absent.mlir", "--pipeline", "torch-to-linalg")
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    np.savez(tmp_path / "wrong.npz", np.zeros((2, 3), np.float64), np.zeros((2, 3), bool))
    wrong = harness("check", src, "--pipeline", "torch-to-linalg", "--inputs", tmp_path / "wrong.npz")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith(f"harness: error: the inputs from {tmp_path / 'wrong.npz'} do not fit: "
                                   "argument 0 is float64, expected float32.")
    assert "f32[2,3], i1[2,3]" in wrong.stderr
    tolerance = harness("check", src, "--pipeline", "torch-to-linalg", "--tolerance", "f32=0.1")
    assert tolerance.returncode == 2 and "--tolerance expects DTYPE=RTOL,ATOL" in tolerance.stderr
    both = harness("check", src, "--pipeline", "torch-to-linalg", "--inputs", "x.npz", "--random-inputs")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_harness_run_takes_the_refbackend_pipeline_to_the_bindings(tmp_path):
    src = tmp_path / "id.linalg.mlir"
    src.write_text("func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                   "  return %x : tensor<2xf32>\n}\n")
    out = tmp_path / "id.llvm.mlir"
    proc = harness("run", src, "--pipeline", "linalg-to-llvm", "-o", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("success: id.linalg.mlir through "
                                  "builtin.module(func.func(linalg-generalize-named-ops),")
    assert "llvm.func @_mlir_ciface_forward(" in out.read_text()
    # torch-level IR fails there, and the command to paste is the bindings' one
    src.write_text(SMALL)
    failed = harness("run", src, "--pipeline", "linalg-to-llvm")
    assert failed.returncode == 1
    assert "ops with unknown memory side effects are not supported" in failed.stdout
    assert f"reproduce: {sys.executable} -m harness.execute.bindings_tool {src} " in failed.stdout


class PoolFlattenMm(torch.nn.Module):
    def forward(self, x, w):
        return torch.mm(torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1), w)


@pytest.fixture(scope="module")
def resnet_tail(tmp_path_factory):
    """The raw TorchScript IR of ResNet18's tail, through the project's importer, and the inputs
    of the first measurement (x 1x8x7x7, w 8x3, seed 0)."""
    folder = tmp_path_factory.mktemp("resnet-tail")
    torch.manual_seed(0)
    x, w = torch.randn(1, 8, 7, 7), torch.randn(8, 3)
    raw = torchscript.compile(PoolFlattenMm(), (x, w), output_type="raw", use_tracing=True)
    path = folder / "pool_flatten_mm.mlir"
    path.write_text(str(raw))
    np.savez(folder / "inputs.npz", x.numpy(), w.numpy())
    return path, folder / "inputs.npz", PoolFlattenMm()(x, w)


def test_resnet_tail_miscompiles_with_the_pool_kept_backend_legal(resnet_tail, tmp_path):
    raw, inputs, eager = resnet_tail
    legal = harness("check", raw, "--pipeline", LEGAL_POOL, "--inputs", inputs, "--out", tmp_path, "--json")
    assert legal.returncode == 1
    record = json.loads(legal.stdout)
    assert record["outcome"] == "numerics-mismatch"
    [out] = record["numerics"]["outputs"]
    assert out["mismatched"] == 2 and 0.1 < out["max_abs_diff"] < 0.2  # off by ~0.16
    # the reference evaluator ran the imported IR itself, and agrees with eager
    with np.load(Path(record["work_dir"]) / "expected.npz") as expected:
        np.testing.assert_allclose(expected["result0"], eager.detach().numpy(), rtol=0, atol=0)

    decomposed = harness("check", raw, "--pipeline", "torchscript-to-torch,torch-to-linalg",
                         "--inputs", inputs, "--out", tmp_path)
    assert decomposed.returncode == 0, decomposed.stdout
    assert decomposed.stdout.startswith("verified: ")


def test_resnet_tail_goes_wrong_in_the_refbackends_elementwise_fusion(resnet_tail, tmp_path):
    """Where the numbers go wrong: the linalg from torch-to-linalg is right when the RefBackend's
    lowering leaves out linalg-fuse-elementwise-ops; with it, the division by the pool's window
    is fused into the multi-result reduction (whose count result is indexed by fewer parallel
    dims) and the sum is divided too early."""
    raw, inputs, _ = resnet_tail
    passes = pipelines.default().get("linalg-to-llvm").passes
    assert "func.func(linalg-fuse-elementwise-ops)" in passes
    kept = (p for p in passes if p != "func.func(linalg-fuse-elementwise-ops)")
    unfused = "builtin.module(" + ",".join(kept) + ")"
    fused = check_file(raw, CheckOptions(pipeline=LEGAL_POOL, inputs_path=str(inputs),
                                         out_dir=str(tmp_path), in_process=True))
    assert fused.outcome is CheckOutcome.NUMERICS_MISMATCH
    # the same linalg file lowered without the fusion, on the same inputs, against the same reference
    linalg, work = Path(fused.records[-1].output_path), Path(fused.work_dir)
    with np.load(work / "inputs.npz") as args, np.load(work / "expected.npz") as expected:
        ran = run_refbackend(linalg, [args[k] for k in args.files], signature=fused.signature,
                             options=RefBackendOptions(pipeline=unfused, isolate=False,
                                                       work_dir=str(tmp_path)))
        assert ran.ok, ran.error
        assert compare(list(ran.outputs), [expected[k] for k in expected.files]).ok
