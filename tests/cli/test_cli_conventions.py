"""One convention for every subcommand: exit status 0 success,
1 the failure asked about is there, 2 bad usage or input; help that states defaults and
pipeline names; --verbose after the subcommand; progress on a terminal, quiet when piped."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT, harness

PASSING = ("func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
           "  %0 = torch.aten.relu %arg0 : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>\n"
           "  return %0 : !torch.vtensor<[2],f32>\n}\n")
FAILING = ("func.func @f(%arg0: !torch.vtensor<[4],i1>, %arg1: !torch.vtensor<[4],f32>) -> "
           "(!torch.vtensor<[4],i1>, !torch.vtensor<[4],f32>) {\n"
           "  %0 = torch.aten.__and__.Tensor %arg0, %arg0 : !torch.vtensor<[4],i1>, "
           "!torch.vtensor<[4],i1> -> !torch.vtensor<[4],i1>\n"
           "  %1 = torch.aten.tanh %arg1 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>\n"
           "  %2 = torch.aten.tanh %1 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>\n"
           "  return %0, %2 : !torch.vtensor<[4],i1>, !torch.vtensor<[4],f32>\n}\n")
NOT_MLIR = "import torch\nprint(torch.ones(2))\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("conv")
    out = {}
    for name, text in (("passing.mlir", PASSING), ("failing.mlir", FAILING), ("model.py", NOT_MLIR)):
        (d / name).write_text(text)
        out[name.split(".")[0]] = d / name
    out["dir"] = d
    return out


def _tool_args(tool: str, path: Path, d: Path) -> list[str]:
    extra = {"reduce": ["-o", str(d / f"reduced-{path.stem}.mlir"), "--budget-s", "10"],
             "report": ["--out", str(d / "reports"), "--budget-s", "10"],
             "bisect": ["--out", str(d / "bisect")]}.get(tool, [])
    return [tool, str(path), "--pipeline", "torch-to-linalg", *extra]


@pytest.mark.parametrize("tool", ["run", "explain", "bisect", "reduce", "report"])
def test_exit_status_is_one_convention(files, tool):
    d = files["dir"]
    passing = harness(*_tool_args(tool, files["passing"], d))
    assert passing.returncode == 0, (tool, passing.stdout, passing.stderr)
    assert "error" not in passing.stderr
    failing = harness(*_tool_args(tool, files["failing"], d))
    assert failing.returncode == 1, (tool, failing.stdout, failing.stderr)
    assert "Traceback" not in failing.stderr
    for bad in (_tool_args(tool, d / "absent.mlir", d),              # a missing file
                _tool_args(tool, files["model"], d),                 # not MLIR
                [*_tool_args(tool, files["failing"], d), "--pipeline", "no-such-pipeline"]):
        proc = harness(*bad)
        assert proc.returncode == 2, (tool, bad, proc.stdout, proc.stderr)
        assert proc.stderr.startswith("harness: error: ") and "Traceback" not in proc.stderr, proc.stderr


def test_usage_errors_and_listings(files):
    assert harness("run").returncode == 2                      # argparse: a missing argument
    assert harness("emit").returncode == 2                     # no NAME
    assert harness("pipelines").returncode == 0
    assert harness("emit", "--list").returncode == 0


def test_pipelines_lists_every_name_and_what_it_runs():
    from harness.compiler import pipelines

    proc = harness("pipelines")
    assert proc.returncode == 0
    for name, p in pipelines.default().pipelines.items():
        assert f"{name:22s} {p.textual()}" in proc.stdout
    assert "--pipeline=-canonicalize" in proc.stdout


def test_help_states_defaults_and_names():
    run_help = harness("run", "--help").stdout
    assert "(default: 600)" in " ".join(run_help.split())  # --timeout
    for name in ("torchscript-to-torch", "fx-to-torch", "torch-to-linalg", "torch-to-tosa"):
        assert name in run_help
    assert "harness pipelines" in " ".join(run_help.split())
    opt_help = " ".join(harness("opt", "--help").stdout.split())
    assert "--batch BATCH batch size of the example inputs (default: 1)" in opt_help
    top = " ".join(harness("--help").stdout.split())
    assert "exit status: 0 success" in top and "2 bad usage or input" in top
    assert "--strict" not in opt_help  # exit 1 on a failed port is the default now


def test_verbose_after_the_subcommand(files):
    absent = str(files["dir"] / "absent.mlir")
    before = harness("--verbose", "run", absent, "--pipeline", "torch-to-linalg")
    after = harness("run", absent, "--pipeline", "torch-to-linalg", "--verbose")
    quiet = harness("run", absent, "--pipeline", "torch-to-linalg")
    for proc in (before, after):
        assert proc.returncode == 2 and "Traceback (most recent call last)" in proc.stderr
    assert "Traceback" not in quiet.stderr


def _on_a_terminal(*args) -> tuple[int, str, str]:
    """Runs harness with stderr on a pseudo-terminal; returns (status, stdout, stderr)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "harness", *args], stdout=subprocess.PIPE,
                            stderr=slave, cwd=ROOT, text=True)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 300)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    out = proc.stdout.read()
    return proc.wait(timeout=300), out, b"".join(chunks).decode(errors="replace")


def test_progress_on_a_terminal_and_quiet_when_piped(files):
    args = _tool_args("reduce", files["failing"], files["dir"])
    status, out, err = _on_a_terminal(*args)
    assert status == 1 and "reduced " in out
    assert err.strip(), "no progress on a terminal"
    piped = harness(*args)
    assert piped.returncode == 1 and piped.stderr == ""
    forced = harness(*args, "--progress")  # asked for, it shows when piped too
    assert forced.returncode == 1 and forced.stderr.strip()
    status, _, err = _on_a_terminal(*args, "--no-progress")
    assert status == 1 and err == ""
    # explain says what it is running on a terminal too (the blocker analysis takes a second).
    status, _, err = _on_a_terminal(*_tool_args("explain", files["failing"], files["dir"]))
    assert status == 1 and "each left-over op alone" in err


def test_reproduce_lines_name_the_binary_that_ran(files):
    """Issue 18 item 9: bare `torch-mlir-opt` is not on PATH without an activated venv (rc 127)
    and may not be the binary that ran; the printed command names the one that did."""
    import shlex

    from harness.compiler import builds

    proc = harness("run", str(files["failing"]), "--pipeline", "torch-to-linalg")
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("reproduce: ")]
    words = shlex.split(line.removeprefix("reproduce: "))
    assert words[0] == builds.resolve().path
    pasted = subprocess.run(words, capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert pasted.returncode == 1
    assert "failed to legalize operation 'torch.aten.__and__.Tensor'" in pasted.stderr


def test_opt_says_something_at_once_on_a_terminal(tmp_path):
    """Issue 18 item 14: harness opt spent its first seconds (imports, building) silent."""
    status, out, err = _on_a_terminal("opt", "--config", "tiny", "--model", "fixed", "--torch-only",
                                      "--out-dir", str(tmp_path))
    assert status == 0, out + err
    assert err.lstrip().startswith("loading torch and transformers, building OPT")


def test_opt_takes_the_frontends_as_port_does(monkeypatch):
    """Issue 42: ``harness opt --frontend fx,onnx`` (it had no --frontend: TorchScript only);
    without it the walkthrough's TorchScript stays the default."""
    from harness import cli
    from harness.commands import models
    from harness.frontends.names import FrontendName

    seen = []
    monkeypatch.setattr(models, "_port", lambda args, model, options, building: seen.append(options) or 0)
    assert cli.main(["opt", "--config", "tiny", "--frontend", "fx,onnx"]) == 0
    assert cli.main(["opt", "--config", "tiny"]) == 0
    assert [o.frontends for o in seen] == [(FrontendName.FX, FrontendName.ONNX),
                                           (FrontendName.TORCHSCRIPT,)]
