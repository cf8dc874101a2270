#!/usr/bin/env python3
"""Benchmark: the same sweep with ``-j N`` (a port process per model, N at a time) and with
``--cluster local:N`` (a Dask LocalCluster of N single-threaded workers, each task a port
process), side by side in one run, and the ratio of their wall times. The target: the
cluster no slower than ``-j`` on the same machine, within 10% (ratio <= 1.10).

    python tools/bench_cluster.py                      # the 21 architectures, N = 2
    python tools/bench_cluster.py gpt2 bert llama -n 2

The two sweeps alternate order across repeats (``--repeats``) so a machine that gets busier
or quieter during the run does not favour one of them; each sweep ports from scratch.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_sweep import ARCHITECTURES

TARGET_RATIO = 1.10


def _sweep(models: list[str], jobs: int, cluster: str | None) -> tuple[float, int]:
    from harness.sweep.cluster import run_sweep_on_cluster
    from harness.sweep.runner import SweepOptions, run_sweep

    out = Path(tempfile.mkdtemp(prefix="bench-cluster-")).resolve()
    options = SweepOptions(out=out, force=True, jobs=jobs, cwd=str(ROOT))
    start = time.monotonic()
    if cluster:
        runs = run_sweep_on_cluster(models, options, cluster)
    else:
        runs = run_sweep(models, options)
    return time.monotonic() - start, sum(r.ok for r in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(ARCHITECTURES))
    parser.add_argument("-n", "--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()

    local_s, cluster_s = [], []
    for i in range(args.repeats):
        order = [None, f"local:{args.workers}"] if i % 2 == 0 else [f"local:{args.workers}", None]
        for cluster in order:
            seconds, ok = _sweep(args.models, args.workers, cluster)
            (cluster_s if cluster else local_s).append(seconds)
            what = f"--cluster {cluster}" if cluster else f"-j {args.workers}"
            print(f"{what:>18}: {seconds:7.1f} s, {ok} of {len(args.models)} models ok", flush=True)
    local, cluster = sum(local_s) / len(local_s), sum(cluster_s) / len(cluster_s)
    ratio = cluster / local
    print(f"cluster/local wall time: {ratio:.3f} (target <= {TARGET_RATIO}: "
          f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}); {len(args.models)} models, "
          f"{args.workers} workers, {args.repeats} repeat(s)")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
