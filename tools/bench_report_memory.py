#!/usr/bin/env python3
"""Benchmark: peak memory of ``harness report`` on a 100 MB IR file, beside ``harness run``.

Writes (in a fresh temp folder) a file whose weights are one inline ``dense<"0x...">`` literal
on a single ~100 MB line, feeding an op torch-to-linalg cannot legalize (with Python locations,
as imported models have: a diagnostic located on the long line itself would make
torch-mlir-opt echo that line into stderr, which every record then holds), then runs
``harness run`` and ``harness report`` on it, one after the other, as a user would. Each
command's peak resident memory is the largest of its process and every process it started
(torch-mlir-opt included), read from ``wait4``'s rusage.

Prints, for each: peak RSS, peak RSS / input size, wall time. Target: report <= 3x the input
(it once measured 12.3 GB, 120x, and 80 s before redaction was streamed). The report elides
the literal from input.mlir (the failure stays the same without it), so its other runs are
small; ``report --keep-weights`` shows the cost when the weights must stay.

    python tools/bench_report_memory.py                  # 100 MB, the report with its defaults
    python tools/bench_report_memory.py --mb 20 --no-reduce
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 3.0
PIPELINE = "torch-to-linalg"


def write_input(path: Path, mb: int) -> int:
    """A function whose weight is one dense hex literal of ``mb`` MB (not a splat) feeding an
    op torch-to-linalg cannot legalize; ops carry Python locations, as imported models do."""
    n = mb * 2**20 // 8  # f32 elements: 8 hex digits each
    block = os.urandom(32768).hex().upper()  # 8192 elements, repeated
    per_block = len(block) // 8
    with open(path, "w") as f:
        f.write('#loc1 = loc("model.py":10:0)\n#loc2 = loc("model.py":11:0)\n'
                "func.func @f() -> !torch.vtensor<[?,1],si64> {\n"
                '  %w = torch.vtensor.literal(dense<"0x')
        left = n
        while left:
            k = min(left, per_block)
            f.write(block[:8 * k])
            left -= k
        f.write(f'"> : tensor<{n}xf32>) : !torch.vtensor<[{n}],f32> loc(#loc1)\n'
                f"  %0 = torch.aten.nonzero %w : !torch.vtensor<[{n}],f32> -> "
                f"!torch.vtensor<[?,1],si64> loc(#loc2)\n"
                f"  return %0 : !torch.vtensor<[?,1],si64>\n}}\n")
    return path.stat().st_size


# Runs `python -m harness ARGS` and, at exit, writes the harness process's own peak RSS (KiB).
_SHIM = """\
import atexit, os, resource, runpy, sys
def _own_peak():
    with open(os.environ["BENCH_OWN_PEAK"], "w") as f:
        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
atexit.register(_own_peak)
sys.argv = ["harness", *sys.argv[1:]]
runpy.run_module("harness", run_name="__main__")
"""


@dataclass
class Measured:
    tree: int     # peak RSS (bytes) of the largest process: harness or a torch-mlir-opt it ran
    own: int      # peak RSS of the harness process itself
    seconds: float
    status: int
    stderr: str


def measure(args: list[str], work: Path) -> Measured:
    peak_file = work / "own-peak.txt"
    env = {**os.environ, "BENCH_OWN_PEAK": str(peak_file)}
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-c", _SHIM, *args], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read().decode(errors="replace")[-2000:]
    own = int(peak_file.read_text()) * 1024 if peak_file.is_file() else 0
    # ru_maxrss (KiB) from wait4: the largest of the process and its waited-for descendants.
    return Measured(usage.ru_maxrss * 1024, own, time.monotonic() - start, proc.returncode, tail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=100, help="size of the literal (default 100)")
    parser.add_argument("--no-reduce", action="store_true", help="report without reducing")
    parser.add_argument("--budget-s", type=float, default=60.0, help="report's reduce budget")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-report-memory-"))
    try:
        src = work / "big.mlir"
        size = write_input(src, args.mb)
        runs = {
            "harness run": ["run", str(src), "--pipeline", PIPELINE, "--json"],
            "harness report": ["report", str(src), "--pipeline", PIPELINE, "--out", str(work / "out"),
                               "--budget-s", str(args.budget_s)]
                              + (["--no-reduce"] if args.no_reduce else []),
            # Weights kept (as when eliding them changes the failure): bisect's run writes MLIR's
            # crash reproducer, which prints the literal back as hex beside the parsed file.
            "report --keep-weights": ["report", str(src), "--pipeline", PIPELINE, "--out",
                                      str(work / "out-kept"), "--budget-s", str(args.budget_s),
                                      "--keep-weights"] + (["--no-reduce"] if args.no_reduce else []),
        }
        mib = 2**20
        print(f"input: {src.name}, {size / mib:.1f} MiB, one line of {args.mb} MB of hex; "
              f"pipeline {PIPELINE}")
        print(f"{'command':<22} {'peak RSS':>10} {'/input':>7} {'harness process':>16} "
              f"{'/input':>7} {'time':>7}  exit")
        ratios = {}
        for name, cmd in runs.items():
            m = measure(cmd, work)
            ratios[name] = m.tree / size
            print(f"{name:<22} {m.tree / mib:>6.0f} MiB {m.tree / size:>6.2f}x "
                  f"{m.own / mib:>12.0f} MiB {m.own / size:>6.2f}x {m.seconds:>6.1f}s  {m.status}")
            if m.status not in (0, 1):
                print(f"  {name} failed:\n{m.stderr}")
        print("(peak RSS: the largest process, harness or a torch-mlir-opt it ran; harness "
              "process: Python alone)")
        ok = ratios["harness report"] <= TARGET_RATIO
        print(f"target: harness report <= {TARGET_RATIO:g}x the input: "
              f"{'met' if ok else 'NOT met'} ({ratios['harness report']:.2f}x; "
              f"harness run {ratios['harness run']:.2f}x; with --keep-weights "
              f"{ratios['report --keep-weights']:.2f}x, not held to it)")
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
