"""What a child's huge output costs the harness: peak RSS and time of ``process.execute``.

    python tools/bench_output.py [--mb 1000] [--stream stderr|stdout|both]

Each measurement runs in a fresh Python of its own (its VmHWM is its peak alone), reading a
shell pipeline that prints ``--mb`` MB. Before the output was bounded, it measured 4.2 GB of RSS
and 77 s for 1 GB on
stderr (and 3.1 GB on stdout) when all of it was kept; harness.compiler.capture keeps the
first and last 8 MiB of each stream.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[3])
from harness.compiler.process import execute
size, stream = int(sys.argv[1]), sys.argv[2]
printing = {"stderr": f"head -c {size} /dev/zero | tr '\\0' e >&2",
            "stdout": f"head -c {size} /dev/zero | tr '\\0' o",
            "both": f"head -c {size} /dev/zero | tr '\\0' e >&2; head -c {size} /dev/zero | tr '\\0' o"}
start = time.monotonic()
done = execute(["sh", "-c", printing[stream]], timeout_s=3600)
took = time.monotonic() - start
with open("/proc/self/status") as f:
    peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
print(f"{peak / 2**20:,.0f} MiB peak RSS, {took:.1f} s; kept {len(done.stdout) + len(done.stderr):,} "
      f"characters of {done.stdout_bytes + done.stderr_bytes:,} bytes")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1000, help="MB printed on each stream")
    parser.add_argument("--stream", choices=("stderr", "stdout", "both"), action="append",
                        help="the streams measured (default: each alone, then both)")
    args = parser.parse_args()
    for stream in args.stream or ("stderr", "stdout", "both"):
        proc = subprocess.run([sys.executable, "-c", CHILD, str(args.mb * 10**6), stream, str(ROOT)],
                              capture_output=True, text=True, check=True)
        print(f"{args.mb:,} MB on {stream}: {proc.stdout.strip()}")


if __name__ == "__main__":
    main()
