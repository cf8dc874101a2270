"""The IR tools (run, bisect, reduce, report, explain) never import torch: it costs ~180 MiB of
resident memory and seconds of start-up, and a report of a 100 MB file must stay within 3x its
size. ``report`` imported it through the --numerics options even without --numerics."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support import ROOT


# Runs the CLI, then prints which heavy modules it imported (as the last line of stderr).
_SHIM = """\
import atexit, json, runpy, sys
atexit.register(lambda: print(json.dumps(sorted(m for m in ("torch", "transformers", "numpy")
                                                if m in sys.modules)), file=sys.stderr))
sys.argv = ["harness", *sys.argv[1:]]
runpy.run_module("harness", run_name="__main__")
"""

NONZERO = """\
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[?,1],si64> {
  %0 = torch.aten.nonzero %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[?,1],si64>
  return %0 : !torch.vtensor<[?,1],si64>
}
"""


# Each command, and what its output says once it has done its work (not an early error).
@pytest.mark.parametrize("command,done", [
    (["run", "{file}", "--pipeline", "torch-to-linalg"], "legalization-failure: nonzero.mlir"),
    (["bisect", "{file}", "--pipeline", "torch-to-linalg", "--out", "{tmp}"],
     "first failing pass: torch-finalizing-backend-type-conversion"),
    (["reduce", "{file}", "--pipeline", "torch-to-linalg", "-o", "{tmp}/reduced.mlir", "--budget-s", "5"],
     "keeps: legalization-failure"),
    (["report", "{file}", "--pipeline", "torch-to-linalg", "--out", "{tmp}", "--no-reduce"],
     "title: [torch-mlir] failed to legalize operation 'torch.aten.nonzero'"),
    (["explain", "{file}", "--pipeline", "torch-to-linalg"], "blocker: torch.aten.nonzero"),
], ids=lambda c: c[0] if isinstance(c, list) else "")
def test_ir_tools_leave_torch_unimported(command, done, tmp_path):
    src = tmp_path / "nonzero.mlir"
    src.write_text(NONZERO)
    argv = [a.format(file=src, tmp=tmp_path) for a in command]
    proc = subprocess.run([sys.executable, "-c", _SHIM, *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert proc.returncode in (0, 1) and done in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    imported = json.loads(proc.stderr.strip().splitlines()[-1])
    assert "torch" not in imported and "transformers" not in imported, (command[0], imported)
