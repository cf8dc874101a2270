#!/usr/bin/env python3
"""Benchmark: the blocker analysis (harness.diagnose.blockers) beside one plain run of the same
file, on stock OPT's torch-to-linalg failure. explain, bisect and report run the analysis by
default on a legalization failure; this says what that costs.

Builds its input with `harness emit` (opt-tiny or opt-125m, weights elided), lowers it to the
torch backend contract, then times side by side in one process: a plain `harness run`-style
run, the analysis with 1 and with 2 torch-mlir-opt runs at a time, and a second analysis of the
same content (the per-process cache). Prints seconds and ratios to the plain run.

    python tools/bench_blockers.py                 # OPT tiny
    python tools/bench_blockers.py --config 125m   # the default OPTConfig
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.compiler import pipelines
from harness.compiler.runner import RunOptions, run_pipeline
from harness.port.emit import emit
from harness.diagnose import blockers


def _timed(fn):
    start = time.monotonic()
    value = fn()
    return value, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="tiny", help="OPT preset: tiny (default) or 125m")
    parser.add_argument("--opt", help="torch-mlir-opt binary")
    args = parser.parse_args()
    found = pipelines.default()
    torch_pipeline = found.get("torchscript-to-torch").textual()
    linalg = found.get("torch-to-linalg").textual()
    with tempfile.TemporaryDirectory(prefix="bench-blockers-") as tmp:
        raw, torch_ir = Path(tmp) / "opt.mlir", Path(tmp) / "opt.torch.mlir"
        emit(f"opt-{args.config}", raw)
        lowered = run_pipeline(raw, torch_pipeline, opt=args.opt, options=RunOptions(
            output_path=str(torch_ir), extra_args=("--mlir-print-debuginfo",)))
        if not lowered.ok:
            sys.exit(f"bench_blockers: {torch_pipeline} failed: {lowered.signature}")
        plain, t_plain = _timed(lambda: run_pipeline(torch_ir, linalg, opt=args.opt))
        rows = [("plain run (harness run)", t_plain, 1)]
        results = {}
        for workers in (1, 2):
            blockers.WORKERS = workers
            results[workers], t = _timed(lambda: blockers.analyze(torch_ir, linalg, opt=args.opt,
                                                                   cache=False))
            rows.append((f"blocker analysis, {workers} run(s) at a time", t, results[workers].runs + 0))
        blockers.analyze(torch_ir, linalg, opt=args.opt)
        _, t_cached = _timed(lambda: blockers.analyze(torch_ir, linalg, opt=args.opt))
        rows.append(("blocker analysis again, same content (cache)", t_cached, 0))
    print(f"stock OPT {args.config} through torch-to-linalg: {plain.signature}")
    analysis = results[2]
    print(f"blockers: {', '.join(analysis.names())}; symptoms: "
          f"{', '.join(s.name for s in analysis.symptoms)}")
    for label, seconds, runs in rows:
        print(f"  {label:46s} {seconds:7.3f} s  {seconds / t_plain:6.1f}x the plain run"
              + (f"  ({runs} torch-mlir-opt runs)" if runs else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
