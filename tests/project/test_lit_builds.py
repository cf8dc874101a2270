"""lit against any build: `lit --param opt=NAME_OR_PATH`, with features that follow the build.

The builds are the wheel's binary and wrappers of it (wrapped_builds.py); the same on a real
older release is in test_builds_network.py.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness.compiler import binary, builds
from harness.compiler.builds import BuildCache

from support import ROOT
from support.wrapped_builds import LLVM23_VERSION, make_build

VERSION_TEST = "lit_tests/config/binary-version.mlir"
OPT_TINY = "lit_tests/models/opt-tiny-stock.mlir"  # REQUIRES: sdpa-scale-to-linalg
VIEW_ERROR = "lit_tests/pass/view-nonvalue-tensor-error.mlir"  # REQUIRES: non-token-tensor-types


@pytest.fixture
def env(tmp_path, monkeypatch) -> dict[str, str]:
    monkeypatch.setenv(builds.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    return dict(os.environ)


def _lit(env: dict[str, str], *args: str) -> str:
    lit = [sys.executable, "-c", "import sys, lit.main; sys.exit(lit.main.main())"]
    proc = subprocess.run([*lit, "-v", *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    return out


def _features(out: str) -> list[str]:
    [line] = [line for line in out.splitlines() if "note: build features:" in line]
    return line.split("note: build features:")[1].split()


def test_wheel_by_name_has_every_build_feature(env):
    out = _lit(env, "--param", "opt=wheel", VERSION_TEST)
    assert "torch-mlir-opt from --param opt: " in out
    assert "not the installed wheel's binary" not in out
    assert _features(out) == ["non-token-tensor-types", "release-build", "sdpa-scale-to-linalg"]


def test_a_build_without_the_tmtensor_conversion_loses_the_probe_feature(env, tmp_path):
    """The probe (support/features/sdpa-scale-to-linalg.mlir) fails on a build whose
    torch-to-linalg lacks convert-torch-to-tmtensor, so the OPT test that needs it is skipped."""
    BuildCache().add("no-tmtensor", make_build(tmp_path, "no-tmtensor",
                                               drop_pass="convert-torch-to-tmtensor"))
    out = _lit(env, "--param", "opt=no-tmtensor", VERSION_TEST, OPT_TINY)
    assert "note: not the installed wheel's binary: build 'no-tmtensor'" in out
    assert _features(out) == ["non-token-tensor-types", "release-build"]
    assert "PASS: torch-mlir-harness :: config/binary-version.mlir" in out
    assert "UNSUPPORTED: torch-mlir-harness :: models/opt-tiny-stock.mlir" in out


def test_an_llvm23_build_loses_the_llvm24_feature(env, tmp_path):
    old = make_build(tmp_path, "llvm23", version_text=LLVM23_VERSION)
    out = _lit(env, f"--param=opt={old}", VIEW_ERROR)
    assert _features(out) == ["release-build", "sdpa-scale-to-linalg"]
    assert "UNSUPPORTED: torch-mlir-harness :: pass/view-nonvalue-tensor-error.mlir" in out
    # The older parameter name still works, and `opt` wins over it.
    out = _lit(env, f"--param=torch_mlir_opt={old}", "--param=opt=wheel", VIEW_ERROR)
    assert "PASS: torch-mlir-harness :: pass/view-nonvalue-tensor-error.mlir" in out
