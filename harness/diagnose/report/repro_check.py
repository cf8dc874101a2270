"""Running a written bundle's repro.sh for its self-check, the same way for every kind; its
exit status is read by the one rule (``result.ReproVerdict.of_exit``)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from harness.compiler.runner import RunOptions, execute

from .result import BundleKind, SelfCheck

# What repro.sh may take beyond the run's own timeout (Python start-up, the RefBackend).
_SCRIPT_SLACK_S = 120.0


def run_repro(folder: Path, opt: str, timeout_s: float, kind: BundleKind) -> SelfCheck:
    """Runs the bundle's repro.sh with this Python and ``opt`` as torch-mlir-opt (each kind's
    launcher reads the one it needs): the self-check of a ``kind`` bundle, without the replay
    a compile failure's adds (``replay.self_check``)."""
    bash = shutil.which("bash")
    if bash is None:
        return SelfCheck(repro_exit_status=None, repro_output="", bug=kind.bug,
                         detail="no bash on PATH to run repro.sh")
    # No PYTHONPATH: repro.py needs torch, numpy and torch-mlir only, not this source tree.
    env = {"PYTHON": sys.executable, "TORCH_MLIR_OPT": opt}
    limit = timeout_s + _SCRIPT_SLACK_S
    done = execute([bash, str(folder / "repro.sh")],
                   RunOptions(timeout_s=limit, dump_on_timeout=False, env=env))
    if done.timed_out:
        return SelfCheck(repro_exit_status=None, repro_output="", bug=kind.bug,
                         detail=f"repro.sh did not finish within {limit:g} s")
    output = "\n".join(line for line in (done.stderr + done.stdout).splitlines()
                       if line.startswith(("repro.sh:", "repro.py:"))
                       and not line.startswith("repro.sh: running:"))
    return SelfCheck(repro_exit_status=done.returncode, repro_output=output, bug=kind.bug)
