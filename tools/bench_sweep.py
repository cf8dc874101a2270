#!/usr/bin/env python3
"""Benchmark: a tiny-config ``harness sweep`` (``--fix``, both frontends, numerics), and where
its time goes.

Runs the sweep as a user does, twice over the same models: cold (each model a fresh ``harness
port`` process, so importing torch and transformers counts) and warm (each port forked from one
server that imported them once: harness/sweep/warm.py), then reads the records and prints, model
by model: the wall time of its process, the seconds of its stages in torch-mlir-opt (``torchscript-to-torch``,
``fx-to-torch``, ``torch-to-linalg``, and the blocker/bisect runs of the diagnosis), the
RefBackend (``refbackend-lowering``: the bindings' passes; ``execution``), and the rest
(Python start, trace/export, import, numbers against eager), with the total and torch-mlir-opt's
share side by side; and last warm/cold of the wall times and of the CPU times. The
target: the 21 architectures of docs/fix.md in at most 10 minutes on 2 cores; and warm/cold
at most 0.4.

    python tools/bench_sweep.py                 # the 21 architectures, 2 at a time, cold and warm
    python tools/bench_sweep.py gpt2 bert -j 1  # some models
    python tools/bench_sweep.py --mode warm     # one of the two
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

#: docs/fix.md's 21 architectures, as MODEL names.
ARCHITECTURES = ("gpt2", "gpt_neo", "gpt_neox", "gptj", "llama", "mistral", "qwen2", "qwen3",
                 "phi", "phi3", "gemma", "falcon", "bloom", "opt", "mpt", "stablelm", "bert",
                 "roberta", "distilbert", "t5:encoder", "bart")
TARGET_S = 600.0
WARM_TARGET = 0.4
OPT_STAGES = ("torchscript-to-torch", "fx-to-torch", "torch-to-linalg")
REFBACKEND_STAGES = ("refbackend-lowering", "execution")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(ARCHITECTURES))
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--out", help="parent of the sweep folders (default: a fresh temp folder)")
    parser.add_argument("--mode", choices=("both", "cold", "warm"), default="both",
                        help="cold then warm (default), or one of them")
    parser.add_argument("--numerics-check", action="store_true")
    args = parser.parse_args()

    out = Path(args.out or tempfile.mkdtemp(prefix="bench-sweep-")).resolve()
    modes = ("cold", "warm") if args.mode == "both" else (args.mode,)
    totals = {mode: sweep(mode, args, out / mode) for mode in modes}
    if len(totals) == 2:
        (cold_wall, cold_cpu), (warm_wall, warm_cpu) = totals["cold"], totals["warm"]
        print(f"warm/cold: wall {warm_wall:.1f} s / {cold_wall:.1f} s = {warm_wall / cold_wall:.2f} "
              f"(target at most {WARM_TARGET}); CPU {warm_cpu:.1f} s / {cold_cpu:.1f} s = "
              f"{warm_cpu / cold_cpu:.2f}; {len(args.models)} models, {args.jobs} at a time")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"(the machine is shared: other jobs count in the wall time)")
    return 0


def sweep(mode: str, args: argparse.Namespace, out: Path) -> tuple[float, float]:
    """One sweep of ``args.models``; its table; (wall s, CPU s of all its processes)."""
    from harness.sweep import records
    from harness.sweep.runner import SweepOptions, run_sweep

    options = SweepOptions(out=out, force=True, jobs=args.jobs, numerics_check=args.numerics_check,
                           cwd=str(ROOT), warm=mode == "warm")
    cpu_before = os.times()
    start = time.monotonic()
    runs = run_sweep(args.models, options,
                     say=lambda line: print(f"[{mode}] {line}", file=sys.stderr, flush=True))
    wall = time.monotonic() - start
    cpu_after = os.times()
    cpu = (cpu_after.children_user - cpu_before.children_user
           + cpu_after.children_system - cpu_before.children_system)
    by_model = records.load(out).by_model()

    print(f"== {mode} ==")
    print(f"{'model':<12} {'wall s':>7} {'opt s':>6} {'refback s':>9} {'other s':>7} {'opt %':>6}  outcome")
    total_opt = total_ref = total_wall = 0.0
    for run in runs:
        record = by_model[run.model].record
        opt_s = ref_s = 0.0
        if record is not None:
            for _, port in record.ports():
                seconds = port.stage_seconds()
                opt_s += sum(seconds.get(s, 0.0) for s in OPT_STAGES) + port.diagnosis_seconds
                ref_s += sum(seconds.get(s, 0.0) for s in REFBACKEND_STAGES)
        other = run.seconds - opt_s - ref_s
        total_opt, total_ref, total_wall = total_opt + opt_s, total_ref + ref_s, total_wall + run.seconds
        share = 100 * opt_s / run.seconds if run.seconds else 0.0
        print(f"{run.model:<12} {run.seconds:7.1f} {opt_s:6.1f} {ref_s:9.1f} {other:7.1f} "
              f"{share:5.1f}%  {run.outcome}")
    share = 100 * total_opt / total_wall if total_wall else 0.0
    print(f"{'sum':<12} {total_wall:7.1f} {total_opt:6.1f} {total_ref:9.1f} "
          f"{total_wall - total_opt - total_ref:7.1f} {share:5.1f}%")
    print(f"{mode} sweep wall time: {wall:.1f} s with {args.jobs} at a time (target {TARGET_S:.0f} s: "
          f"{wall / TARGET_S:.2f} of it); CPU of all processes: {cpu:.1f} s; "
          f"{sum(r.ok for r in runs)} of {len(runs)} models ok; folder {out}")
    return wall, cpu


if __name__ == "__main__":
    sys.exit(main())
