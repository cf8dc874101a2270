#!/usr/bin/env python3
"""The targets on the ResNet18 case (tools/resnet18_case.py, widths 64..512 as upstream's
e2e ResNet18, aten.adaptive_avg_pool2d kept backend-legal), measured side by side in one run:

  check      harness check: the wrong numbers, and how long the whole model takes to lower and run
  bisect     the localization: RefBackend runs against 2 * log2(ops), and the chain it names
  reduce     harness reduce --numerics with a 60 s budget: ops after, wall and CPU seconds
             (this process and its children); beside it the same budget spent by the IR
             reductions on the whole function without the localization first
  one-op     the one op that computes wrong (harness.diagnose.numerics.one_op, with the second
             opinion): RefBackend runs, wall and CPU seconds, the op (target: at most 30 s)
  worker     the chain run 5 times on the RefBackend worker and with run_refbackend (two
             child processes per run): wall seconds per run and their ratio

    python tools/bench_numerics.py                 # 64x64 image
    python tools/bench_numerics.py --size 224      # upstream's image size
    python tools/bench_numerics.py --tiny          # widths 8..64 (the pytest case)
    python tools/bench_numerics.py --one-op-only   # check and the one-op verdict only
    python tools/bench_numerics.py --one-op-only --wrong-op aten.relu:9
                    # the reference evaluator gets the 9th relu 1% wrong, as the tests' wrong
                    # evaluators do: the verdict's usual path (the values inside show the op)

The machine is shared: wall seconds vary with its load, CPU seconds much less; both are printed.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))


def cpu_s() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class Timer:
    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), cpu_s()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, cpu_s() - self.cpu

    def __str__(self) -> str:
        return f"{self.wall:.1f} s wall, {self.cpu:.1f} s CPU"


def wrong_evaluator(name: str, k: str) -> None:
    """The reference evaluator's ``torch.NAME`` (aten.relu) 1% too large at its K-th call."""
    from harness.execute import ref_ops

    overload = ref_ops.torch_overload(name)
    calls = [0]

    def handler(ev, op, args):
        calls[0] += 1
        out = overload(*args)
        return (out * 1.01 if calls[0] == int(k) else out,)

    ref_ops.HANDLERS[f"torch.{name}"] = handler


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--budget-s", type=float, default=60.0)
    parser.add_argument("--one-op-only", action="store_true", help="check and the one-op verdict only")
    parser.add_argument("--wrong-op", metavar="NAME:K",
                        help="the evaluator computes the K-th NAME 1%% too large")
    args = parser.parse_args()

    from harness.execute.check import CheckOptions, check_file
    from harness.diagnose.numerics import NumericsBisectOptions, bisect_numerics, one_op
    from resnet18_case import LEGAL_POOL, write

    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench-numerics-") as tmp_name:
        tmp = Path(tmp_name)
        with Timer() as t:
            ir, inputs = write(tmp / "case", tiny=args.tiny, size=args.size)
        print(f"model: ResNet18 {'tiny' if args.tiny else 'full'} width, 1x3x{args.size}x{args.size}, "
              f"{ir.stat().st_size / 1e6:.0f} MB of IR ({t})")

        with Timer() as t:
            checked = check_file(ir, CheckOptions(pipeline=LEGAL_POOL, inputs_path=str(inputs),
                                                  out_dir=str(tmp)))
        worst = max(o.max_abs_diff for o in checked.numerics.outputs) if checked.numerics else float("nan")
        print(f"check:  {checked.outcome.value}, max abs diff {worst:.3g} ({t})")

        if args.wrong_op:
            wrong_evaluator(*args.wrong_op.rsplit(":", 1))
        with Timer() as t:
            verdict = one_op(ir, LEGAL_POOL, known_wrong=True, options=NumericsBisectOptions(
                inputs_path=str(inputs), out_dir=str(tmp)))
        said = verdict.culprit.headline() if verdict.culprit else f"no single op: {verdict.reason}"
        print(f"one-op: {said}; {verdict.runs} RefBackend runs, {verdict.observed} values observed "
              f"of {verdict.ops} ops "
              f"({t}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())})")
        if args.one_op_only:
            return 0

        with Timer() as t:
            bisected = bisect_numerics(ir, LEGAL_POOL, options=NumericsBisectOptions(
                inputs_path=str(inputs), out_dir=str(tmp), blame=False))
        print(f"bisect: {bisected.chain_text()}; {bisected.runs} RefBackend runs for {bisected.ops} "
              f"ops (2*log2(ops) = {2 * math.log2(bisected.ops):.1f}) ({t})")

        _reduce_both(ir, inputs, tmp, args.budget_s)
        _worker_against_cold(bisected, tmp)
    return 0


def _reduce_both(ir: Path, inputs: Path, tmp: Path, budget_s: float) -> None:
    """reduce_numerics localized first and with IR reductions only: sizes, tries and times."""
    from harness.diagnose.reduce.miscompile import NumericsReduceOptions, reduce_numerics
    from resnet18_case import LEGAL_POOL

    rows = []
    for label, first in (("localized first", True), ("IR reductions only", False)):
        with Timer() as t:
            reduced = reduce_numerics(ir, LEGAL_POOL, options=NumericsReduceOptions(
                output_path=tmp / f"reduced-{first}.mlir", inputs_path=str(inputs),
                budget_s=budget_s, out_dir=str(tmp), localize_first=first))
        rows.append((label, reduced, t))
    for label, reduced, t in rows:
        print(f"reduce ({label}, budget {budget_s:g} s): {reduced.ops_before} -> "
              f"{reduced.ops_after} ops, {reduced.computing_before} -> {reduced.computing_after} "
              f"computing ({' -> '.join(reduced.computing_ops[:6])}"
              f"{' ...' if len(reduced.computing_ops) > 6 else ''}); {reduced.tries} tries, "
              f"{reduced.localization_runs} localization runs; {reduced.stopped.value}; {t}")
    (_, fast, tf), (_, slow, ts) = rows
    print(f"  IR reductions only / localized first: {ts.wall / tf.wall:.1f}x the wall time, "
          f"{ts.cpu / tf.cpu:.1f}x the CPU time, {slow.ops_after / max(fast.ops_after, 1):.1f}x the ops")


def _worker_against_cold(bisected, tmp: Path) -> None:
    """The bisected chain run 5 times by a RefBackendWorker and by run_refbackend."""
    import numpy as np

    from harness.execute.refbackend import run_refbackend
    from harness.execute.signature import read_signature
    from harness.execute.worker import RefBackendWorker

    piece, piece_inputs = Path(bisected.piece_path), np.load(bisected.piece_inputs)
    arrays = [piece_inputs[k] for k in piece_inputs.files]
    linalg = Path(bisected.piece_path).with_name("chain.linalg.mlir")
    signature = read_signature(piece)
    n = 5
    with RefBackendWorker(work_dir=tmp) as worker:
        worker.run(linalg, arrays, signature)  # the child's start, once
        with Timer() as tw:
            for _ in range(n):
                worker.run(linalg, arrays, signature)
    with Timer() as tc:
        for _ in range(n):
            run_refbackend(linalg, arrays, signature=signature)
    # wall only: the worker's child is still running, so its CPU time is not counted yet
    print(f"worker: {tw.wall / n:.2f} s per run of the chain; run_refbackend {tc.wall / n:.2f} s; "
          f"ratio {tc.wall / max(tw.wall, 1e-9):.1f}x")


if __name__ == "__main__":
    sys.exit(main())
