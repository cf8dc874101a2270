"""Issue 28: every bundle reproduces with only torch, numpy and torch-mlir installed.

A fresh venv (the base interpreter, no site packages of ours) gets the distributions torch,
numpy and torch-mlir need, linked into its site-packages, and nothing else: ``import harness``
fails there. The shipped pass-failure bundles run their repro.sh with that venv's Python first on
PATH (repro.sh finds the wheel's torch-mlir-opt under its site-packages); the miscompile and
run-time failure bundles get repro.py (``harness.diagnose.report.standalone``) written from their
files and run with that Python. A repro.py that imports the harness shows the check can fail.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.diagnose.report.result import BundleKind
from harness.diagnose.report.standalone import numerics_repro, repro_py, write_standalone

from support import ROOT

BUNDLES = ROOT / "reports" / "upstream"


def _folders() -> list[Path]:
    """Every shipped bundle: the new issues, and known/'s reproducers for existing threads (a
    comment's reproducer must reproduce as well as an issue's)."""
    known = BUNDLES / "known"
    return sorted([*BUNDLES.iterdir(), *(known.iterdir() if known.is_dir() else ())])
NUMERICS = {"harness.miscompile-report/1": BundleKind.MISCOMPILE}
_REQUIREMENT = re.compile(r"^([A-Za-z0-9_.\-]+)")


def _closure(names: list[str]) -> set[importlib.metadata.Distribution]:
    """The installed distributions ``names`` need (their requirements without extras, recursively)."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        seen[name] = dist
        for req in dist.requires or []:
            if "extra ==" in req:
                continue
            found = _REQUIREMENT.match(req)
            if found:
                todo.append(found.group(1))
    return set(seen.values())


@pytest.fixture(scope="module")
def clean_python(tmp_path_factory) -> Path:
    """A venv's python with torch, numpy and torch-mlir (and their requirements) only."""
    venv = tmp_path_factory.mktemp("clean") / "venv"
    base = Path(getattr(sys, "_base_executable", sys.executable))
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(subprocess.run([str(python), "-c", purelib],
                               capture_output=True, text=True, check=True).stdout.strip())
    for dist in _closure(["torch", "numpy", "torch-mlir"]):
        root = Path(dist.locate_file(""))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            if top.endswith(".pth") or top == "__pycache__" or "harness" in top:
                continue
            target = site / top
            if not target.exists() and (root / top).exists():
                target.symlink_to(root / top)
    return python


def _env(python: Path, home: Path) -> dict[str, str]:
    return {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


def test_the_clean_venv_has_no_harness(clean_python, tmp_path):
    probe = "import torch, numpy, torch_mlir.ir, torch_mlir.execution_engine; import harness"
    done = subprocess.run([str(clean_python), "-c", probe], capture_output=True, text=True,
                          env=_env(clean_python, tmp_path), cwd=tmp_path, timeout=300)
    assert done.returncode != 0 and "No module named 'harness'" in done.stderr, done.stderr


def _pass_bundles() -> list[Path]:
    """The shipped bundles whose repro.sh runs a torch-mlir-opt, or the bindings tool with
    repro.py (torch_mlir.passmanager) to fall back on; not the ones that call the harness."""
    out = []
    for folder in _folders():
        script = folder / "repro.sh"
        if not script.is_file() or "-m harness" in script.read_text():
            continue
        if "harness-bindings-opt" in script.read_text() and not (folder / "repro.py").is_file():
            continue
        out.append(folder)
    return out


def test_the_pass_failure_bundles_reproduce_without_the_harness(clean_python, tmp_path):
    bundles = _pass_bundles()
    # issue 44, second triage: 10 new issues and 4 known/ comments are shipped (the failures
    # not on the supported path or by design keep no bundle, only a README row)
    assert len(bundles) >= 13
    failed = []
    for folder in bundles:
        copy = tmp_path / folder.name
        shutil.copytree(folder, copy)
        done = subprocess.run(["bash", str(copy / "repro.sh")], capture_output=True, text=True,
                              env=_env(clean_python, tmp_path), cwd=tmp_path, timeout=600)
        if done.returncode != 1:
            failed.append(f"{folder.name}: exit {done.returncode}: {done.stdout.strip()[-300:]}")
    assert not failed, "\n".join(failed)


def _numerics_bundles() -> list[tuple[Path, BundleKind, str]]:
    out = []
    for folder in _folders():
        record_path = folder / "record.json"
        if not record_path.is_file() or not (folder / "expected.npz").is_file():
            continue
        record = json.loads(record_path.read_text())
        kind = BundleKind.parse(record.get("kind", BundleKind.MISCOMPILE.value))
        out.append((folder, kind, record["pipeline"]))
    return out


def _run(python: Path, folder: Path, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), str(folder / "repro.py")], capture_output=True, text=True,
                          env=_env(python, home), cwd=home, timeout=600)


def test_the_numerics_bundles_reproduce_with_repro_py_alone(clean_python, tmp_path):
    """repro.py written from each miscompile and run-time failure bundle's files, run in the
    clean venv from another folder (nothing of the bundle but repro.py is read)."""
    bundles = _numerics_bundles()
    # the view collapse is one bundle (one bug, known #4743); the size-1 broadcast abort is by
    # design and keeps no bundle (issue 44); the index_put crash is issue 45's
    assert len(bundles) == 5
    failed = []
    for folder, kind, pipeline in bundles:
        copy = tmp_path / folder.name
        copy.mkdir()
        for name in ("reduced.mlir", "inputs.npz", "expected.npz"):
            shutil.copy(folder / name, copy / name)
        write_standalone(copy, kind, pipeline, folder.name)
        alone = tmp_path / f"{folder.name}-alone"
        alone.mkdir()
        shutil.move(copy / "repro.py", alone / "repro.py")  # no other file beside it
        done = _run(clean_python, alone, tmp_path)
        if done.returncode != 1 or "repro.py: REPRODUCED: " not in done.stdout:
            failed.append(f"{folder.name}: exit {done.returncode}: {done.stdout[-400:]} {done.stderr[-400:]}")
    assert not failed, "\n".join(failed)


def test_a_repro_py_that_imports_the_harness_fails_there(clean_python, tmp_path):
    folder, kind, pipeline = next(b for b in _numerics_bundles() if b[1] is BundleKind.MISCOMPILE)
    text = repro_py(numerics_repro(folder, kind, pipeline, "imports the harness"))
    (tmp_path / "repro.py").write_text(
        text.replace("\nimport base64\n", "\nimport harness\nimport base64\n", 1))
    done = _run(clean_python, tmp_path, tmp_path)
    assert "REPRODUCED" not in done.stdout and "No module named 'harness'" in done.stderr


def test_repro_py_says_it_cannot_run_without_torch_mlir(tmp_path):
    """The base interpreter, isolated: no torch_mlir, so exit 2 and the reason, not 0 or 1."""
    folder, kind, pipeline = _numerics_bundles()[0]
    (tmp_path / "repro.py").write_text(repro_py(numerics_repro(folder, kind, pipeline, "x")))
    base = Path(getattr(sys, "_base_executable", sys.executable))
    probe = subprocess.run([str(base), "-I", "-c", "import numpy"], capture_output=True)
    done = subprocess.run([str(base), "-I", str(tmp_path / "repro.py")], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120, env={"PATH": os.environ["PATH"]})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "CANNOT RUN" in done.stdout and (probe.returncode != 0 or "torch-mlir" in done.stdout)


def test_the_shipped_repro_py_files_reproduce_without_the_harness(clean_python, tmp_path):
    """Every repro.py already in reports/upstream (the MLIR core pass bundle's runs the pipeline
    through torch_mlir.passmanager), alone in a folder, in the clean venv."""
    scripts = sorted(f / "repro.py" for f in _folders() if (f / "repro.py").is_file())
    assert scripts, "no shipped bundle has repro.py yet"
    failed = []
    for script in scripts:
        alone = tmp_path / script.parent.name
        alone.mkdir()
        shutil.copy(script, alone / "repro.py")
        done = _run(clean_python, alone, tmp_path)
        if done.returncode != 1 or "repro.py: REPRODUCED: " not in done.stdout:
            failed.append(f"{script.parent.name}: exit {done.returncode}: {done.stdout[-300:]}")
    assert not failed, "\n".join(failed)
