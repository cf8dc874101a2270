"""Issue 19's ResNet18 case end to end, on the real model: Hugging Face's ResNet-18 (basic blocks,
depths 2-2-2-2, random weights; widths 8..64 to keep the test quick: the same ops as 64..512)
traced and imported by the project's importer, lowered with aten.adaptive_avg_pool2d kept
backend-legal. ``harness check`` flags it, ``bisect --numerics`` names the tail where it starts,
and ``report --numerics`` reduces it to the tail and writes a bundle that reproduces against the
pinned build. ``tools/bench_numerics.py`` measures the same at full width."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from harness.compiler import builds

from support import ROOT, harness as run_harness

# ResNet-18's numerics commands lower and run the whole model many times: 20 minutes before a
# command counts as hung (the shared default is 10).
harness = partial(run_harness, timeout=1200)

LEGAL_POOL = ("builtin.module(torchscript-module-to-torch-backend-pipeline{backend-legal-ops="
              "aten.adaptive_avg_pool2d},torch-backend-to-linalg-on-tensors-backend-pipeline)")
TAIL = ["aten.adaptive_avg_pool2d", "aten.view", "aten.mm"]


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    folder = tmp_path_factory.mktemp("resnet18")
    subprocess.run([sys.executable, str(ROOT / "tools/resnet18_case.py"), "--tiny", "-o", str(folder)],
                   check=True, capture_output=True, timeout=600)
    return folder / "resnet18.mlir", folder / "inputs.npz", folder


def test_check_flags_it(resnet):
    ir, inputs, folder = resnet
    proc = harness("check", ir, "--pipeline", LEGAL_POOL, "--inputs", inputs, "--out", folder, "--json")
    assert proc.returncode == 1
    record = json.loads(proc.stdout)
    assert record["outcome"] == "numerics-mismatch"
    assert record["numerics"]["outputs"][0]["mismatched"] == 1  # the first logit is right


def test_bisect_names_the_tail(resnet):
    ir, inputs, folder = resnet
    proc = harness("bisect", ir, "--pipeline", LEGAL_POOL, "--numerics", "--inputs", inputs,
                   "--out", folder, "--json")
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    # the classifier's weight is transposed inside the chain (it is fed as an argument)
    assert [c["op"] for c in result["chain"]] == [*TAIL[:2], "aten.transpose.int", "aten.mm"]
    assert result["ops"] > 400 and result["runs"] <= 2 * math.log2(result["ops"])
    mm = result["chain"][-1]
    assert mm["wrong"] and mm["frames"][0]["file"].endswith("torch/nn/modules/linear.py")
    assert result["blame"]["fault"] == "RefBackend lowering"
    assert "func.func(linalg-fuse-elementwise-ops)" in [c["what"] for c in result["blame"]["choices"]
                                                        if c["fixes"]]


def test_report_reduces_it_to_the_tail_and_reproduces(resnet, tmp_path):
    ir, inputs, _ = resnet
    proc = harness("report", ir, "--pipeline", LEGAL_POOL, "--numerics", "--inputs", inputs,
                   "--out", tmp_path, "--budget-s", "300", "--json")
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["chain"] == TAIL and result["ops_after"] <= 7
    assert result["fault"] == "RefBackend lowering" and result["reproduced"]
    folder = Path(result["folder"])
    record = json.loads((folder / "record.json").read_text())
    assert record["reduce"]["computing_after"] <= 5
    # repro.sh against the pinned build: the wheel's torch-mlir-opt, this Python
    done = subprocess.run(["bash", str(folder / "repro.sh")], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHON": sys.executable,
                               "TORCH_MLIR_OPT": builds.resolve(None).path})
    # repro.sh runs the bundle's standalone repro.py
    assert done.returncode == 1 and done.stdout.startswith("repro.py: REPRODUCED: wrong numbers")
