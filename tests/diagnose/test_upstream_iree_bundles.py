"""Issue 43: the bundles of failures iree-compile meets (tools/upstream_iree/NAME, copied whole into
reports/upstream/NAME by tools/regen_upstream.py: no harness report can replay iree-compile).
Each repro.sh reproduces with IREE's own tools (the [iree] extra's iree-opt and iree-compile),
says NOT REPRODUCED on the input the bug spares (a convolution window that covers its input
exactly), and the README's triage table has the row its record.json gives.
"""

from __future__ import annotations

import filecmp
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

BUNDLES = ROOT / "reports" / "upstream"
HAND = ROOT / "tools" / "upstream_iree"
STRIDED_CONV = "linalg-fold-unit-extent-dims-strided-conv"


def _iree_bin() -> Path | None:
    """The directory of IREE's tools in this Python's environment (the [iree] extra), if there."""
    beside = Path(sys.executable).parent
    if all((beside / t).is_file() for t in ("iree-opt", "iree-compile")):
        return beside
    found = shutil.which("iree-compile")
    return Path(found).parent if found and shutil.which("iree-opt") else None


needs_iree = pytest.mark.skipif(_iree_bin() is None, reason="the [iree] extra is not installed")
FOLDERS = sorted(p for p in HAND.iterdir() if (p / "issue.md").is_file()) if HAND.is_dir() else []


def _run(folder: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    """repro.sh of a copy of ``folder``, with IREE's tools and the system's only on PATH."""
    env = {"PATH": f"{_iree_bin()}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    return subprocess.run(["bash", str(folder / "repro.sh")], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)


def test_there_is_the_strided_conv_bundle() -> None:
    assert [p.name for p in FOLDERS] == [STRIDED_CONV]


@pytest.mark.parametrize("hand", FOLDERS, ids=[p.name for p in FOLDERS])
def test_the_shipped_bundle_is_the_hand_written_folder(hand: Path) -> None:
    """reports/upstream/NAME is tools/upstream_iree/NAME as written (the regen script copies it):
    an edit of one without the other shows here."""
    shipped = BUNDLES / hand.name
    names = sorted(p.name for p in hand.iterdir() if p.is_file())
    assert sorted(p.name for p in shipped.iterdir() if p.is_file()) == names
    _, mismatch, errors = filecmp.cmpfiles(hand, shipped, names, shallow=False)
    assert not mismatch and not errors, (mismatch, errors)
    report = json.loads((hand / "record.json").read_text())["report"]
    assert report["found_through"].startswith("iree-compile") and report["filing"] == "new issue"


@needs_iree
@pytest.mark.parametrize("hand", FOLDERS, ids=[p.name for p in FOLDERS])
def test_repro_sh_reproduces_with_irees_tools(hand: Path, tmp_path: Path) -> None:
    copy = tmp_path / hand.name
    shutil.copytree(BUNDLES / hand.name, copy)
    done = _run(copy, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert "repro.sh: REPRODUCED: " in done.stdout
    assert "running repro.py" not in done.stdout  # IREE's tools ran, not the bindings' fallback
    if hand.name == STRIDED_CONV:
        assert ("iree-compile: conv.mlir fails the same way, in "
                "iree-dispatch-creation-fold-unit-extent-dims") in done.stdout


@needs_iree
def test_repro_sh_says_not_reproduced_where_the_window_covers_the_input(tmp_path: Path) -> None:
    """The same stride-2 3x3 convolution on a 3x3 input (the window reads all of it): the fold is
    right, iree-opt and iree-compile succeed, and repro.sh says so with exit status 0."""
    copy = tmp_path / STRIDED_CONV
    shutil.copytree(BUNDLES / STRIDED_CONV, copy)
    for name in ("input.mlir", "conv.mlir"):
        text = (copy / name).read_text()
        assert "tensor<1x2x4x4xf32>" in text
        (copy / name).write_text(text.replace("tensor<1x2x4x4xf32>", "tensor<1x2x3x3xf32>"))
    done = _run(copy, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "NOT REPRODUCED: linalg-fold-unit-extent-dims succeeds on input.mlir" in done.stdout
    assert "iree-compile: conv.mlir compiles" in done.stdout


@needs_iree
def test_run_dynamic_shows_the_wrong_values(tmp_path: Path) -> None:
    """The dynamic case: IREE's result for a 4x4 input is not the convolution, for a 3x3 one it is."""
    env = {**os.environ, "PATH": f"{_iree_bin()}:{os.environ.get('PATH', '')}"}
    done = subprocess.run([sys.executable, str(BUNDLES / STRIDED_CONV / "run_dynamic.py")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    assert "input 3x3:" in done.stdout and "(ok)" in done.stdout.split("input 4x4:")[0]
    assert "input 4x4:" in done.stdout and "(WRONG)" in done.stdout.split("input 4x4:")[1]


def test_the_readme_table_has_each_bundles_row(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("regen_upstream", ROOT / "tools" / "regen_upstream.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "regen_upstream", module)
    spec.loader.exec_module(module)
    readme = (BUNDLES / "README.md").read_text()
    for hand in FOLDERS:
        row = module.table_row(hand.name, {hand.name: True})
        assert row in readme, row
    assert module.table_row(STRIDED_CONV, {STRIDED_CONV: True}) == (
        f"| `{STRIDED_CONV}/` | yes | yes: FX, ONNX | none | llvm/llvm-project | new |")
