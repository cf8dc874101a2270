"""The self-check of a compile failure's bundle: its IR through the runner (same signature?)
and its repro.sh with ``TORCH_MLIR_OPT`` set to the binary used, read by the one rule of every
kind (``repro_check.run_repro``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions, run_pipeline

from .repro_check import run_repro
from .result import BundleKind, SelfCheck


def replay(folder: Path, replay_name: str, textual: str, *, opt: str, timeout_s: float) -> RunRecord:
    """The bundle's file through the pipeline, as the original ran."""
    return run_pipeline(folder / replay_name, textual, opt=opt, options=RunOptions(timeout_s=timeout_s))


def self_check(folder: Path, replay_name: str, original: RunRecord, replayed: RunRecord, *,
               opt: str, timeout_s: float) -> SelfCheck:
    """Runs ``folder/repro.sh`` against ``opt`` and compares ``replayed`` with ``original``."""
    check = run_repro(folder, opt, timeout_s, BundleKind.COMPILE_FAILURE)
    return replace(check, replayed_file=replay_name, signature=str(replayed.signature),
                   signature_reproduced=replayed.signature == original.signature)
