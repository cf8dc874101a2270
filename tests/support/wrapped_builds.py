"""Second "builds" for the build-cache, diff and build-bisect tests, made on this machine.

Each is the wheel's real torch-mlir-opt behind a small Python script that changes one behaviour
and then execs the real binary, so every record is a real run (real diagnostics, a real crash
with its stack dump): no download, deterministic.

- ``version_text``: answers ``--version`` as another build would (LLVM 23, an assertions build);
- ``sleep_s``: starts late (a slower build);
- ``drop_pass``: runs torch-to-linalg without one of its passes, expanded from the real
  binary's ``--dump-pass-pipeline`` (a build that lost a conversion);
- ``crash_on_op``: on an input that holds the op, runs a real crasher of the real binary
  instead (tests/data/crashers/A_remainder_int_by_zero.mlir: SIGFPE in -canonicalize).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from harness.compiler.binary import wheel_binary

REAL = str(wheel_binary())
CRASHER = str(Path(__file__).resolve().parents[1] / "data" / "crashers" / "A_remainder_int_by_zero.mlir")
LINALG = "torch-backend-to-linalg-on-tensors-backend-pipeline"

LLVM23_VERSION = "LLVM (http://llvm.org/):\n  LLVM version 23.0.0git\n  Optimized build.\n"

# A function torch-to-linalg lowers only through convert-torch-to-tmtensor (aten.cumsum), and
# one that needs no TMTensor (aten.mul.Scalar).
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
CUMSUM = """func.func @cumsum(%arg0: !torch.vtensor<[1,7],si64>) -> !torch.vtensor<[1,7],si64> {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.cumsum %arg0, %int1, %none : !torch.vtensor<[1,7],si64>, !torch.int, !torch.none -> !torch.vtensor<[1,7],si64>
  return %0 : !torch.vtensor<[1,7],si64>
}
"""  # noqa: E501
SCALE = """func.func @scale(%arg0: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> {
  %float = torch.constant.float 2.500000e-01
  %0 = torch.aten.mul.Scalar %arg0, %float : !torch.vtensor<[2,3],f32>, !torch.float -> !torch.vtensor<[2,3],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}
"""  # noqa: E501


def linalg_without(pass_name: str) -> str:
    """torch-to-linalg as the real binary expands it, less every ``func.func(PASS)``."""
    proc = subprocess.run([REAL, f"-pass-pipeline=builtin.module({LINALG})", "--dump-pass-pipeline",
                           "-o", "/dev/null"], input="module {}", capture_output=True, text=True,
                          timeout=60)
    text = proc.stderr.split("\n", 1)[1]  # after "Pass Manager with N passes:"
    dropped = re.sub(rf"func\.func\(\s*{re.escape(pass_name)}(\{{[^}}]*\}})?\s*\),\s*", "", text)
    assert dropped != text, f"{pass_name} is not in {LINALG}"
    return re.sub(r"\s+", " ", dropped).strip()


def make_build(folder: Path, name: str, *, version_text: str | None = None, sleep_s: float = 0.0,
               drop_pass: str | None = None, crash_on_op: str | None = None) -> Path:
    """An executable ``folder/name/torch-mlir-opt`` that wraps the real binary."""
    replacement = f"-pass-pipeline={linalg_without(drop_pass)}" if drop_pass else None
    script = folder / name / "torch-mlir-opt"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"""#!{sys.executable}
import os, sys, time
REAL = {REAL!r}
args = sys.argv[1:]
if args == ["--version"] and {version_text!r} is not None:
    sys.stdout.write({version_text!r})
    sys.exit(0)
time.sleep({sleep_s!r})
if {replacement!r} is not None:
    args = [{replacement!r} if a == "-pass-pipeline=builtin.module({LINALG})" else a for a in args]
if {crash_on_op!r} is not None:
    for a in args:
        if os.path.isfile(a):
            with open(a, errors="replace") as f:
                if {crash_on_op!r} in f.read():
                    args = [{CRASHER!r}, "-canonicalize", "-mlir-disable-threading", "-o", os.devnull]
                    break
os.execv(REAL, [REAL, *args])
""")
    script.chmod(0o755)
    return script
