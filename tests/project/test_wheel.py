"""The package as users install it (issue 41 item 8): a wheel built from the project's files,
installed in a clean venv with nothing else, carries the pipelines, the bundle templates and
the knowledge catalog, and resolves a pipeline name without this source tree.

The build runs offline (``--no-build-isolation``, this venv's setuptools) on a copy of the
project's files, so nothing is written into the checkout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from support import ROOT

PROBE = """
import sys
from pathlib import Path
import harness
from harness.compiler.pipelines import PIPELINES_FILE, load
assert Path(harness.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()), harness.__file__
assert PIPELINES_FILE.is_file() and not PIPELINES_FILE.is_symlink(), PIPELINES_FILE
names = sorted(load().pipelines)
print(PIPELINES_FILE)
print(" ".join(names))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).is_file():
            shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "harness", source / "harness", symlinks=True, ignore=ignore)
    shutil.copytree(ROOT / "pipelines", source / "pipelines", symlinks=True, ignore=ignore)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "--no-index", "-q", "-w", str(out), str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (built,) = out.glob("torch_mlir_harness-*.whl")
    return built


def test_the_wheel_holds_the_pipelines_as_a_file(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        text = archive.read("harness/compiler/pipelines.toml").decode()
    assert text == (ROOT / "pipelines" / "pipelines.toml").read_text()
    assert {"harness/knowledge/upstream.toml", "harness/compiler/pipelines.py"} <= names
    assert any(n.startswith("harness/diagnose/report/templates/") for n in names)


def test_an_installed_wheel_resolves_pipelines_without_the_source_tree(wheel: Path, tmp_path: Path):
    env_dir = tmp_path / "clean"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                              str(wheel)], capture_output=True, text=True, timeout=300, check=False)
    assert install.returncode == 0, install.stderr[-3000:]
    # from a folder outside the checkout, with only the standard library beside the harness
    proc = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120, check=False, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    where, names = proc.stdout.splitlines()[-2:]
    assert Path(where).is_relative_to(env_dir.resolve()) and not Path(where).is_relative_to(ROOT)
    assert {"torchscript-to-torch", "fx-to-torch", "torch-to-linalg", "tosa-to-linalg",
            "onnx-to-torch"} <= set(names.split())
