#!/usr/bin/env python3
"""The vision ports (torchvision:NAME, timm:NAME) for real, in a venv that holds a torch and a
torchvision that fit.

CI's venv has the machine's CPU torch 2.13.0+cpu, beside which PyPI's torchvision does not
import, and a fitting pair costs ~5.4 GB, so CI does not run these; this script does, given the
Python of a venv that has the pair, and prints one line per model and frontend:

    python3 -m venv /work/venv-vision213
    /work/venv-vision213/bin/pip install --isolated torch==2.13.0 torchvision==0.28.0 \\
        timm==1.0.29 transformers==5.24.0 torch-mlir==20261001 pygments==2.21.0 mlir-pygments==1.0.0
    /work/venv-vision213/bin/pip install --isolated --no-deps -e .
    python3 tools/vision_check.py --python /work/venv-vision213/bin/python

(``--isolated``: pip skips this machine's config, which caps torch at 2.14.1 and offers the local
CPU wheel; it then takes PyPI's CUDA build, which runs on the CPU.) Each model goes through
``harness port MODEL --input x=1x3xNxN`` on both frontends, numerics included; ``--image 0``
keeps the library's own input size (224 for all three: resnet18 then takes ~6 min, most of it
in the RefBackend's execution). First it builds four models whose metadata gives another size
(efficientnet_b3 300, inception_v3 299, mobilevit_s 256) and checks the planned image. Exit
status 0 when every size is right and every port verified.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ("torchvision:resnet18", "torchvision:mobilenet_v3_small", "timm:resnet18")
#: The image side the ports use by default: small enough for a quick check, large enough that
#: every stride of the three models leaves a spatial size above 1.
IMAGE = 64


#: Models whose metadata gives a size other than 224, and that size (measured with torchvision
#: 0.28.0, timm 1.0.29): the check builds each and compares the planned image.
SIZES = {"torchvision:efficientnet_b3": 300, "torchvision:inception_v3": 299,
         "timm:mobilevit_s": 256, "timm:adv_inception_v3": 299}
_SIZE_PROBE = """
import json, sys
from harness.models import drivers
sizes = {}
for model in sys.argv[1:]:
    prepared = drivers.prepare(model)
    sizes[model] = [int(prepared.inputs.tensors[0].shape[-1]), prepared.config.input_size_from]
print(json.dumps(sizes))
"""


def check_sizes(python: str) -> bool:
    """Whether each model of :data:`SIZES` plans the image its library's metadata gives."""
    proc = subprocess.run([python, "-c", _SIZE_PROBE, *SIZES], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    if proc.returncode:
        print(f"input sizes: the probe failed: {proc.stderr.strip()[-600:]}")
        return False
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    for model, want in SIZES.items():
        side, source = found[model]
        print(f"{model:34s} input {side}x{side} from {source}: "
              f"{'ok' if side == want else f'expected {want}'}")
    return all(found[m][0] == want for m, want in SIZES.items())


def port(python: str, model: str, image: int, out: str) -> tuple[float, int, dict | None, str]:
    """Wall seconds, exit status, the record (None when none was written) and stderr's tail."""
    record = Path(out) / f"{model.replace(':', '-')}.json"
    command = [python, "-m", "harness", "--no-progress", "port", model, "--out", out,
               "--json", str(record)]
    if image:
        command += ["--input", f"x=1x3x{image}x{image}"]
    print("$", shlex.join(command), flush=True)
    start = time.monotonic()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    data = json.loads(record.read_text()) if record.is_file() else None
    return wall, proc.returncode, data, proc.stderr.strip()[-600:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True,
                        help="the Python of a venv with a fitting torch and torchvision, timm "
                             "and the harness")
    parser.add_argument("--image", type=int, default=IMAGE,
                        help=f"image side (default {IMAGE}); 0: the library's own size")
    parser.add_argument("models", nargs="*", default=list(MODELS))
    args = parser.parse_args(argv)
    versions = subprocess.run(
        [args.python, "-c", "import torch, torchvision, timm; print('torch', torch.__version__, "
         "'torchvision', torchvision.__version__, 'timm', timm.__version__)"],
        capture_output=True, text=True, check=False)
    print(versions.stdout.strip() or versions.stderr.strip()[-400:])
    all_verified = check_sizes(args.python)
    rows = []
    with tempfile.TemporaryDirectory(prefix="vision-check-") as out:
        for model in args.models:
            wall, status, record, tail = port(args.python, model, args.image, out)
            if record is None:
                all_verified = False
                rows.append(f"{model:34s} no record (exit {status}) {wall:6.1f} s: {tail}")
                continue
            if record.get("modality") != "vision":  # the board groups rows by it
                all_verified = False
                rows.append(f"{model:34s} modality {record.get('modality')!r}, not 'vision'")
            for variant in record["variants"]:
                settings = variant["settings"]
                for p in variant["ports"]:
                    seconds = sum(s["seconds"] for s in p["stages"])
                    all_verified &= p["outcome"] == "verified"
                    blocker = (p.get("blockers") or [{}])[0].get("signature", "")
                    rows.append(f"{model:34s} {p['frontend']:12s} {p['outcome']:18s} "
                                f"stages {seconds:6.1f} s  {settings['inputs']}"
                                + (f"  [{blocker[:120]}]" if blocker else ""))
            rows.append(f"{model:34s} whole port (both frontends, one process): {wall:.1f} s, "
                        f"exit {status}")
    print("\n".join(rows))
    return 0 if all_verified else 1


if __name__ == "__main__":
    sys.exit(main())
