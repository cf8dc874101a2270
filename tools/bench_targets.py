#!/usr/bin/env python3
"""Benchmark: one port with every target and both backends against the default port, side by
side in one run: wall time, CPU time and peak memory, as ratios.

Runs ``python -m harness port MODEL --frontend fx`` as a user does (a fresh process each, so the
imports count), alternating the two commands ``--repeat`` times, and compares the fastest of each:

- A: ``--target linalg --backend refbackend`` (the defaults);
- B: ``--target linalg,tosa,stablehlo --backend refbackend,iree`` (6 ports from one import).

The target (issue 43): B takes at most 2.5x A's wall time. Exit 1 when it does not. Needs the
[iree] extra.

    python tools/bench_targets.py              # gpt2
    python tools/bench_targets.py llama --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 2.5
DEFAULT = ["--target", "linalg", "--backend", "refbackend"]
EVERY = ["--target", "linalg,tosa,stablehlo", "--backend", "refbackend,iree"]


_WRAPPER = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], "
            "stdout=subprocess.DEVNULL).returncode; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)")


def run_once(model: str, flags: list[str]) -> tuple[float, float, float, dict]:
    """Wall seconds, CPU seconds and peak RSS (MiB, the largest process of the tree) of one
    port, and its record."""
    with tempfile.TemporaryDirectory(prefix="bench-targets-") as tmp:
        record_path = Path(tmp) / "record.json"
        # A wrapper process of its own per run: its RUSAGE_CHILDREN peak is the largest process of
        # this port's tree alone (the harness, torch-mlir-opt, the bindings, iree-compile).
        before = os.times()
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", _WRAPPER, sys.executable, "-m", "harness",
                               "--no-progress", "port", model, "--frontend", "fx", "--out", tmp,
                               "--json", str(record_path), *flags],
                              cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.monotonic() - start
        after = os.times()
        if proc.returncode not in (0, 1) or not record_path.is_file():
            sys.exit(f"bench_targets: harness port {model} {' '.join(flags)} failed "
                     f"({proc.returncode}):\n{proc.stderr[-2000:]}")
        peak = float(proc.stdout.strip().splitlines()[-1]) / 1024
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        return wall, cpu, peak, json.loads(record_path.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?", default="gpt2")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, alternating")
    args = parser.parse_args(argv)
    a_runs, b_runs = [], []
    for _ in range(args.repeat):
        a_runs.append(run_once(args.model, DEFAULT))
        b_runs.append(run_once(args.model, EVERY))
    a = min(a_runs, key=lambda r: r[0])
    b = min(b_runs, key=lambda r: r[0])
    for name, (wall, cpu, peak, record), flags in (("A", a, DEFAULT), ("B", b, EVERY)):
        ports = [p for v in record["variants"] for p in v["ports"]]
        outcomes = ", ".join(f"{p['frontend']}-{p.get('target', 'linalg')}-{p.get('backend', 'refbackend')} "
                             f"{p['outcome']}" for p in ports)
        print(f"{name}: harness port {args.model} --frontend fx {' '.join(flags)}")
        print(f"   wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS {peak:.0f} MiB; "
              f"{len(ports)} ports: {outcomes}")
    ratio = b[0] / a[0]
    met = "met" if ratio <= TARGET_RATIO else "MISSED"
    walls = [", ".join(f"{r[0]:.1f}" for r in runs) for runs in (a_runs, b_runs)]
    print(f"B / A: wall {ratio:.2f}x (target <= {TARGET_RATIO}x: {met}), CPU {b[1] / a[1]:.2f}x, "
          f"peak RSS {b[2] / a[2]:.2f}x; walls A {walls[0]}, B {walls[1]}")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
