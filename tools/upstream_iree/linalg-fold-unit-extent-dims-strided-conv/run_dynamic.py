"""Compiles dynamic.mlir with iree-compile (llvm-cpu) and runs it with iree-run-module on a 4x4
and a 3x3 input, against the convolution computed with numpy. Needs numpy and IREE's tools on
PATH. Exit status 1 when the 4x4 result is wrong and the 3x3 one right (the bug), 0 when both
are right, 2 when it cannot tell."""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if not (shutil.which("iree-compile") and shutil.which("iree-run-module")):
    print("run_dynamic.py: CANNOT RUN: iree-compile and iree-run-module are not on PATH")
    sys.exit(2)
rng = np.random.default_rng(0)
w = rng.standard_normal((2, 2, 3, 3)).astype(np.float32)
with tempfile.TemporaryDirectory() as tmp:
    work = Path(tmp)
    vmfb = work / "dynamic.vmfb"
    subprocess.run(["iree-compile", "--iree-hal-target-device=local",
                    "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=generic",
                    str(HERE / "dynamic.mlir"), "-o", str(vmfb)], check=True)
    np.save(work / "w.npy", w)
    np.save(work / "init.npy", np.zeros((1, 2, 1, 1), np.float32))
    wrong = {}
    for size in (3, 4):
        x = rng.standard_normal((1, 2, size, size)).astype(np.float32)
        np.save(work / "x.npy", x)
        # stride 2, 3x3 window, 1x1 output: rows and columns 0..2 of the input
        expected = np.einsum("nchw,fchw->nf", x[:, :, :3, :3], w).reshape(1, 2, 1, 1)
        subprocess.run(["iree-run-module", f"--module={vmfb}", "--device=local-task",
                        "--function=strided_conv_1x1_output_dynamic", f"--input=@{work / 'x.npy'}",
                        f"--input=@{work / 'w.npy'}", f"--input=@{work / 'init.npy'}",
                        f"--output=@{work / 'out.npy'}"], check=True, capture_output=True)
        got = np.load(work / "out.npy")
        wrong[size] = not np.allclose(got, expected, rtol=1e-5, atol=1e-5)
        print(f"input {size}x{size}: expected {expected.ravel()}, iree {got.ravel()}"
              f" ({'WRONG' if wrong[size] else 'ok'})")
if wrong[4] and not wrong[3]:
    print("run_dynamic.py: REPRODUCED: the 4x4 input gives wrong values, the 3x3 one the right ones")
    sys.exit(1)
print("run_dynamic.py: NOT REPRODUCED")
sys.exit(0)
