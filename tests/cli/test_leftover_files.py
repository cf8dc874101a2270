"""No file outlives a run outside its output folder: bisect, check and fix
put the folder they print under ``--out`` (default ``harness-out/``, as port does), and a work
folder of the harness's own in the temp dir is removed when the run ends."""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch

from harness.execute import ref_ops
from harness.diagnose.reduce.miscompile import NumericsReduceOptions, reduce_numerics

from support import CRASHERS, harness
from support.programs import CHAIN, SMALL

CRASHER = CRASHERS / "A_remainder_int_by_zero.mlir"  # SIGFPE in canonicalize


def folders(tmp_path: Path) -> tuple[Path, Path]:
    work, tmpdir = tmp_path / "work", tmp_path / "tmpdir"
    work.mkdir(), tmpdir.mkdir()
    return work, tmpdir


def test_bisect_writes_under_harness_out_and_leaves_nothing_in_the_temp_dir(tmp_path):
    # Was: /tmp/bisect-*/ (the IR before the pass, both runs' stderr), left after the run.
    work, tmpdir = folders(tmp_path)
    proc = harness("bisect", CRASHER, "--pipeline", "builtin.module(canonicalize)", cwd=work,
                   env={"TMPDIR": str(tmpdir)})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert list(tmpdir.iterdir()) == []
    [out] = list((work / "harness-out").glob("bisect-A_remainder_int_by_zero-*"))
    assert (out / "bisect.json").is_file() and list(out.glob("before-*.mlir"))
    assert f"files: {out}" in proc.stdout or f"files: harness-out/{out.name}" in proc.stdout, proc.stdout


def test_check_writes_under_harness_out_and_leaves_nothing_in_the_temp_dir(tmp_path):
    work, tmpdir = folders(tmp_path)
    src = work / "small.mlir"
    src.write_text(SMALL)
    proc = harness("check", src, "--pipeline", "function-to-torch,torch-to-linalg", "--random-inputs",
                   cwd=work, env={"TMPDIR": str(tmpdir)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(tmpdir.iterdir()) == []
    [out] = list((work / "harness-out").glob("harness-check-*"))
    assert (out / "inputs.npz").is_file() and (out / "actual.npz").is_file()


def test_reduce_numerics_removes_its_work_folder(tmp_path, monkeypatch):
    # Its products lie beside -o; its work folder (harness-numerics-*) stayed in the temp dir.
    _, tmpdir = folders(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    monkeypatch.setitem(ref_ops.HANDLERS, "torch.aten.sin", lambda ev, op, args: (torch.cos(args[0]),))
    src = tmp_path / "chain.mlir"
    src.write_text(CHAIN)
    out = tmp_path / "small.mlir"
    result = reduce_numerics(src, "torch-to-linalg",
                             options=NumericsReduceOptions(output_path=out, budget_s=120))
    assert result.computing_ops == ["aten.sin"]
    assert Path(result.inputs_path).is_file() and Path(result.inputs_path).parent == tmp_path
    assert [p.name for p in tmpdir.iterdir()] == []


def test_compile_removes_its_stage_folder_when_a_stage_cannot_start(tmp_path, monkeypatch):
    # The old-API compile's stage files (harness-MODULE-*) stayed in the temp dir when a stage
    # raised instead of failing (here: no such binary).
    import pytest

    from harness import torchscript
    from harness.errors import BinaryError

    _, tmpdir = folders(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    with pytest.raises(BinaryError):
        torchscript.compile(torch.nn.Linear(2, 2), torch.randn(1, 2), output_type="linalg-on-tensors",
                            use_tracing=True, opt=str(tmp_path / "no-such-torch-mlir-opt"),
                            out_dir=tmp_path / "out")
    assert [p.name for p in tmpdir.iterdir()] == []
