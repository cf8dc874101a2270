"""The self-check: does the written bundle reproduce? Its IR through the runner (same
signature?) and its repro.sh with ``TORCH_MLIR_OPT`` set to the binary used (exit 1?)."""

from __future__ import annotations

from pathlib import Path

from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions, run_pipeline

from .repro_check import run_repro
from .result import SelfCheck


def replay(folder: Path, replay_name: str, textual: str, *, opt: str, timeout_s: float) -> RunRecord:
    """The bundle's file through the pipeline, as the original ran."""
    return run_pipeline(folder / replay_name, textual, opt=opt, options=RunOptions(timeout_s=timeout_s))


def self_check(folder: Path, replay_name: str, original: RunRecord, replayed: RunRecord, *,
               opt: str, timeout_s: float) -> SelfCheck:
    """Runs ``folder/repro.sh`` against ``opt`` (the one launcher and rule of every bundle,
    :func:`.repro_check.run_repro`) and compares ``replayed`` with ``original``."""
    check = run_repro(folder, opt, timeout_s, bug="the failure")
    return SelfCheck(replayed_file=replay_name, signature=str(replayed.signature),
                     signature_reproduced=replayed.signature == original.signature,
                     repro_exit_status=check.repro_exit_status, repro_output=check.repro_output,
                     detail=check.detail)
