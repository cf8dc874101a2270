#!/usr/bin/env python3
"""Whether each torchvision and timm model ``harness sweep --all`` adds builds and runs eagerly.

A build-only loop (no port): in a venv whose torch, torchvision and timm fit (see
``tools/vision_check.py``), each model of ``harness/sweep/library_models.py`` goes through the
driver the port uses (``drivers.prepare``: build with random weights, plan the image from the
library's metadata, one eager forward), one line each, then the count::

    python3 tools/library_builds.py --python /work/venv-vision213/bin/python

Exit status 0 when all build.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_CHILD = """
import json, sys, time
from harness.models import drivers
for model in sys.argv[1:]:
    start = time.monotonic()
    try:
        prepared = drivers.prepare(model)
        row = {"model": model, "ok": True, "input": list(prepared.inputs.tensors[0].shape),
               "parameters": sum(p.numel() for p in prepared.model.parameters())}
    except Exception as error:
        row = {"model": model, "ok": False, "error": f"{type(error).__name__}: {error}"[:300]}
    row["seconds"] = round(time.monotonic() - start, 2)
    print(json.dumps(row), flush=True)
"""


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from harness.sweep.library_models import library_models

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True,
                        help="the Python of a venv with a fitting torch, torchvision and timm")
    parser.add_argument("models", nargs="*", default=library_models())
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(["nice", args.python, "-c", _CHILD, *args.models], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    rows = []
    for line in proc.stdout:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        rows.append(row)
        what = (f"input {'x'.join(map(str, row['input']))}, {row['parameters'] / 1e6:.1f} M params"
                if row["ok"] else row["error"])
        print(f"{row['model']:40s} {'ok  ' if row['ok'] else 'FAIL'} {row['seconds']:6.2f} s  {what}",
              flush=True)
    proc.wait()
    built = sum(r["ok"] for r in rows)
    print(f"{built} of {len(args.models)} build and run eagerly"
          + (f" (the loop ended early, exit {proc.returncode})" if len(rows) < len(args.models) else ""))
    return 0 if built == len(args.models) else 1


if __name__ == "__main__":
    sys.exit(main())
