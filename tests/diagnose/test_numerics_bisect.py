"""``harness bisect --numerics``: where the numbers go wrong, in how many RefBackend runs, and which
pass choices make it right. Real torch-mlir-opt, real RefBackend; the pool-flatten-mm miscompile
(lit_tests/execute/pool-flatten-mm-miscompile.mlir), and deliberately wrong values: an
evaluator that computes one op wrongly, so the lowering looks miscompiled at exactly that op."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.execute import ref_ops
from harness.diagnose.numerics import (
    Fault,
    NumericsBisectOptions,
    FunctionVerdict,
    bisect_numerics,
    check_ops,
)

from support import ROOT, harness as run_harness
from support.programs import CHAIN

# A numerics bisect lowers and runs RefBackend once per step of its search: 15 minutes before
# a command counts as hung (the shared default is 10).
harness = partial(run_harness, timeout=900)

MISCOMPILE = ROOT / "lit_tests/execute/pool-flatten-mm-miscompile.mlir"
POOL_SCRIPT = ROOT / "lit_tests/execute/Inputs/pool_flatten_mm.py"
LEGAL_POOL = ("builtin.module(torchscript-module-to-torch-backend-pipeline{backend-legal-ops="
              "aten.adaptive_avg_pool2d},torch-backend-to-linalg-on-tensors-backend-pipeline)")


@pytest.fixture
def sin_is_cos(monkeypatch):
    """The reference evaluator computes aten.sin as cos: to the search, the lowering of that one
    op is wrong (everything else agrees)."""
    monkeypatch.setitem(ref_ops.HANDLERS, "torch.aten.sin", lambda ev, op, args: (torch.cos(args[0]),))


def test_the_op_whose_values_are_wrong_is_named_in_log_runs(tmp_path, sin_is_cos):
    src = tmp_path / "chain.mlir"
    src.write_text(CHAIN)
    result = bisect_numerics(src, "torch-to-linalg", options=NumericsBisectOptions(out_dir=str(tmp_path)))
    assert result.verdict is FunctionVerdict.LOCALIZED
    assert [str(op.name) for op in result.chain] == ["aten.sin"]
    assert result.first_wrong().frames[0].line == 9 and result.first_wrong().wrong
    assert result.ops == 14 and result.runs <= 2 * math.log2(14)
    # Nothing a pass choice does makes cos out of sin: no one to blame among them.
    assert result.blame.fault is Fault.UNDETERMINED and not result.blame.fixes
    # The chain alone reproduces: the real evaluator says its lowering is right.
    alone = harness("check", result.piece_path, "--pipeline", "torch-to-linalg", "--inputs",
                    result.piece_inputs, "--out", tmp_path)
    assert alone.returncode == 0, alone.stdout
    with np.load(result.piece_inputs) as inputs, np.load(result.piece_expected) as expected:
        # the piece takes the value sin was given: 2 * sigmoid(tanh(x) * w + x), from the inputs
        with np.load(Path(result.work_dir) / "inputs.npz") as original:
            x, w = original["arg0"], original["arg1"]
        given = 2 / (1 + np.exp(-(np.tanh(x) * w + x)))
        np.testing.assert_allclose(inputs["arg0"], given, rtol=1e-5)
        np.testing.assert_allclose(expected["result0"], np.cos(given), rtol=1e-5)


def test_check_ops_is_the_localization_without_replays(tmp_path, sin_is_cos):
    src = tmp_path / "chain.mlir"
    src.write_text(CHAIN)
    result = check_ops(src, "torch-to-linalg", options=NumericsBisectOptions(out_dir=str(tmp_path)))
    assert result.verdict is FunctionVerdict.LOCALIZED and result.blame is None
    assert result.to_json()["chain"][0]["op"] == "aten.sin"


def test_right_numbers_take_one_run(tmp_path):
    src = tmp_path / "chain.mlir"
    src.write_text(CHAIN)
    result = check_ops(src, "torch-to-linalg", options=NumericsBisectOptions(out_dir=str(tmp_path)))
    assert result.verdict is FunctionVerdict.VERIFIED and result.runs == 1 and not result.chain
    assert "nothing to bisect" in result.detail


def test_issue_19_chain_and_the_pass_that_makes_it_wrong(tmp_path):
    proc = harness("bisect", MISCOMPILE, "--pipeline", "torch-to-linalg", "--numerics", "--json",
                   "--out", tmp_path)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["verdict"] == "localized"
    assert [c["op"] for c in result["chain"]] == ["aten.adaptive_avg_pool2d", "aten.view", "aten.mm"]
    assert [c["op"] for c in result["chain"] if c["wrong"]] == ["aten.mm"]
    lines = MISCOMPILE.read_text().splitlines()
    where = [next(i + 1 for i, line in enumerate(lines) if f"= torch.{op} " in line)
             for op in ("aten.adaptive_avg_pool2d", "aten.view", "aten.mm")]
    assert [f["line"] for c in result["chain"] for f in c["frames"]] == where
    assert result["runs"] <= result["bound"] == 2 * math.log2(7)
    blame = result["blame"]
    assert blame["fault"] == "RefBackend lowering"
    fixes = sorted(c["what"] for c in blame["choices"] if c["fixes"])
    assert fixes == ["aten.adaptive_avg_pool2d", "func.func(linalg-fuse-elementwise-ops)"]
    # the other RefBackend passes that change the code here leave the numbers wrong
    assert any(c["kind"] == "drop-refbackend-pass" and c["outcome"] == "numerics-mismatch"
               for c in blame["choices"])


def test_from_the_python_model_through_the_legal_pool_pipeline(tmp_path):
    raw = tmp_path / "pool_flatten_mm.mlir"
    raw.write_text(subprocess.run([sys.executable, str(POOL_SCRIPT)], capture_output=True, text=True,
                                  check=True, cwd=ROOT).stdout)
    proc = harness("bisect", raw, "--pipeline", LEGAL_POOL, "--numerics", "--out", tmp_path)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    # The traced locations: the pool's is torch's own line, flatten's and mm's the model's.
    assert lines[2].startswith("first wrong value: aten.mm at ")
    assert lines[2].split(" at ")[1].startswith(f"{POOL_SCRIPT}:15:0 (max abs diff")
    assert any(line.startswith("goes wrong together: aten.adaptive_avg_pool2d -> aten.view -> aten.mm")
               for line in lines)
    assert "at fault: RefBackend lowering" in proc.stdout


def test_torch_level_passes_that_change_values_are_named(tmp_path, monkeypatch):
    """When the IR at the contract already computes other values than the user's file, the
    fault is before any lowering: here an evaluator that gets the raw file's pool wrong."""
    raw = tmp_path / "pool_flatten_mm.mlir"
    raw.write_text(subprocess.run([sys.executable, str(POOL_SCRIPT)], capture_output=True, text=True,
                                  check=True, cwd=ROOT).stdout)
    original = ref_ops.handler_for

    def wrong_raw_flatten(op):
        if op.name == "torch.aten.flatten.using_ints":  # only in the raw file: decomposed after
            return lambda ev, o, args: (torch.flatten(args[0], args[1], args[2]) * 2,)
        return original(op)

    monkeypatch.setattr("harness.execute.reference.handler_for", wrong_raw_flatten)
    result = bisect_numerics(raw, "torchscript-to-torch,torch-to-linalg",
                             options=NumericsBisectOptions(out_dir=str(tmp_path)))
    assert result.verdict is FunctionVerdict.TORCH_LEVEL and result.runs == 0
    assert result.blame.fault is Fault.TORCH_LEVEL
    assert "torchscript-module-to-torch-backend-pipeline" in result.detail


def test_bad_usage(tmp_path):
    src = tmp_path / "chain.mlir"
    src.write_text(CHAIN)
    mixed = harness("bisect", src, "--pipeline", "torch-to-linalg", "--inputs", "x.npz")
    assert mixed.returncode == 2 and "--inputs go with --numerics" in mixed.stderr
    flags = harness("bisect", src, "--pipeline=-canonicalize", "--numerics")
    assert flags.returncode == 2 and "not pass flags" in flags.stderr
    assert "Traceback" not in flags.stderr
