"""``harness check`` on a run that crashes prints what ``harness port`` prints for one (issue 45,
round 4): the public commands that dig into it (the same IR under runtime checks, reduced, reported),
never the internal child process that ran the compiled code. The crash is our own small module,
the one of lit_tests/pass/index-put-empty-mask-broadcast-oob.mlir: wav2vec2's masked assignment
with a mask that selects nothing, which torch-mlir's lowering reads out of bounds."""

from __future__ import annotations

import shlex
import subprocess

import numpy as np

from support import ROOT, harness

SOURCE = ROOT / "lit_tests" / "pass" / "index-put-empty-mask-broadcast-oob.mlir"


def test_a_crashed_check_prints_the_public_commands_and_they_reproduce_it(tmp_path):
    empty = np.zeros(0, "i8")
    inputs = tmp_path / "in.npz"
    np.savez(inputs, np.ones((1, 4, 8), "f4"), empty, empty, empty, np.zeros((), "f4"))
    done = harness("check", SOURCE, "--pipeline", "function-to-torch,torch-to-linalg",
                   "--inputs", inputs, "--runtime-checks", "--out", tmp_path / "out", "--no-progress")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("fails at execution: @masked_fill_nothing")
    assert "jit_child" not in done.stdout and "rerun:" not in done.stdout
    lines = done.stdout.splitlines()
    start = lines.index("  to dig into the crash (the same IR under runtime checks, a minimal IR "
                        "file that still crashes, an upstream bug report):")
    tools = [shlex.split(line) for line in lines[start + 1:start + 4]]
    assert [words[words.index("harness") + 1] for words in tools] == ["check", "reduce", "report"]
    for words in tools:  # the same file, pipeline and the inputs the run saved
        assert words[words.index("harness") + 2] == str(SOURCE)
        assert words[words.index("--pipeline") + 1] == "function-to-torch,torch-to-linalg"
        saved = words[words.index("--inputs") + 1]
        assert saved.startswith(str(tmp_path / "out")) and saved.endswith("inputs.npz")
    assert "--numerics" in tools[1] and "--numerics" in tools[2]
    # pasted into another folder, the check command reproduces the crash, naming the op
    ran = subprocess.run(tools[0], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert ran.stdout.startswith("fails at execution")
    assert "memref.load" in ran.stdout and "out-of-bounds access" in ran.stdout
