#!/usr/bin/env python3
"""Benchmark: a sweep on three frontends (TorchScript, FX, ONNX) against the same sweep on two
(the default, TorchScript and FX), side by side in one run: wall time as a ratio, and what the
three-frontend sweep found, per modality and per frontend.

Runs ``python -m harness sweep`` as a user does (the warm server, ``--fix`` by default), first
on two frontends, then on three, over the same models: by default a shard of ``--all`` (every
transformers model type), or the models named. Prints both wall times and their ratio (the
target, issue 42: three frontends take at most 1.5x two; the ONNX port reuses the FX port's
export and the warm server's imports), then, from the three-frontend sweep's records: per
modality, verified / numerics-mismatch / fails (and the rest) per frontend, and the five
commonest ONNX blockers. Exit 1 when the ratio is over the target. ``--tables-of DIR`` prints
those tables for any sweep folder (a column per frontend, target and backend it asked for).

    python tools/bench_frontends.py                       # --all --shard 1/8, 2 at a time
    python tools/bench_frontends.py --shard 3/16 -j 1
    python tools/bench_frontends.py gpt2 bert t5:encoder  # some models
    python tools/bench_frontends.py --tables-of sweep/    # the tables of a sweep made already
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_RATIO = 1.5
TWO = "torchscript,fx"
THREE = "torchscript,fx,onnx"


def sweep(models: list[str], shard: str, frontends: str, jobs: int, out: Path) -> float:
    """One ``harness sweep`` as a user runs it; its wall seconds."""
    which = models or ["--all", "--shard", shard]
    command = [sys.executable, "-m", "harness", "--no-progress", "sweep", *which,
               "--frontend", frontends, "-j", str(jobs), "--out", str(out)]
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=False)
    wall = time.monotonic() - start
    if done.returncode not in (0, 1):
        sys.exit(f"bench_frontends: {' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return wall


def tables(out: Path) -> list[str]:
    """Per modality, the count of each status per column (frontend, and target and backend
    where the sweep asked for more than the defaults); the commonest ONNX blockers."""
    from harness.sweep import records
    from harness.sweep.status import Status, frontends_of, rows_of

    rows = rows_of(records.load(out))
    frontends = frontends_of(rows)
    shown = (Status.VERIFIED, Status.NUMERICS_MISMATCH, Status.FAILS)
    lines = ["each column: " + " / ".join(s.value for s in shown) + " / other (variants: OPT has two)",
             "| modality | models | " + " | ".join(frontends) + " |",
             "|---|---|" + "---|" * len(frontends)]
    by_modality: dict[str, list] = collections.defaultdict(list)
    for row in rows:
        by_modality[row.modality.value].append(row)
    for modality, group in sorted(by_modality.items()):
        parts = []
        for f in frontends:
            counts = collections.Counter(row.cells[f].status for row in group if f in row.cells)
            other = sum(counts.values()) - sum(counts[s] for s in shown)
            parts.append(" / ".join(str(counts[s]) for s in shown) + f" / {other}")
        label = modality if modality != "unknown" else "no port (refused, crashed or timed out)"
        lines.append(f"| {label} | {len({r.model for r in group})} | " + " | ".join(parts) + " |")
    blockers: collections.Counter[str] = collections.Counter()
    for row in rows:
        cell = row.cells.get("onnx")
        if cell is not None and cell.status is Status.FAILS and cell.blockers:
            stage = cell.failed_stage.value if cell.failed_stage else "?"
            said = re.sub(r"\x1b\[[0-9;]*m", "", cell.blockers[0].signature)  # the exporter's colours
            blockers[f"{stage}: {said.removeprefix(stage + ': ')[:110]}"] += 1
    lines.append("commonest ONNX blockers (first blocker of each failing ONNX port):")
    lines += [f"  {n:3d}  {what}" for what, n in blockers.most_common(5)]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", help="models to sweep (default: --all --shard)")
    parser.add_argument("--shard", default="1/8", help="the shard of --all (I/N; default 1/8)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--out", help="parent of the two sweep folders (default: a fresh temp folder)")
    parser.add_argument("--tables-of", metavar="DIR", help="print the tables of the sweep folder DIR "
                        "(any columns: frontends, targets, backends) and stop")
    args = parser.parse_args(argv)
    if args.tables_of:
        print("\n".join(tables(Path(args.tables_of))))
        return 0
    out = Path(args.out or tempfile.mkdtemp(prefix="bench-frontends-")).resolve()
    two = sweep(args.models, args.shard, TWO, args.jobs, out / "two")
    three = sweep(args.models, args.shard, THREE, args.jobs, out / "three")
    ratio = three / two
    which = " ".join(args.models) if args.models else f"--all --shard {args.shard}"
    print(f"harness sweep {which} -j {args.jobs}")
    print(f"  --frontend {TWO}: {two:.1f} s; --frontend {THREE}: {three:.1f} s")
    met = "met" if ratio <= TARGET_RATIO else "MISSED"
    print(f"  three / two: {ratio:.2f}x (target <= {TARGET_RATIO}x: {met}); load average at the end "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}; folders {out}")
    print("\n".join(tables(out / "three")))
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
