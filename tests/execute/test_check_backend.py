"""``harness check --backend`` and ``harness fix --backend``: both reach the backend through its
:class:`~harness.execute.backend.Backend` (the registry of ``backends.BACKENDS``), as the port
does, with the port's default; what IREE cannot do for them is one paragraph (issue 41)."""

from __future__ import annotations

import json

import pytest

from harness.cli import build_parser
from harness.execute.backend_names import DEFAULT_BACKEND, DEFAULT_BACKENDS, BackendName
from harness.execute.backends import BACKENDS
from harness.execute.check import CheckOptions
from harness.fixes.file import FileFixOptions
from harness.fixes.steps import Method
from harness.port.options import PortOptions

from support import harness
from support.programs import EMPTY_INDEX_PUT, SMALL

TO_LINALG = "function-to-torch,torch-to-linalg"


def _iree_installed() -> bool:
    try:
        BACKENDS[BackendName.IREE]().check()
    except Exception:
        return False
    return True


needs_iree = pytest.mark.skipif(not _iree_installed(), reason="the [iree] extra is not installed")


def test_the_default_backend_is_the_ports_and_unchanged(tmp_path):
    """One default, the library's: check's and fix's --backend and the port's list start there,
    and a check without --backend runs on the RefBackend as it always did."""
    parser = build_parser()
    assert DEFAULT_BACKEND is BackendName.REFBACKEND and DEFAULT_BACKENDS == (DEFAULT_BACKEND,)
    assert parser.parse_args(["check", "f.mlir", "--target", "linalg"]).backend == DEFAULT_BACKEND.value
    assert parser.parse_args(["fix", "f.mlir", "-o", "g.mlir"]).backend == DEFAULT_BACKEND.value
    assert CheckOptions().backend is FileFixOptions().backend is DEFAULT_BACKEND
    assert PortOptions().backends == DEFAULT_BACKENDS
    src = tmp_path / "small.mlir"
    src.write_text(SMALL)
    done = harness("check", src, "--pipeline", TO_LINALG, "--json", "--out", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(done.stdout)
    assert record["backend"] == "refbackend" and record["refbackend"]["lowering"]["outcome"] == "success"
    assert "refbackend-lowering" in record["seconds"]


def test_the_choices_are_the_registrys():
    """--backend's choices are the registry's names (read without loading it: numpy, bindings),
    and each backend has a fix check's method."""
    parser = build_parser()
    for name in BACKENDS:
        args = parser.parse_args(["check", "f.mlir", "--target", "linalg", "--backend", name.value])
        assert args.backend == name.value
        assert Method.on(name).value == name.value
    assert set(BACKENDS) == set(BackendName)
    with pytest.raises(SystemExit):
        parser.parse_args(["check", "f.mlir", "--target", "linalg", "--backend", "tpu"])


@needs_iree
def test_check_runs_a_small_file_on_iree(tmp_path):
    src = tmp_path / "small.mlir"
    src.write_text(SMALL)
    done = harness("check", src, "--pipeline", TO_LINALG, "--backend", "iree", "--seed", "3",
                   "--out", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == (
        f"verified: @forward of {src} through {TO_LINALG} and IREE matches the reference "
        "evaluator (5 ops in eager PyTorch)")
    as_json = harness("check", src, "--pipeline", TO_LINALG, "--backend", "iree", "--json",
                      "--out", tmp_path)
    record = json.loads(as_json.stdout)
    assert record["backend"] == "iree" and record["outcome"] == "verified"
    assert record["refbackend"]["lowering"]["pipeline"] == "iree-compile llvm-cpu"
    assert "iree-run-module" in record["refbackend"]["command"]
    assert "iree-compile" in record["seconds"] and "refbackend-lowering" not in record["seconds"]


@pytest.mark.parametrize("flag,said", [(["--in-process"], "--in-process runs the compiled code"),
                                       (["--opt-level", "2"], "--opt-level 2 sets the LLVM"),
                                       (["--runtime-checks"], "--runtime-checks lowers with MLIR's")])
def test_what_iree_cannot_do_for_check_is_one_paragraph(tmp_path, flag, said):
    src = tmp_path / "small.mlir"
    src.write_text(SMALL)
    done = harness("check", src, "--pipeline", TO_LINALG, "--backend", "iree", *flag, "--out", tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = [x for x in done.stderr.splitlines() if x.startswith("harness: error:")]
    assert said in line and "--backend refbackend" in line
    assert not list(tmp_path.glob("harness-check-*"))  # said before anything ran


AND_BOOL = """func.func @f(%arg0: !torch.vtensor<[2,4],i1>, %arg1: !torch.vtensor<[2,4],i1>, %arg2: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[2,4],i1>, !torch.vtensor<[4],f32>) {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[2,4],i1> -> !torch.vtensor<[2,4],i1>
  %1 = torch.aten.tanh %arg2 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0, %1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[4],f32>
}
"""  # noqa: E501


@needs_iree
def test_fix_checks_the_fixed_file_on_iree(tmp_path):
    src = tmp_path / "and.mlir"
    src.write_text(AND_BOOL)
    done = harness("fix", src, "-o", tmp_path / "and.fixed.mlir", "--pipeline", "torch-to-linalg",
                   "--backend", "iree", "--out", tmp_path, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["backend"] == "iree" and result["outcome"] == "verified"
    assert result["final"]["method"] == "iree" and result["final"]["verdict"] == "same-numbers"


def test_check_runtime_checks_name_the_bad_access(tmp_path):
    """``harness check --runtime-checks`` (the command a port prints for a crashed set) lowers
    with MLIR's runtime op verification: an index_put given empty index tensors (a boolean mask
    that selects nothing) aborts naming the out-of-bounds memref.load."""
    import numpy as np

    src = tmp_path / "empty.mlir"
    src.write_text(EMPTY_INDEX_PUT)
    empty = np.zeros(0, np.int64)
    np.savez(tmp_path / "in.npz", np.ones((1, 4, 8), np.float32), empty, empty, empty,
             np.array(0.0, np.float32))
    done = harness("check", src, "--pipeline", TO_LINALG, "--inputs", tmp_path / "in.npz",
                   "--runtime-checks", "--json", "--out", tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    record = json.loads(done.stdout)
    assert record["outcome"] == "fails" and record["failed_stage"] == "execution"
    assert "Runtime op verification failed" in record["error"]
    assert "memref.load" in record["error"] and "out-of-bounds access" in record["error"]
