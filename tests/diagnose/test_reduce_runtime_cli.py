"""``harness reduce --numerics`` on code that dies when it runs (the command a port prints for a
crashed input set, issue 45): the runtime reducer, not a refusal as "no miscompile"; its
reproduce line reruns the reduced file under runtime checks, and that run names the bad access."""

from __future__ import annotations

import shlex
import subprocess

import numpy as np

from support import harness
from support.programs import EMPTY_INDEX_PUT


def test_reduce_numerics_keeps_a_crash_and_its_command_reproduces_it(tmp_path):
    src = tmp_path / "empty.mlir"
    src.write_text(EMPTY_INDEX_PUT)
    empty = np.zeros(0, np.int64)
    np.savez(tmp_path / "in.npz", np.ones((1, 4, 8), np.float32), empty, empty, empty,
             np.array(0.0, np.float32))
    out = tmp_path / "crash.reduced.mlir"
    done = harness("reduce", src, "--pipeline", "function-to-torch,torch-to-linalg", "--numerics",
                   "--inputs", tmp_path / "in.npz", "-o", out, "--budget-s", "60")
    assert done.returncode == 1, done.stdout + done.stderr
    assert out.is_file() and "torch.aten.index_put.hacked_twin" in out.read_text()
    [line] = [x for x in done.stdout.splitlines() if x.startswith("reproduce: ")]
    words = shlex.split(line.removeprefix("reproduce: "))
    assert "--runtime-checks" in words and str(out) in words
    ran = subprocess.run(words, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "memref.load" in ran.stdout and "out-of-bounds access" in ran.stdout
