#!/usr/bin/env python3
"""Issue 25's named cases, each through ``harness port`` on both frontends, as one table.

Each case must end verified, or fail with ranked, named blockers, on both frontends, in under
60 s at tiny size. The script runs them one at a time (``nice``), reads each port record, and
prints one row per case and frontend: the outcome, the first-ranked blocker, the port's wall
seconds (both frontends, one process: what a user waits for), its CPU seconds (the port and its
children, user + system: what the load bends least) and the load average when it started (the
machine is shared). The transformers cases run with ``--python`` (default: this
Python); ``torchvision:``/``timm:`` cases need a venv whose torch and torchvision fit (see
``tools/vision_check.py``), given with ``--vision-python``; without one they are skipped::

    python3 tools/named_cases.py --vision-python /work/venv-vision213/bin/python

Exit status 0 when every case ended well (verified, or failed with a named blocker) on both
frontends within the time limit.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 60.0

#: The named cases and the arguments each takes beyond ``port NAME``:
#: the vision-library models at tiny size (their own architecture on the smallest image it takes).
CASES: dict[str, tuple[str, ...]] = {
    "vit": (),
    "convnext": (),
    "whisper": (),
    "whisper:encoder": (),
    "wav2vec2": (),
    "clip": (),
    "llava": (),
    "detr": (),
    "torchvision:resnet18": ("--size", "tiny"),
    "torchvision:mobilenet_v3_small": ("--size", "tiny"),
    "timm:resnet18": ("--size", "tiny"),
}


def is_vision_library(case: str) -> bool:
    return case.startswith(("torchvision:", "timm:"))


@dataclass
class Row:
    case: str
    frontend: str
    outcome: str
    blocker: str
    seconds: float
    cpu: float  # user + system seconds of the port and its children: less bent by the load
    load: float

    @property
    def good(self) -> bool:
        ended = self.outcome == "verified" or (self.outcome == "fails" and bool(self.blocker))
        return ended and self.seconds < LIMIT_S


def blocker_name(port: dict) -> str:
    """The first-ranked blocker, as stage: op or signature (empty when there is none)."""
    blockers = sorted(port.get("blockers") or [], key=lambda b: b.get("rank", 0))
    if not blockers:
        return ""
    first = blockers[0]
    name = first.get("op") or first.get("signature", "")
    where = Path(first.get("location") or "").name
    more = f" (+{len(blockers) - 1} more)" if len(blockers) > 1 else ""
    stage = first.get("stage", "")
    name = name.removeprefix(f"{stage}: ")  # a signature names its stage itself
    return f"{stage}: {name}"[:90] + (f" at {where}" if where else "") + more


def run_case(python: str, case: str, out: str) -> list[Row]:
    record = Path(out) / f"{case.replace(':', '-')}.json"
    command = ["nice", python, "-m", "harness", "--no-progress", "port", case, "--out", out,
               "--json", str(record), *CASES.get(case, ())]
    print("$", shlex.join(command), flush=True)
    load = os.getloadavg()[0]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if not record.is_file():
        tail = " ".join(proc.stderr.strip().split())[-160:]
        return [Row(case, "-", f"no record (exit {proc.returncode})", tail, wall, cpu, load)]
    data = json.loads(record.read_text())
    return [Row(case, p["frontend"], p["outcome"], blocker_name(p), wall, cpu, load)
            for variant in data["variants"] for p in variant["ports"]]


def table(rows: list[Row]) -> str:
    lines = ["| case | frontend | outcome | first blocker | seconds | cpu s | load | ok |",
             "|---|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r.case} | {r.frontend} | {r.outcome} | {r.blocker or '-'} | "
                     f"{r.seconds:.1f} | {r.cpu:.1f} | {r.load:.2f} | {'yes' if r.good else 'NO'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable,
                        help="the Python that runs the transformers cases (default: this one)")
    parser.add_argument("--vision-python", default="",
                        help="the Python of a venv with a fitting torch and torchvision and timm "
                             "(the torchvision:/timm: cases are skipped without it)")
    parser.add_argument("--out", default="",
                        help="keep the ports' folders and records here (default: a temporary "
                             "folder, removed)")
    parser.add_argument("cases", nargs="*", default=list(CASES))
    args = parser.parse_args(argv)
    rows: list[Row] = []
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    with (contextlib.nullcontext(args.out) if args.out
          else tempfile.TemporaryDirectory(prefix="named-cases-")) as out:
        for case in args.cases:
            if is_vision_library(case) and not args.vision_python:
                print(f"{case}: skipped (no --vision-python)")
                continue
            python = args.vision_python if is_vision_library(case) else args.python
            case_rows = run_case(python, case, out)
            for r in case_rows:
                print(f"  {r.frontend}: {r.outcome} {r.blocker} ({r.seconds:.1f} s, cpu "
                      f"{r.cpu:.1f} s, load {r.load:.2f})", flush=True)
            rows += case_rows
    print(table(rows))
    return 0 if rows and all(r.good for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
