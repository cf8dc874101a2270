#!/usr/bin/env python3
"""Benchmark: reduce stock OPT's first failure (torch-to-linalg cannot legalize the dense<true>
mask literal) within a wall-clock budget.

Builds its own input with `harness opt --model stock` (in a fresh temp folder), takes the IR that
torch-to-linalg fails on (opt.1.torchscript-to-torch.mlir), reduces it with harness.diagnose.reduce, runs
the reduced file again and prints ops before/after, tries, seconds and the target.
Target: <= 15 ops within 60 s (the default budget) on 2 cores, same signature on a re-run.

    python tools/bench_reduce.py                 # OPT tiny config
    python tools/bench_reduce.py --config 125m   # the default OPTConfig (~1,000 ops)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.compiler import pipelines
from harness.compiler.runner import RunOptions, run_pipeline
from harness.diagnose.reduce import ReduceOptions, Strategy, reduce_file

TARGET_OPS = 15
TARGET_S = 60.0
PIPELINE = "torch-to-linalg"


def build_input(config: str, workdir: Path, opt: str | None) -> Path:
    """Runs `harness opt` as a user would; returns the file torch-to-linalg fails on."""
    cmd = [sys.executable, "-m", "harness", "opt", "--config", config, "--model", "stock",
           "--out-dir", str(workdir)]
    if opt:
        cmd += ["--opt", opt]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=ROOT,
                          timeout=1800)
    if proc.returncode not in (0, 1):  # 1: the stock model fails, as it should here
        sys.exit(f"bench_reduce: harness opt failed:\n{proc.stderr}")
    found = sorted(workdir.glob("opt-*/opt.1.torchscript-to-torch.mlir"))
    if not found:
        sys.exit(f"bench_reduce: harness opt wrote no torch backend IR under {workdir}:\n{proc.stdout}")
    return found[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="tiny", help="OPT preset: tiny (default) or 125m")
    parser.add_argument("--budget-s", type=float, default=TARGET_S)
    parser.add_argument("--opt", help="torch-mlir-opt binary")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="reduce-bench-"))
    try:
        t = time.perf_counter()
        src = build_input(args.config, workdir, args.opt)
        build_s = time.perf_counter() - t
        out = workdir / "opt.reduced.mlir"
        result = reduce_file(src, PIPELINE, options=ReduceOptions(
            output_path=out, budget_s=args.budget_s, opt=args.opt))
        # The baseline, same input and budget: delta debugging on text lines (what a generic
        # reducer such as C-Reduce's line pass does), without knowing IR structure.
        baseline = reduce_file(src, PIPELINE, options=ReduceOptions(
            output_path=workdir / "opt.lines.mlir", budget_s=args.budget_s, opt=args.opt,
            strategy=Strategy.LINES))
        again = run_pipeline(out, pipelines.default().resolve(PIPELINE), opt=args.opt,
                             options=RunOptions(extra_args=("-mlir-disable-threading",)))
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        same = str(again.signature) == result.signature
        met = result.ops_after <= TARGET_OPS and result.elapsed_s <= TARGET_S and same
        print(f"input:      OPT {args.config}, {src.stat().st_size / 1024:.0f} KiB "
              f"(built by harness opt in {build_s:.1f} s)")
        print(f"signature:  {result.signature}")
        print(f"ops:        {result.ops_before} -> {result.ops_after}")
        print(f"tries:      {result.tries} ({result.kept} kept), stopped: {result.stopped}")
        print(f"seconds:    {result.elapsed_s:.1f} (budget {args.budget_s:.0f}) on {cores} cores")
        print(f"re-run:     {'same signature' if same else 'DIFFERENT: ' + str(again.signature)}")
        print(f"target:     <= {TARGET_OPS} ops within {TARGET_S:.0f} s: {'met' if met else 'NOT met'}")
        print(f"baseline:   line-based reduction, same budget: {baseline.ops_before} -> "
              f"{baseline.ops_after} ops in {baseline.tries} tries, {baseline.elapsed_s:.1f} s "
              f"(stopped: {baseline.stopped})")
        print(f"ratio:      ops after, IR/lines = {result.ops_after / max(baseline.ops_after, 1):.3f}x; "
              f"seconds, IR/lines = {result.elapsed_s / max(baseline.elapsed_s, 1e-9):.3f}x")
        if args.keep:
            print(f"files:      {workdir}")
        else:
            print("reduced IR:")
            print(out.read_text().rstrip())
        return 0 if met else 1
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
