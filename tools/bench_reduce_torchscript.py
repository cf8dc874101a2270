#!/usr/bin/env python3
"""Benchmark: reduce failures inside the TorchScript stage as a new user would.

For each model, `harness port MODEL --frontend torchscript` (tiny config, a fresh temp folder)
writes the object-graph IR that torchscript-to-torch fails on; harness.diagnose.reduce reduces it at
the failing pass (``AtFailingPass.OBJECT_GRAPH``: bisect, then the IR just before that pass,
through that pass alone), and the reduced file is run again through that pass. Prints ops
before/after, the failing pass, wall and CPU seconds, and the target.
Target: <= 20 ops within 60 s for fnet and longformer.

    python tools/bench_reduce_torchscript.py                  # fnet and longformer
    python tools/bench_reduce_torchscript.py fnet
    python tools/bench_reduce_torchscript.py longformer --ir longformer=PATH  # reuse a port's IR

The load average is printed with each line: on the shared 2-core machine wall time follows the
load (CPU seconds do not).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.compiler.runner import RunOptions, run_pipeline
from harness.diagnose.reduce import AtFailingPass, ReduceOptions, reduce_file

TARGET_OPS = 20
TARGET_S = 60.0
MODELS = ("fnet", "longformer")


def cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def build_input(model: str, workdir: Path) -> Path:
    """`harness port MODEL --frontend torchscript`; the imported object-graph IR."""
    subprocess.run([sys.executable, "-m", "harness", "port", model, "--frontend", "torchscript",
                    "--out", str(workdir)], cwd=ROOT, capture_output=True, text=True, timeout=1800,
                   check=False)
    found = sorted(workdir.glob(f"*/{model}.torchscript/{model}.torch.mlir"))
    if not found:
        raise SystemExit(f"harness port {model} wrote no {model}.torch.mlir under {workdir}")
    return found[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=list(MODELS))
    parser.add_argument("--budget-s", type=float, default=TARGET_S)
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--ir", action="append", default=[], metavar="MODEL=PATH",
                        help="the object-graph IR of MODEL (a port's MODEL.torch.mlir) instead of "
                             "porting it again (repeatable)")
    args = parser.parse_args()
    given = dict(item.split("=", 1) for item in args.ir)
    workdir = Path(tempfile.mkdtemp(prefix="bench-reduce-ts-"))
    ok = True
    try:
        for model in args.models:
            src = Path(given[model]) if model in given else build_input(model, workdir / model)
            out = workdir / f"{model}.reduced.mlir"
            start, cpu = time.monotonic(), cpu_s()
            result = reduce_file(src, "torchscript-to-torch", options=ReduceOptions(
                output_path=out, budget_s=args.budget_s, at_failing_pass=AtFailingPass.OBJECT_GRAPH))
            wall, used = time.monotonic() - start, cpu_s() - cpu
            again = run_pipeline(out, result.pipeline_text, options=RunOptions(disable_threading=True))
            same = str(again.signature) == result.signature
            met = result.ops_after <= TARGET_OPS and wall <= TARGET_S and same
            ok &= met
            print(f"{model}: {result.summary()}; {wall:.1f} s wall, {used:.1f} s CPU; "
                  f"re-run {'fails the same' if same else 'DIFFERS: ' + str(again.signature)}; "
                  f"target <= {TARGET_OPS} ops in <= {TARGET_S:g} s: {'met' if met else 'NOT met'}; "
                  f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        if args.keep:
            print(f"work folder: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
