"""lit's features come from the binary under test: a debug build with assertions turns on
`asserts` and `debug-build`, and tests gated on them switch branches. No assertions build is at
hand, so a script that answers `--version` as one does (and runs the real binary otherwise)
stands in for it; everything else in the run is real."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from harness.compiler.builds import resolve

from support import ROOT

REAL = resolve().path

DEBUG_VERSION = """LLVM (http://llvm.org/):
  LLVM version 24.0.0git
  DEBUG build with assertions.
"""


def _lit(*args: str) -> subprocess.CompletedProcess:
    lit = [sys.executable, "-c", "import sys, lit.main; sys.exit(lit.main.main())"]
    return subprocess.run([*lit, "-v", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def _debug_build(tmp_path: Path) -> Path:
    script = tmp_path / "torch-mlir-opt"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "--version" ]; then\n'
        f"  cat <<'EOF'\n{DEBUG_VERSION}EOF\n"
        "  exit 0\n"
        "fi\n"
        f'exec {shlex.quote(REAL)} "$@"\n')
    script.chmod(0o755)
    return script


def test_assertions_build_turns_on_asserts_and_debug_build(tmp_path):
    fake = _debug_build(tmp_path)
    proc = _lit(f"--param=torch_mlir_opt={fake}", "lit_tests/config/binary-version.mlir",
                "lit_tests/pass/view-nonvalue-tensor-error.mlir")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert f"torch-mlir-opt from --param torch_mlir_opt: {fake} (LLVM 24.0.0git, assertions build)" in out
    # binary-version.mlir took its ASSERTS / NOT-RELEASE branches and passed ...
    assert "PASS: torch-mlir-harness :: config/binary-version.mlir" in out
    # ... and the release-only expectation is skipped on an assertions build.
    assert "UNSUPPORTED: torch-mlir-harness :: pass/view-nonvalue-tensor-error.mlir" in out


def test_release_build_runs_the_release_only_test():
    proc = _lit("lit_tests/pass/view-nonvalue-tensor-error.mlir")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "release build)" in out
    assert "PASS: torch-mlir-harness :: pass/view-nonvalue-tensor-error.mlir" in out


def test_our_not_wins_over_another_on_path(tmp_path):
    """`not --crash` goes to lit_tests/support/not even when the user's PATH holds another `not`
    (an LLVM tools directory does); a stand-in that accepts everything would hide a missing crash."""
    impostor = tmp_path / "not"
    impostor.write_text("#!/bin/sh\nexit 0\n")
    impostor.chmod(0o755)
    env_path = f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"
    lit = [sys.executable, "-c", "import sys, lit.main; sys.exit(lit.main.main())"]
    proc = subprocess.run([*lit, "-v", "lit_tests/config/tool-substitutions.mlir"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env=dict(os.environ, PATH=env_path))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "PASS: torch-mlir-harness :: config/tool-substitutions.mlir" in out
