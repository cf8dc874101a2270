"""Fuzzes the harness's two exposed surfaces with the property tests' targets, at volume.

    python tools/fuzz.py [--target parsers|run|both] [--inputs 10000] [--seed N] [--out DIR]

- ``parsers``: real stderr (tests/data) mutated, through the diagnostics and crash parsers and
  everything tools read of a record. Counts uncaught exceptions and inputs over 1 s.
- ``run``: the crashers' torch IR mutated, through ``run_pipeline`` with the pass each one
  crashes. Counts uncaught exceptions, misclassifications (checked against what the process
  did and against torch-mlir-opt's own parse, not against the classifier), inputs whose
  harness-side time is over 1 s, hangs, and crash signatures that no unmutated crasher has.

Each input is ``Random(f"{seed}:{target}:{i}")``, so ``--seed S --only I`` replays one. Every
failing input and the first input of each new crash signature are saved under ``--out`` (a
reproducer: the input, the command, the stderr), and the counts are printed per target.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support.fuzz_targets import parse_everything, run_and_check
from support.mutations import IRMutator, ir_corpus, mutate_stderr, stderr_corpus

from harness.compiler.builds import resolve
from harness.compiler.irfile import unique_dir, write_atomically
from harness.compiler.runner import RunOptions, repro_command, run_pipeline

SLOW_S = 1.0


class Tally:
    def __init__(self, target: str, out: Path):
        self.target, self.out = target, out
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.extra: list[str] = []  # target-specific figures for the summary line

    def save(self, kind: str, i: int, text: str, note: str) -> Path:
        folder = self.out / self.target
        path = folder / f"{kind}-{i}.txt"
        write_atomically(path, f"{note}\n--- input ---\n{text}")
        self.examples.setdefault(kind, str(path))
        return path

    def print(self, seconds: float) -> None:
        c = self.counts
        print(f"[{self.target}] {c['inputs']:,} inputs in {seconds:.0f} s: "
              f"{c['exceptions']} uncaught exceptions, {c['slow']} over {SLOW_S:g} s, "
              + ", ".join(self.extra))
        for kind, path in sorted(self.examples.items()):
            print(f"  first {kind}: {path}")


def fuzz_parsers(seed: int, inputs: int, tally: Tally, only: int | None) -> None:
    corpus = stderr_corpus()
    statuses = [None, 0, 1, 2, -6, -8, -11, -9, 134, 139, 245, 250]
    sizes = []
    for i in range(inputs) if only is None else [only]:
        rng = random.Random(f"{seed}:parsers:{i}")
        text = mutate_stderr(corpus, rng)
        status, at_timeout = rng.choice(statuses), rng.random() < 0.2
        tally.counts["inputs"] += 1
        start = time.perf_counter()
        try:
            parse_everything(text, status, at_timeout)
        except Exception:  # what the fuzzer is for
            tally.counts["exceptions"] += 1
            tally.save("exception", i, text, f"status={status} at_timeout={at_timeout}\n"
                       + traceback.format_exc())
            continue
        elapsed = time.perf_counter() - start
        sizes.append((len(text), elapsed, i))
        if elapsed > SLOW_S:
            tally.counts["slow"] += 1
            tally.save("slow", i, text, f"{elapsed:.2f} s for {len(text):,} characters")
    if sizes:
        worst = max(sizes, key=lambda s: s[1])
        rate = max((t / n for n, t, _ in sizes if n > 10_000), default=0.0)
        tally.extra = [f"slowest {worst[1] * 1000:.0f} ms ({worst[0]:,} characters, input {worst[2]}), "
                       f"largest {max(n for n, _, _ in sizes):,} characters, "
                       f"worst rate {rate * 1e9:.0f} ns/character on inputs over 10 KB",
                       "new crash signatures n/a (no compiler runs)"]


def fuzz_run(seed: int, inputs: int, tally: Tally, only: int | None, timeout_s: float) -> None:
    corpus = ir_corpus()
    mutator = IRMutator([text for _, text, _ in corpus])
    binary = resolve().path
    options = RunOptions(timeout_s=timeout_s)  # symbolized: new signatures are told by name
    known: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="harness-fuzz-") as work:
        for name, text, flag in corpus:
            path = Path(work) / f"{name}.mlir"
            path.write_text(text)
            known.add(str(run_pipeline(path, flag, opt=binary).signature))
        new: dict[str, str] = {}
        outcomes: Counter[str] = Counter()
        for i in range(inputs) if only is None else [only]:
            rng = random.Random(f"{seed}:run:{i}")
            name, text, flag = rng.choice(corpus)
            mutated = mutator.mutate(text, rng)
            tally.counts["inputs"] += 1
            start = time.perf_counter()
            try:
                record, wrong = run_and_check(mutated, flag, binary, Path(work), options)
            except Exception:
                tally.counts["exceptions"] += 1
                tally.save("exception", i, mutated, f"{flag}\n" + traceback.format_exc())
                continue
            own = time.perf_counter() - start - record.elapsed_s
            outcomes[record.outcome.value] += 1
            if wrong:
                tally.counts["misclassified"] += 1
                tally.save("misclassified", i, mutated, f"{flag}: {wrong}\n--- stderr ---\n{record.stderr}")
            if own > SLOW_S + (2 * timeout_s if record.outcome.value == "timeout" else 0):
                tally.counts["slow"] += 1
                tally.save("slow", i, mutated, f"{flag}: {own:.2f} s in the harness")
            key = str(record.signature)
            if record.outcome.is_crash and key not in known and key not in new:
                slug = record.signature.slug(48)
                path = Path(tally.out) / "run" / f"new-crasher-{len(new) + 1:03d}-{slug}.mlir"
                write_atomically(path, mutated)
                write_atomically(path.with_suffix(".txt"),
                                 f"signature: {key}\nfrom: {name} (seed {seed}, input {i})\n"
                                 f"reproduce: {repro_command(flag, path)}\n--- stderr ---\n{record.stderr}")
                new[key] = str(path)
        tally.extra = [f"{tally.counts['misclassified']} misclassified",
                       f"{len(new)} new crash signatures",
                       "outcomes " + ", ".join(f"{k} {v:,}" for k, v in outcomes.most_common())]
        for key, path in new.items():
            print(f"  new: {key}\n       {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=("parsers", "run", "both"), default="both")
    parser.add_argument("--inputs", type=int, default=10_000, help="inputs per target")
    parser.add_argument("--seed", type=int, default=None, help="default: from the clock")
    parser.add_argument("--only", type=int, default=None, help="replay input number I only")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per compiler run")
    parser.add_argument("--out", default=None, help="parent of the reproducer folder")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    out = unique_dir("fuzz-", parent=args.out)
    print(f"seed {seed}; reproducers in {out}", flush=True)
    failed = 0
    for target in (("parsers", "run") if args.target == "both" else (args.target,)):
        tally = Tally(target, out)
        start = time.monotonic()
        if target == "parsers":
            fuzz_parsers(seed, args.inputs, tally, args.only)
        else:
            fuzz_run(seed, args.inputs, tally, args.only, args.timeout)
        tally.print(time.monotonic() - start)
        failed += tally.counts["exceptions"] + tally.counts["slow"] + tally.counts["misclassified"]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
