"""One self-check rule and one launcher for the three bundle kinds (compile failure, miscompile,
run-time failure): a real repro.sh run by ``run_repro`` gives the same verdict whatever the
kind, and the launcher says CANNOT RUN, with the variable to set, when it finds no program."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from harness.compiler import builds as builds_module
from harness.compiler.outcomes import Outcome
from harness.compiler.runner import run_pipeline
from harness.diagnose.report.build import resolve_pipeline
from harness.diagnose.report.repro import python_launcher, repro_script
from harness.diagnose.report.repro_check import run_repro
from harness.diagnose.report.result import (
    CANNOT_RUN_STATUS,
    REPRODUCED_STATUS,
    BundleKind,
    ReproVerdict,
)

REAL = builds_module.resolve().path
NONZERO = """\
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[?,1],si64> {
  %0 = torch.aten.nonzero %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[?,1],si64>
  return %0 : !torch.vtensor<[?,1],si64>
}
"""
# repro.sh bodies standing for each way a launcher can end: the bug shows, it does not, the
# launcher cannot tell, and the launcher itself dies by a signal.
ENDINGS = {
    "reproduced": (f"exit {REPRODUCED_STATUS}", ReproVerdict.REPRODUCED),
    "not reproduced": ("exit 0", ReproVerdict.NOT_REPRODUCED),
    "cannot run": (f"exit {CANNOT_RUN_STATUS}", ReproVerdict.CANNOT_TELL),
    "killed by SIGSEGV": ("kill -SEGV $$", ReproVerdict.CANNOT_TELL),
    "killed by SIGABRT": ("kill -ABRT $$", ReproVerdict.CANNOT_TELL),
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_one_rule_gives_every_kind_the_same_verdict(ending, tmp_path):
    body, expected = ENDINGS[ending]
    (tmp_path / "repro.sh").write_text(f"#!/usr/bin/env bash\necho 'repro.sh: {ending}'\n{body}\n")
    checks = {kind: run_repro(tmp_path, REAL, 30.0, kind) for kind in BundleKind}
    statuses = {c.repro_exit_status for c in checks.values()}
    assert len(statuses) == 1, statuses
    if ending.startswith("killed"):  # the signal reaches run_repro as a status, not as "fixed"
        assert statuses.pop() not in (0, REPRODUCED_STATUS, CANNOT_RUN_STATUS)
    for kind, check in checks.items():
        assert check.verdict is expected, (kind, check)
        assert check.reproduced is (expected is ReproVerdict.REPRODUCED), (kind, check)
        assert check.bug == kind.bug
        assert check.to_json()["verdict"] == expected.value
        said = check.describe()
        assert said.startswith("reproduced: " if check.reproduced else "NOT REPRODUCED: "), said
    # A compile failure's replay can only take a verdict away, never give one.
    compile_check = checks[BundleKind.COMPILE_FAILURE]
    same = replace(compile_check, replayed_file="reduced.mlir", signature="s", signature_reproduced=True)
    other = replace(same, signature_reproduced=False)
    assert same.reproduced is compile_check.reproduced and not other.reproduced


@pytest.mark.parametrize("status", [None, 0, 1, 2, 3, 124, 127, 136, 248, -11])
def test_the_rule_reads_only_the_status(status):
    expected = {0: ReproVerdict.NOT_REPRODUCED, REPRODUCED_STATUS: ReproVerdict.REPRODUCED}
    assert ReproVerdict.of_exit(status) is expected.get(status, ReproVerdict.CANNOT_TELL)


@pytest.fixture(scope="module")
def compile_launcher(tmp_path_factory) -> Path:
    """A real compile failure's repro.sh (the nonzero legalization failure), recorded with a
    binary path that does not exist on this machine."""
    folder = tmp_path_factory.mktemp("launcher")
    (folder / "reduced.mlir").write_text(NONZERO)
    textual = resolve_pipeline("torch-to-linalg")
    record = run_pipeline(folder / "reduced.mlir", textual, opt=REAL)
    assert record.outcome is Outcome.LEGALIZATION_FAILURE, record.signature
    (folder / "repro.sh").write_text(repro_script(
        record, record, textual,
        recorded_binary="/nowhere/torch-mlir-opt", timeout_s=60.0))
    return folder


def _run(folder: Path, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("TORCH_MLIR_OPT", "PYTHON")}
    return subprocess.run(["bash", str(folder / "repro.sh")], capture_output=True, text=True,
                          env={**base, **env}, cwd="/", timeout=120, check=False)


def test_the_launcher_without_a_binary_cannot_run_and_says_how_to_point_it(compile_launcher):
    nothing = _run(compile_launcher, PATH="/usr/bin:/bin")  # no torch-mlir-opt there
    assert nothing.returncode == CANNOT_RUN_STATUS, nothing.stdout + nothing.stderr
    assert ("repro.sh: CANNOT RUN: no torch-mlir-opt found; run: "
            "TORCH_MLIR_OPT=/path/to/torch-mlir-opt bash repro.sh") in nothing.stdout
    assert ReproVerdict.of_exit(nothing.returncode) is ReproVerdict.CANNOT_TELL
    # An override that names no program is no verdict either (it read as "fixed" before).
    wrong = _run(compile_launcher, TORCH_MLIR_OPT="/nonexistent/torch-mlir-opt")
    assert wrong.returncode == CANNOT_RUN_STATUS, wrong.stdout + wrong.stderr
    assert "TORCH_MLIR_OPT=/nonexistent/torch-mlir-opt is no program" in wrong.stdout
    # Pointed at the real binary it reproduces, and at one that passes it does not.
    real = _run(compile_launcher, TORCH_MLIR_OPT=REAL)
    assert real.returncode == REPRODUCED_STATUS, real.stdout + real.stderr
    assert "repro.sh: REPRODUCED: stderr has: error: failed to legalize operation" in real.stdout
    fixed = _run(compile_launcher, TORCH_MLIR_OPT="/bin/true")
    assert fixed.returncode == 0 and "repro.sh: NOT REPRODUCED: " in fixed.stdout


def test_one_template_makes_both_launchers(compile_launcher, tmp_path):
    """The Python launcher (miscompile, run-time failure) is the same file with its part filled
    in: the same finding of the program, the same CANNOT RUN line and status."""
    (tmp_path / "repro.sh").write_text(python_launcher("wrong values", "wrong numbers", {}))
    (tmp_path / "repro.py").write_text(f"import sys\nprint('repro.py: ran')\nsys.exit({REPRODUCED_STATUS})\n")
    opt_text = (compile_launcher / "repro.sh").read_text().splitlines()
    py_text = (tmp_path / "repro.sh").read_text().splitlines()
    shared = [line for line in opt_text if line in py_text]
    assert "find_program() {" in shared and 'if ! PROGRAM=$(find_program); then' in shared
    missing = _run(tmp_path, PYTHON="/nonexistent/python")
    assert missing.returncode == CANNOT_RUN_STATUS
    assert "repro.sh: CANNOT RUN: PYTHON=/nonexistent/python is no program; run: PYTHON=" in missing.stdout
    ran = _run(tmp_path, PYTHON="python3")
    assert ran.returncode == REPRODUCED_STATUS and "repro.py: ran" in ran.stdout


def test_a_signal_of_the_program_is_the_launchers_status_not_a_verdict(tmp_path):
    """repro.py killed by a signal: bash's exec passes it on, and the rule tells nothing."""
    (tmp_path / "repro.sh").write_text(python_launcher("dies", "the run dies", {}))
    (tmp_path / "repro.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    check = run_repro(tmp_path, REAL, 30.0, BundleKind.MISCOMPILE)
    assert check.repro_exit_status in (-signal.SIGKILL, 128 + signal.SIGKILL)
    assert check.verdict is ReproVerdict.CANNOT_TELL and not check.reproduced


def test_one_findings_base_and_one_kind_spelling_per_bundle_kind():
    """Each kind's findings extend the one base, so record.json's common keys (``header``) and
    its writer (``bundle.write_texts``) are the same; each kind once, spelled by the enum."""
    from harness.diagnose.report.miscompile_text import MiscompileFindings
    from harness.diagnose.report.result import BundleFindings, Findings
    from harness.diagnose.report.runtime import RuntimeFindings

    kinds = [cls.kind for cls in (Findings, MiscompileFindings, RuntimeFindings)
             if issubclass(cls, BundleFindings)]
    assert sorted(k.value for k in kinds) == sorted(k.value for k in BundleKind)
    assert BundleKind.parse("runtime-failure") is BundleKind.RUNTIME_FAILURE
    schemas = {Findings.schema, MiscompileFindings.schema, RuntimeFindings.schema}
    assert schemas == {"harness.report/1", "harness.miscompile-report/1",
                       "harness.runtime-failure-report/1"}
