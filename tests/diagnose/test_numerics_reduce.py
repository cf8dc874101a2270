"""``harness reduce --numerics``: shrink IR while its lowered numbers stay wrong, the reference
evaluator on each candidate being the oracle; the inputs keep their meaning through every edit.
Real torch-mlir-opt and RefBackend; the pool-flatten-mm miscompile and a deliberately wrong evaluator."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.compiler.mlir import new_context
from harness.errors import NoMiscompileError
from harness.execute import ref_ops
from harness.execute.reference import evaluate_file
from harness.diagnose.reduce.miscompile import NumericsReduceOptions, reduce_numerics

from support import harness as run_harness
from support.programs import CHAIN
from test_numerics_bisect import MISCOMPILE

# A numerics reduction lowers and runs RefBackend on each candidate: 15 minutes before a command
# counts as hung (the shared default is 10).
harness = partial(run_harness, timeout=900)


@pytest.fixture
def sin_is_cos(monkeypatch):
    monkeypatch.setitem(ref_ops.HANDLERS, "torch.aten.sin", lambda ev, op, args: (torch.cos(args[0]),))


def test_reduces_to_the_wrong_op_fed_the_values_it_saw(tmp_path, sin_is_cos):
    src = tmp_path / "chain.mlir"
    src.write_text(CHAIN)
    out = tmp_path / "small.mlir"
    result = reduce_numerics(src, "torch-to-linalg", options=NumericsReduceOptions(
        output_path=out, out_dir=str(tmp_path), budget_s=300))
    assert result.ops_before == 14 and result.computing_before == 12
    assert result.computing_ops == ["aten.sin"] and result.ops_after == 1
    text = out.read_text()
    assert "torch.aten.sin" in text and "harness." not in text  # the reducer's keys are gone
    with np.load(result.inputs_path) as inputs:
        [given] = [inputs[k] for k in inputs.files]
    # The argument stands for the value sin was given in the original function, computed here
    # from the original inputs with numpy: 2 * sigmoid(tanh(x) * w + x).
    with np.load(Path(tmp_path).glob("harness-numerics-*/inputs.npz").__next__()) as original:
        x, w = original["arg0"], original["arg1"]
    np.testing.assert_allclose(given, 2 / (1 + np.exp(-(np.tanh(x) * w + x))), rtol=1e-5)
    with np.load(result.expected_path) as expected, np.load(result.actual_path) as actual:
        np.testing.assert_allclose(expected["result0"], np.cos(given), rtol=1e-5)  # the wrong evaluator's
        np.testing.assert_allclose(actual["result0"], np.sin(given), rtol=1e-5)    # the lowering's
    # The real evaluator agrees with the lowering: the only wrong thing was the patched one.
    check = harness("check", out, "--pipeline", "torch-to-linalg", "--inputs", result.inputs_path,
                    "--out", tmp_path)
    assert check.returncode == 0 and check.stdout.startswith("verified: "), check.stdout


def test_issue_19_stays_wrong_and_the_files_reproduce(tmp_path):
    out = tmp_path / "small.mlir"
    proc = harness("reduce", MISCOMPILE, "--pipeline", "torch-to-linalg", "--numerics", "-o", out)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"reduced {MISCOMPILE}: 7 -> 7 ops (3 -> 3 computing: "
                               "aten.adaptive_avg_pool2d -> aten.view -> aten.mm) in ")
    assert " s CPU" in lines[0]
    assert lines[1] == ("  keeps: numerics-mismatch (max abs diff 0.0893) "
                        "through torch-to-linalg and the RefBackend")
    inputs = tmp_path / "small.inputs.npz"
    assert lines[3].endswith(f"check {out} --pipeline torch-to-linalg --inputs {inputs}")
    check = harness("check", out, "--pipeline", "torch-to-linalg", "--inputs", inputs, "--out", tmp_path)
    assert check.returncode == 1 and check.stdout.startswith("numerics-mismatch: ")
    # expected.npz holds the reference evaluator's values for those inputs, recomputed here
    with np.load(inputs) as given, np.load(tmp_path / "small.expected.npz") as expected:
        with new_context():
            reference = evaluate_file(out, [given["arg0"], given["arg1"]])
        np.testing.assert_array_equal(expected["result0"], reference.outputs[0].numpy())
        np.testing.assert_allclose(expected["result0"], given["arg0"].mean((2, 3)) @ given["arg1"], atol=1e-6)


def test_right_numbers_are_not_reduced(tmp_path):
    src = tmp_path / "chain.mlir"
    src.write_text(CHAIN)
    with pytest.raises(NoMiscompileError, match=r"no miscompile: .* gives the reference's values"):
        reduce_numerics(src, "torch-to-linalg", options=NumericsReduceOptions(
            output_path=tmp_path / "small.mlir", out_dir=str(tmp_path)))
    proc = harness("reduce", src, "--pipeline", "torch-to-linalg", "--numerics", "-o", tmp_path / "s.mlir")
    assert proc.returncode == 2 and proc.stderr.startswith("harness: error: no miscompile: ")
    assert "Traceback" not in proc.stderr


def test_numerics_flags_need_numerics(tmp_path):
    proc = harness("reduce", MISCOMPILE, "--pipeline", "torch-to-linalg", "-o", tmp_path / "s.mlir",
                   "--tolerance", "f32=1,1")
    assert proc.returncode == 2 and "--tolerance go with --numerics" in proc.stderr
