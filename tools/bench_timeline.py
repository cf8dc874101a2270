#!/usr/bin/env python3
"""Benchmark: ``harness timeline`` of OPT-125m's torchscript-to-torch beside the plain run of
that stage (target: at most 3x). Weights elided in both, as the harness runs them.

Builds its input with ``harness emit opt-125m`` (or takes ``--input``), then times, alternating,
the plain run (``run_pipeline``) and the whole timeline (the input printed once, the run with
``-mlir-print-ir-after-all`` and ``-mlir-timing``, the record and the page written). Prints the
median of each and their ratio.

    python tools/bench_timeline.py                  # opt-125m, 3 rounds
    python tools/bench_timeline.py --input FILE --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.compiler import pipelines
from harness.compiler.runner import ELIDE_PRINTED_WEIGHTS, RunOptions, run_pipeline
from harness.sweep import timeline_page
from harness.diagnose.timeline import run_timeline


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", help="a TorchScript-object-graph IR file (default: emit opt-125m)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--opt", help="torch-mlir-opt binary")
    args = parser.parse_args()
    textual = pipelines.default().get("torchscript-to-torch").textual()
    with tempfile.TemporaryDirectory(prefix="bench-timeline-") as tmp:
        source = Path(args.input) if args.input else Path(tmp) / "opt.mlir"
        if not args.input:
            from harness.port.emit import emit

            emit("opt-125m", source)
        plain_s, timeline_s = [], []
        rows = changed = 0
        for i in range(args.rounds):
            start = time.monotonic()
            record = run_pipeline(source, textual, opt=args.opt,
                                  options=RunOptions(extra_args=ELIDE_PRINTED_WEIGHTS))
            plain_s.append(time.monotonic() - start)
            if not record.ok:
                sys.exit(f"bench_timeline: the plain run failed: {record.signature}")
            out = Path(tmp) / f"timeline-{i}"
            start = time.monotonic()
            timeline = run_timeline(str(source), textual, out, opt=args.opt)
            timeline_page.write(timeline, out)
            timeline_s.append(time.monotonic() - start)
            rows, changed = len(timeline.rows), len(timeline.changed)
        plain, full = statistics.median(plain_s), statistics.median(timeline_s)
        print(f"input: {source} ({source.stat().st_size / 2**20:.1f} MiB), {textual}")
        plain_all, timeline_all = (", ".join(f"{s:.2f}" for s in runs) for runs in (plain_s, timeline_s))
        print(f"plain run:  {plain:.2f} s (median of {args.rounds}: {plain_all})")
        print(f"timeline:   {full:.2f} s (median of {args.rounds}: {timeline_all}); "
              f"{rows} passes, {changed} changed")
        print(f"ratio: {full / plain:.2f}x (target <= 3x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
