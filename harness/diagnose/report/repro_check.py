"""Whether a written bundle reproduces, by running its repro.sh: the one rule of the miscompile
and run-time failure bundles (exit 1, ``REPRODUCED_STATUS``, means the bug showed)."""

from __future__ import annotations

import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.compiler.runner import RunOptions, execute

from .result import REPRODUCED_STATUS

# What repro.sh may take beyond the run's own timeout (Python start-up, the RefBackend).
_SCRIPT_SLACK_S = 120.0


@dataclass
class ReproCheck:
    """Whether a written bundle reproduces: its repro.sh, run with this Python and binary (the
    miscompile bundle's and the run-time failure bundle's)."""

    repro_exit_status: int | None
    repro_output: str          # repro.sh's verdict lines
    detail: str = ""           # why it could not run
    bug: str = "wrong numbers"  # what exit 1 means

    @property
    def reproduced(self) -> bool:
        return self.repro_exit_status == REPRODUCED_STATUS

    def describe(self) -> str:
        if self.reproduced:
            return f"reproduced: 'bash repro.sh' exits {self.repro_exit_status} ({self.bug})"
        why = self.detail or f"'bash repro.sh' exits {self.repro_exit_status}"
        return f"NOT REPRODUCED: {why}"

    def to_json(self) -> dict:
        return {**asdict(self), "reproduced": self.reproduced}


def run_repro(folder: Path, opt: str, timeout_s: float, bug: str = "wrong numbers") -> ReproCheck:
    """Runs the bundle's repro.sh with this Python and torch-mlir-opt: it must exit 1."""
    bash = shutil.which("bash")
    if bash is None:
        return ReproCheck(None, "", "no bash on PATH to run repro.sh", bug)
    # No PYTHONPATH: repro.py needs torch, numpy and torch-mlir only, not this source tree.
    env = {"PYTHON": sys.executable, "TORCH_MLIR_OPT": opt}
    limit = timeout_s + _SCRIPT_SLACK_S
    done = execute([bash, str(folder / "repro.sh")],
                   RunOptions(timeout_s=limit, dump_on_timeout=False, env=env))
    if done.timed_out:
        return ReproCheck(None, "", f"repro.sh did not finish within {limit:g} s", bug)
    output = "\n".join(line for line in (done.stderr + done.stdout).splitlines()
                       if line.startswith(("repro.sh:", "repro.py:"))
                       and not line.startswith("repro.sh: running:"))
    return ReproCheck(done.returncode, output, bug=bug)
