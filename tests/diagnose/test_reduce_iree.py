"""``harness reduce FILE --iree-compile TARGET`` (issue 43): a port that fails at iree-compile
(torch-mlir's TOSA outside IREE's profiles: an f64 cast) gets a reduced case that iree-compile
rejects the same way, with a reproduce line of IREE's own tool, and the port prints the command."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("iree.compiler")

TOSA = """func.func @main(%arg0: tensor<2x4xf32>, %arg1: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf64>) {
  %0 = tosa.add %arg0, %arg1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = tosa.sub %0, %arg1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = tosa.cast %1 : (tensor<2x4xf32>) -> tensor<2x4xf64>
  %3 = tosa.sub %1, %0 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %3, %2 : tensor<2x4xf32>, tensor<2x4xf64>
}
"""  # noqa: E501 (IR as MLIR prints it, one op a line)
SAID = "'tosa.cast' op is not profile-aligned: element type 'f64' is not legal"


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "--no-progress", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=300, check=False)


def test_a_tosa_file_iree_rejects_is_reduced_with_iree_compile_as_the_test(tmp_path):
    source = tmp_path / "t.mlir"
    source.write_text(TOSA)
    done = _harness("reduce", str(source), "--iree-compile", "tosa", "-o", str(tmp_path / "r.mlir"),
                    cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"keeps: verifier-error: {SAID}" in done.stdout
    reduced = (tmp_path / "r.mlir").read_text()
    assert "tosa.cast" in reduced and "tosa.add" not in reduced and "tosa.sub" not in reduced
    line = next(x for x in done.stdout.splitlines() if x.startswith("reproduce: "))
    pasted = subprocess.run(["bash", "-c", line.removeprefix("reproduce: ")], capture_output=True,
                            text=True, timeout=120, check=False)
    assert pasted.returncode == 1 and SAID in pasted.stderr  # IREE's own tool, on the reduced file


def test_a_file_iree_compiles_has_nothing_to_reduce(tmp_path):
    source = tmp_path / "ok.mlir"
    source.write_text(TOSA.replace("tensor<2x4xf64>", "tensor<2x4xf16>"))
    done = _harness("reduce", str(source), "--iree-compile", "tosa", "-o", str(tmp_path / "r.mlir"),
                    cwd=tmp_path)
    assert done.returncode == 0 and "nothing to reduce" in done.stdout, done.stdout + done.stderr


def test_the_port_prints_the_reduce_of_its_iree_compile_failure(tmp_path):
    import torch
    from torch import nn

    from harness.compiler.targets import Target
    from harness.execute.backend_names import BackendName
    from harness.frontends.names import FrontendName
    from harness.models.hf_inputs import InputSet
    from harness.port import PortOptions
    from harness.port.frontend import port_targets
    from harness.port.progress import QUIET
    from harness.port.subject import Subject

    module = nn.LayerNorm(16).eval()  # the FX path's variance in float64: outside IREE's TOSA
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(4, 16, generator=g), torch.randn(4, 16, generator=g)
    subject = Subject("m", module, InputSet(("x",), (x0,), "seed 0"), InputSet(("x",), (x1,), "s"),
                      output_names=("y",))
    (port,) = port_targets(subject, FrontendName.FX, tmp_path / "m.fx", PortOptions(
        out=str(tmp_path), targets=(Target.TOSA,), backends=(BackendName.IREE,)), QUIET)
    (reduce,) = [c for c in port.commands if " reduce " in c]
    words = shlex.split(reduce)
    assert words[words.index("--iree-compile") + 1] == "tosa"
    done = subprocess.run([sys.executable, "-m", "harness", *words[words.index("reduce"):]],
                          capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
    assert done.returncode == 1 and "keeps: verifier-error: 'tosa.cast'" in done.stdout, done.stdout
    assert "tosa.cast" in Path(words[words.index("-o") + 1]).read_text()
