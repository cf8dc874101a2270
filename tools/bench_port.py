#!/usr/bin/env python3
"""Benchmark: a tiny model's whole ``harness port`` (both frontends, numerics), and where the
time goes.

Runs the command as a user does (``python -m harness port MODEL --json F``, a fresh process, so
the imports of torch and transformers count), then reads the record and prints each stage's
seconds and its share of the wall time, side by side, with the CPU time of the whole process
tree (what the run costs on a machine other jobs share). The target: under a minute on
2 cores.

    python tools/bench_port.py              # gpt2
    python tools/bench_port.py llama --repeat 3
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 60.0


def run_once(model: str, extra: list[str]) -> tuple[float, float, dict]:
    """Wall seconds, CPU seconds (user + system of the process and all its children) and the
    record of one port."""
    with tempfile.TemporaryDirectory(prefix="bench-port-") as tmp:
        record_path = Path(tmp) / "record.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "harness", "port", model, "--out", tmp,
                               "--json", str(record_path), *extra],
                              cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode not in (0, 1) or not record_path.is_file():
            sys.exit(f"bench_port: harness port {model} failed ({proc.returncode}):\n{proc.stderr}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, json.loads(record_path.read_text())


def shares(wall: float, record: dict) -> list[tuple[str, float]]:
    """(what, seconds) for every stage of every port, the builds and diagnoses, and the rest
    (starting Python, importing torch and transformers, writing the record)."""
    rows: list[tuple[str, float]] = []
    for variant in record["variants"]:
        rows.append((f"{variant['name']} build", variant["build_seconds"]))
        for port in variant["ports"]:
            for stage in port["stages"]:
                rows.append((f"{variant['name']} {port['frontend']} {stage['name']}", stage["seconds"]))
            if port.get("diagnosis_seconds"):
                rows.append((f"{variant['name']} {port['frontend']} diagnosis (blockers, bisect)",
                             port["diagnosis_seconds"]))
    rows.append(("startup, imports, record", max(0.0, wall - sum(s for _, s in rows))))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", nargs="?", default="gpt2")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the fastest is broken down")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="more harness port options")
    args = parser.parse_args(argv)
    runs = [run_once(args.model, args.extra) for _ in range(args.repeat)]
    wall, cpu, record = min(runs, key=lambda r: r[0])
    outcomes = ", ".join(f"{v['name']} {p['frontend']}: {p['outcome']}"
                         for v in record["variants"] for p in v["ports"])
    print(f"harness port {args.model}: {outcomes}")
    print(f"wall {wall:.1f} s (target < {TARGET_S:.0f} s: {'met' if wall < TARGET_S else 'MISSED'}), "
          f"CPU {cpu:.1f} s (user + system, whole process tree); CPU / wall {cpu / wall:.2f}"
          + (f"; walls of {len(runs)} runs: {', '.join(f'{r[0]:.1f}' for r in runs)}"
             if len(runs) > 1 else ""))
    rows = shares(wall, record)
    width = max(len(name) for name, _ in rows)
    for name, seconds in rows:
        print(f"  {name:{width}s} {seconds:7.2f} s {100 * seconds / wall:5.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
