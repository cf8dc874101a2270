"""The self-check: does the written bundle reproduce? Its IR through the runner (same
signature?) and its repro.sh with ``TORCH_MLIR_OPT`` set to the binary used (non-zero exit?)."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions, execute, run_pipeline

from .result import SelfCheck

# repro.sh may take this much longer than one torch-mlir-opt run (finding the binary, bash).
_SCRIPT_SLACK_S = 60.0


def replay(folder: Path, replay_name: str, textual: str, *, opt: str, timeout_s: float) -> RunRecord:
    """The bundle's file through the pipeline, as the original ran."""
    return run_pipeline(folder / replay_name, textual, opt=opt, options=RunOptions(timeout_s=timeout_s))


def self_check(folder: Path, replay_name: str, original: RunRecord, replayed: RunRecord, *,
               opt: str, timeout_s: float) -> SelfCheck:
    """Runs ``folder/repro.sh`` against ``opt`` and compares ``replayed`` with ``original``."""
    bash = shutil.which("bash")
    status: int | None = None
    output = ""
    detail = ""
    if bash is None:
        detail = "no bash on PATH to run repro.sh"
    else:
        # The runner's execute: on a timeout it kills the whole group, torch-mlir-opt included
        # (subprocess.run would kill bash only and leave the binary running).
        limit = timeout_s + _SCRIPT_SLACK_S
        done = execute([bash, str(folder / "repro.sh")], RunOptions(
            timeout_s=limit, dump_on_timeout=False, env={"TORCH_MLIR_OPT": opt}))
        if done.timed_out:
            detail = f"repro.sh did not finish within {limit:g} s"
        else:
            status = done.returncode
            # Its verdict only: the "running:" line shows the binary's local path, quoted by
            # bash's printf %q in a way redaction cannot undo whatever it holds.
            output = "\n".join(line for line in (done.stderr + done.stdout).splitlines()
                               if line.startswith("repro.sh:")
                               and not line.startswith("repro.sh: running:"))
    return SelfCheck(replayed_file=replay_name, signature=str(replayed.signature),
                     signature_reproduced=replayed.signature == original.signature,
                     repro_exit_status=status, repro_output=output, detail=detail)
