"""``harness report --numerics``: a miscompile bundle whose repro.sh exits 1 exactly when the
numbers are wrong. Issue 19's miscompile through the real binary and RefBackend."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from harness.errors import ReportError
from harness.diagnose.report.result import CANNOT_RUN_STATUS, BundleKind
from harness.diagnose.report.standalone import write_standalone
from harness.diagnose.report.miscompile import MISCOMPILE_FILES, NumericsReportOptions, make_numerics_report
from harness.diagnose.report.upstream_rewrite import UPSTREAM_FILE

from support import harness
from support.programs import CHAIN
from test_numerics_bisect import MISCOMPILE


def rewrite(folder: Path) -> None:
    """repro.py again from the folder's reduced.mlir, inputs.npz and expected.npz."""
    write_standalone(folder, BundleKind.MISCOMPILE, "torch-to-linalg", "test")


def repro(folder: Path, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "TORCH_MLIR_OPT")}
    return subprocess.run(["bash", str(folder / "repro.sh")], capture_output=True, text=True,
                          timeout=600, env={**base, **env}, cwd="/")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    proc = harness("report", str(MISCOMPILE), "--pipeline", "torch-to-linalg", "--numerics", "--out",
                   str(out), "--json", timeout=900)
    assert proc.returncode == 1, proc.stderr
    return json.loads(proc.stdout), out


def test_the_bundle_holds_the_miscompile(bundle):
    result, out = bundle
    folder = Path(result["folder"])
    assert folder.parent == out and folder.name.startswith("report-miscompile-adaptive-avg-pool2d-view-mm-")
    # the culprit is upstream MLIR's: the bundle also holds its rewrite by upstream passes alone
    assert sorted(result["files"]) == sorted((*MISCOMPILE_FILES, UPSTREAM_FILE))
    assert result["fault"] == "RefBackend lowering" and result["reproduced"]
    assert result["chain"] == ["aten.adaptive_avg_pool2d", "aten.view", "aten.mm"]
    issue = (folder / "issue.md").read_text()
    # the RefBackend pass at fault is upstream MLIR's: the bug is filed in llvm-project
    assert issue.startswith("# [mlir] Miscompile: adaptive_avg_pool2d -> view -> mm: wrong "
                            "values through torch-to-linalg and the RefBackend's "
                            "linalg-fuse-elementwise-ops\n")
    assert "## At fault: RefBackend lowering" in issue
    assert "- RefBackend without func.func(linalg-fuse-elementwise-ops): makes it right" in issue
    # Issue 44: which part needs torch-mlir (the execution), and the rewrite at fault shown with
    # upstream passes alone, the command quoted, the string run through the wheel's bindings
    how = issue.split("## How to reproduce", 1)[1].split("## Self-check", 1)[0]
    assert "The wrong numbers need an execution, and that part is torch-mlir's" in how
    assert ("mlir-opt '--pass-pipeline=builtin.module(func.func(linalg-generalize-named-ops),"
            "func.func(linalg-fuse-elementwise-ops))' reduced.linalg.mlir") in how
    fused = (folder / UPSTREAM_FILE).read_text()
    # the pool's divide (which reads its outs) is now inside the matmul's generic
    assert "linalg.matmul" in (folder / "reduced.linalg.mlir").read_text() and "linalg.matmul" not in fused
    divide = fused.index("arith.divf %out")
    assert fused.rfind("linalg.generic", 0, divide) > fused.find("tensor.expand_shape %arg1")
    assert "- aten.adaptive_avg_pool2d decomposed before torch-to-linalg: makes it right" in issue
    assert "linalg.generic" in issue  # the linalg the RefBackend miscompiles, inline
    # the fault is an upstream MLIR pass of the RefBackend's lowering: llvm-project's, and new
    assert result["triage"] == "new" and result["target_repo"] == "llvm/llvm-project"
    assert "## Root cause\n\nAt fault: RefBackend lowering: " in issue
    assert "Triage: **new**: no known duplicate" in issue and "project's catalog" not in issue
    record = json.loads((folder / "record.json").read_text())
    assert record["schema"] == "harness.miscompile-report/1" and record["fault"] == "RefBackend lowering"
    # the npz files are small and hold what they say
    with np.load(folder / "inputs.npz") as inputs, np.load(folder / "expected.npz") as expected, \
            np.load(folder / "actual.npz") as actual:
        x, w = inputs["arg0"], inputs["arg1"]
        np.testing.assert_allclose(expected["result0"], x.mean((2, 3)) @ w, atol=1e-6)
        assert not np.allclose(actual["result0"], expected["result0"], rtol=1e-4, atol=1e-5)
    # small files; repro.py embeds the IR, the three arrays and the float64 rule (22.5 kB)
    limits = {"repro.py": 25_000}
    assert all((folder / n).stat().st_size < limits.get(n, 20_000) for n in MISCOMPILE_FILES)
    with tarfile.open(result["archive"]) as tar:
        assert sorted(Path(n).name for n in tar.getnames() if "/" in n) == sorted((*MISCOMPILE_FILES,
                                                                                   UPSTREAM_FILE))


def test_repro_exits_1_exactly_when_the_numbers_are_wrong(bundle, tmp_path):
    result, _ = bundle
    folder = Path(result["folder"])
    wrong = repro(folder, PYTHON=sys.executable)
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "repro.py: REPRODUCED: wrong numbers: result0: " in wrong.stdout
    # judged by the float64 rule, as the harness judges it (expected-float64.npz is embedded)
    assert "max abs diff 0.0893; its error against float64 is " in wrong.stdout
    # The same IR on inputs whose pool windows sum to zero: 0/49 stays 0, the numbers are right.
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    with np.load(folder / "inputs.npz") as inputs:
        np.savez(copy / "inputs.npz", arg0=np.zeros_like(inputs["arg0"]), arg1=inputs["arg1"])
        np.savez(copy / "expected.npz", result0=np.zeros((1, inputs["arg1"].shape[1]), "f4"))
        np.savez(copy / "expected-float64.npz", result0=np.zeros((1, inputs["arg1"].shape[1]), "f8"))
    rewrite(copy)  # repro.py embeds the arrays
    right = repro(copy, PYTHON=sys.executable)
    assert right.returncode == 0, right.stdout
    assert "repro.py: NOT REPRODUCED: all results within tolerance (max abs diff 0)" in right.stdout
    # IR that does not lower is not this bug either.
    script = copy / "repro.py"  # the IR is in repro.py
    script.write_text((folder / "repro.py").read_text().replace("torch.aten.mm", "torch.aten.mmm"))
    broken = repro(copy, PYTHON=sys.executable)
    assert broken.returncode == 0 and "NOT REPRODUCED" in broken.stdout
    # Without a Python there is nothing to run: said, and not counted as the bug.
    missing = repro(folder, PYTHON="/nonexistent/python")
    assert missing.returncode == CANNOT_RUN_STATUS and "CANNOT RUN: " in missing.stdout


def test_paths_are_redacted(bundle):
    result, out = bundle
    folder = Path(result["folder"])
    for name in MISCOMPILE_FILES:
        if name.endswith(".npz"):
            continue
        text = (folder / name).read_text()
        assert str(out) not in text and "/tmp/" not in text, name
        assert sys.prefix not in text, name


def test_right_numbers_are_refused(tmp_path):
    src = tmp_path / "chain.mlir"
    src.write_text(CHAIN)
    with pytest.raises(ReportError, match="nothing to report: no miscompile"):
        make_numerics_report(src, "torch-to-linalg", options=NumericsReportOptions(out_dir=tmp_path / "r"))
    assert not any((tmp_path / "r").glob("report-*"))
