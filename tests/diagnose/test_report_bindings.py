"""harness report, bisect and reduce on a pipeline of the MLIR Python bindings (pipelines.toml
``linalg-to-llvm``, driver bindings): upstream MLIR's linalg-fuse-elementwise-ops leaves IR that
fails the verifier ("operand #2 does not dominate this use"). Before the bindings tool stood in
for torch-mlir-opt, torch-mlir-opt rejected that pipeline and no bundle was made.

Each candidate and replay starts a Python child on the bindings (~0.4 s), so the report's
reduction is bounded (budget_s) and the bundle is made once for the module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.compiler import binary as binary_module

from harness.compiler import builds as builds_module
from harness.compiler.records import Outcome
from harness.compiler.runner import RunOptions, run_pipeline
from harness.errors import PipelineConfigError, UsageError
from harness.execute.lowering import bindings_launcher, run_bindings_pipeline
from harness.diagnose.bisect import bisect
from harness.diagnose.tool_choice import tool_for
from harness.diagnose.report import ReportOptions, make_report

from support import ROOT, harness

DOMINANCE = ROOT / "lit_tests" / "pass" / "linalg-fuse-elementwise-pad-expand-dominance-error.mlir"
FUSE_ALONE = "builtin.module(func.func(linalg-fuse-elementwise-ops))"
SIGNATURE = "pass-failure: operand #2 does not dominate this use"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[object, Path]:
    assert "tensor.pad" in DOMINANCE.read_text() and "tensor.expand_shape" in DOMINANCE.read_text()
    out = tmp_path_factory.mktemp("bindings-report")
    # Each candidate is a bindings-tool process (a Python start-up): 15 s reduced nothing at a
    # load of 13 on 2 cores; the reduction ends by itself well before 60 s on a quiet machine.
    result = make_report(DOMINANCE, "linalg-to-llvm",
                         options=ReportOptions(out_dir=out, budget_s=60.0, timeout_s=120.0))
    return result, Path(result.folder)


def test_the_bindings_report_names_the_failing_upstream_pass(bundle) -> None:
    result, folder = bundle
    assert result.failing_pass == "linalg-fuse-elementwise-ops"
    # the pass is upstream MLIR's: the title names that project, as the target repository does
    assert result.title.startswith("[mlir] "), result.title
    assert result.signature == SIGNATURE
    assert result.self_check.reproduced, result.self_check.describe()
    assert binary_module.identify(result.binary).bindings
    assert {"issue.md", "repro.sh", "reduced.mlir", "record.json", "input.mlir"} <= set(os.listdir(folder))


def test_reduced_ir_still_fails_alike_through_the_bindings_tool(bundle) -> None:
    result, folder = bundle
    reduced = folder / "reduced.mlir"
    assert result.reduced and result.ops_after < result.ops_before
    whole = run_bindings_pipeline(reduced, result.pipeline,
                                  options=RunOptions(timeout_s=120))
    assert whole.outcome is Outcome.PASS_FAILURE
    assert str(whole.signature) == SIGNATURE
    alone = run_bindings_pipeline(reduced, FUSE_ALONE, options=RunOptions(timeout_s=120))
    assert str(alone.signature) == SIGNATURE


def test_repro_sh_reproduces_with_the_recorded_bindings_tool(bundle) -> None:
    _result, folder = bundle
    env = {k: v for k, v in os.environ.items() if k != "TORCH_MLIR_OPT"}
    done = subprocess.run(["bash", str(folder / "repro.sh")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "repro.sh: REPRODUCED: stderr has: error: operand #2 does not dominate this use" in done.stdout
    assert "harness.execute.bindings_tool" in (folder / "repro.sh").read_text()


def test_an_mlir_core_bug_is_told_in_mlir_terms(bundle) -> None:
    # Issue 44: the failing pass alone shows the bug, so issue.md gives mlir-opt's command of it,
    # checked through the wheel's bindings by repro.py (the same pass list), and no harness tool
    # in the instructions; repro.py runs that pass alone.
    _result, folder = bundle
    issue = (folder / "issue.md").read_text()
    command = issue.split("## Command", 1)[1].split("Run on the original file", 1)[0]
    assert f"mlir-opt '--pass-pipeline={FUSE_ALONE}' reduced.mlir" in command
    assert "harness-bindings-opt" not in command
    # the string was run through the wheel's bindings, and what they printed is shown (no claim
    # of an mlir-opt run: none ships with the wheel)
    assert ("This bundle ran that same string on `reduced.mlir` through the torch-mlir wheel's MLIR "
            "Python bindings (`torch_mlir.passmanager.PassManager.parse`; no `mlir-opt` ships with "
            "the wheel)") in command
    shown = command.split("What it printed when this bundle was made:", 1)[1]
    assert "error: operand #2 does not dominate this use" in shown
    how = issue.split("## How to reproduce", 1)[1].split("## Self-check", 1)[0]
    assert "python3 repro.py" in how and "harness" not in how
    assert "not run" not in issue
    assert f"TO_LINALG = '{FUSE_ALONE}'" in (folder / "repro.py").read_text()
    done = subprocess.run([sys.executable, str(folder / "repro.py")], capture_output=True, text=True,
                          cwd=folder, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "tool that ran: the bindings tool" in issue
    assert "pass 2 of 44" in issue


def test_bisect_on_a_bindings_pipeline_names_the_pass_and_its_position(tmp_path) -> None:
    result = bisect(DOMINANCE, _textual("linalg-to-llvm"),
                    opt=tool_for("linalg-to-llvm", None), out_dir=tmp_path, timeout_s=120)
    assert result.failing_pass == "linalg-fuse-elementwise-ops"
    assert result.failing_pass_name == "LinalgElementwiseOpFusionPass"
    assert result.failing_pass_pipeline == FUSE_ALONE
    assert result.pass_positions == [2] and len(result.pipeline_passes) == 44
    assert result.reproduced


def test_driver_bindings_runs_a_textual_pipeline_of_upstream_passes(tmp_path) -> None:
    out = tmp_path / "reduced.mlir"
    done = harness("reduce", str(DOMINANCE), "--pipeline", FUSE_ALONE, "--driver", "bindings", "--budget-s",
                   "8", "-o", str(out), timeout=120)
    assert done.returncode == 1, done.stderr
    assert f"keeps: {SIGNATURE}" in done.stdout
    rerun = run_bindings_pipeline(out, FUSE_ALONE, options=RunOptions(timeout_s=60))
    assert str(rerun.signature) == SIGNATURE


def test_torch_mlir_opt_for_a_bindings_pipeline_is_refused_clearly() -> None:
    with pytest.raises(UsageError, match=r"runs on the MLIR Python bindings.*Drop --opt"):
        tool_for("linalg-to-llvm", builds_module.resolve().path)
    assert tool_for("torch-to-linalg", None) is None  # torch-mlir-opt's pipelines keep theirs


def test_flags_the_bindings_tool_cannot_honour_are_a_rejected_command_line(tmp_path) -> None:
    launcher = str(bindings_launcher())
    with pytest.raises(PipelineConfigError, match="Unknown command line argument '-canonicalize'"):
        run_pipeline(DOMINANCE, "-canonicalize", opt=launcher, options=RunOptions(timeout_s=60))
    done = subprocess.run([launcher, str(DOMINANCE), "--mlir-very-unsafe-disable-verifier-on-parsing"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "always verify what they parse" in done.stderr


def _textual(name: str) -> str:
    from harness.compiler import pipelines

    return pipelines.default().resolve(name)


def test_the_bindings_tool_writes_into_a_special_output_and_never_replaces_it(tmp_path) -> None:
    # -o /dev/null is what every tool passes; renamed over as a regular output it replaced
    # /dev/null with a file when run as root. A fifo stands in for it here.
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    launcher = str(bindings_launcher())
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the module's text fits the pipe's buffer
    try:
        done = subprocess.run([launcher, str(DOMINANCE), "-o", str(fifo)],
                              capture_output=True, text=True, timeout=60)
        text = os.read(reader, 1 << 16).decode() if done.returncode == 0 else ""
    finally:
        os.close(reader)
    assert done.returncode == 0, done.stderr
    assert fifo.is_fifo()
    assert "tensor.expand_shape" in text
