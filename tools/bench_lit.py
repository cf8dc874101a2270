"""How long the lit suite takes, and how much of that is torch-mlir-opt itself.

Runs the suite once with lit's torch-mlir-opt replaced by a timing wrapper (a bash script in a
fresh temporary directory that runs the real binary, appends its start/end time to a log and
passes the exit status or signal through), then prints the suite's wall time next to the time
spent inside torch-mlir-opt:

    python tools/bench_lit.py                 # the whole suite, one lit worker
    python tools/bench_lit.py -j 2 pass/      # a subdirectory, two workers
    python tools/bench_lit.py --opt build/bin/torch-mlir-opt
    python tools/bench_lit.py --no-passes     # can the checks fail? (see below)

"busy" is the wall time during which at least one torch-mlir-opt ran, so busy/wall is the part
of the run the binary accounts for, whatever -j is; "summed" adds every invocation up (it can
exceed the wall time with -j > 1). What is left is lit, the shells, FileCheck and Python.

``--no-passes`` asks whether the checks can fail: the wrapper (named by ``$TORCH_MLIR_OPT``, as a
user's own binary would be) drops every pass and pipeline argument and keeps only the input,
``-o``, ``-split-input-file``, ``-verify-diagnostics``, ``--emit-bytecode`` and ``-mlir-*``
options, so torch-mlir-opt only parses and prints. A test that still passes then checks nothing
that a pass does; the tool lists those.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SUITE = REPO / "lit_tests"

WRAPPER = """#!/usr/bin/env bash
# Written by tools/bench_lit.py: times one torch-mlir-opt run.
start=$EPOCHREALTIME
{real} "$@"
status=$?
end=$EPOCHREALTIME
printf '%s %s %s\\n' "$start" "$end" "$status" >> {log}
if (( status > 128 )); then
  # Died by a signal: die by the same one, so `not --crash` still sees a crash.
  sig=$((status - 128))
  trap - "$sig"
  kill -s "$sig" $$
fi
exit "$status"
"""

# Keeps what parses and prints; drops what transforms (pass and pipeline flags).
NO_PASSES_FILTER = """kept=()
expect_output=0
for arg in "$@"; do
  if (( expect_output )); then kept+=("$arg"); expect_output=0; continue; fi
  case "$arg" in
    -o) kept+=("$arg"); expect_output=1 ;;
    -o=*|--split-input-file|-split-input-file|-verify-diagnostics|--verify-diagnostics|\
    --emit-bytecode|-emit-bytecode|-mlir-*|--mlir-*|-allow-unregistered-dialect|\
    --version|-version|--help*|-help*) kept+=("$arg") ;;
    -*) ;;
    *) kept+=("$arg") ;;
  esac
done
set -- "${kept[@]}"
"""


def busy_time(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of the [start, end] intervals."""
    total, cur_start, cur_end = 0.0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def is_failure(test: dict) -> bool:
    """A lit result that is neither a pass nor an expected outcome."""
    return test.get("code") not in ("PASS", "XFAIL", "UNSUPPORTED")


def by_folder(results: list[dict]) -> dict[str, tuple[int, int]]:
    """(failed, total) per top-level folder of the suite (config, pass, seed, models), from lit's
    test names ("torch-mlir-harness :: seed/mask-to-bool/traced.mlir")."""
    counts: dict[str, tuple[int, int]] = {}
    for test in results:
        folder = test["name"].split(" :: ", 1)[-1].split("/", 1)[0]
        failed, total = counts.get(folder, (0, 0))
        counts[folder] = (failed + is_failure(test), total + 1)
    return counts


def _wrapper_script(real: Path, log: Path, *, no_passes: bool) -> str:
    """The torch-mlir-opt stand-in that logs each run's start and end (and, with ``no_passes``,
    drops the pass flags)."""
    script = WRAPPER.format(real=shlex.quote(str(real)), log=shlex.quote(str(log)))
    if no_passes:
        first, rest = script.split("\n", 1)
        script = first + "\n" + NO_PASSES_FILTER + rest
    return script


def _runs(log: Path) -> list[tuple[float, float]]:
    """(start, end) of each torch-mlir-opt run the wrapper logged."""
    runs = []
    if log.exists():
        for line in log.read_text().splitlines():
            start, end, _status = line.split()
            runs.append((float(start), float(end)))
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="tests or directories under lit_tests/ (default: all)")
    parser.add_argument("--opt", help="torch-mlir-opt to time (default: what harness.compiler.binary finds)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="lit workers (default: 1)")
    parser.add_argument("--no-passes", action="store_true",
                        help="run a torch-mlir-opt that runs no passes; report how many tests fail")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(REPO))
    from harness.compiler import builds
    from harness.errors import HarnessError

    try:
        real = builds.locate(args.opt)
    except HarnessError as e:
        print(f"bench_lit: {e}", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="bench-lit-") as tmp:
        tmp_path = Path(tmp)
        log = tmp_path / "invocations.log"
        wrapper = tmp_path / "torch-mlir-opt"
        wrapper.write_text(_wrapper_script(real, log, no_passes=args.no_passes))
        wrapper.chmod(0o755)
        report = tmp_path / "lit.json"
        tests = [str(SUITE / p) for p in args.paths] or [str(SUITE)]
        command = [
            sys.executable, "-c", "import sys, lit.main; sys.exit(lit.main.main())",
            "-q", f"-j{args.jobs}", f"--output={report}", *tests,
        ]
        # Named the way a user names their own build, so lit reports it as $TORCH_MLIR_OPT.
        env = dict(os.environ, TORCH_MLIR_OPT=str(wrapper),
                   PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        started = time.perf_counter()
        lit_status = subprocess.run(command, env=env, cwd=REPO, check=False).returncode
        wall = time.perf_counter() - started

        runs = _runs(log)
        results = json.loads(report.read_text())["tests"] if report.exists() else []

    summed = sum(end - start for start, end in runs)
    busy = busy_time(runs)
    print(f"suite:           {len(results)} tests, lit exit status {lit_status}, -j{args.jobs}")
    print(f"wall time:       {wall:7.2f} s")
    print(f"torch-mlir-opt:  {len(runs)} runs, {summed:7.2f} s summed, {busy:7.2f} s busy")
    if wall > 0:
        print(f"ratio:           busy/wall = {busy / wall:.2f}, summed/wall = {summed / wall:.2f}")
    failed = sorted(t["name"] for t in results if is_failure(t))
    passed = sorted(t["name"] for t in results if t.get("code") == "PASS")
    print(f"failed:          {len(failed)} of {len(results)}")
    if args.no_passes:
        print(f"no-passes run:   {len(failed)} of {len(results)} tests fail without passes; "
              f"{len(passed)} still pass{':' if passed else ''}")
        for name in passed:
            print(f"  still passes: {name}")
        for folder, (n_failed, n_total) in sorted(by_folder(results).items()):
            print(f"  {folder + '/':<14} {n_failed} of {n_total} fail")
        return 0
    slowest = sorted(results, key=lambda t: t.get("elapsed", 0.0), reverse=True)[:3]
    for test in slowest:
        print(f"  slowest: {test.get('elapsed', 0.0):6.2f} s  {test['name']}")
    return 0 if lit_status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
