"""``harness fix FILE -o OUT`` against the real torch-mlir-opt, the reference evaluator and the
RefBackend: only the fixes whose blocker (or known miscompile) appears are applied, each is
checked against the numbers before it, and bad input gets one paragraph and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.fixes.catalog import CATALOG
from harness.knowledge.fixes import FIXES

from support import harness


# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
AND_BOOL = """func.func @f(%arg0: !torch.vtensor<[2,4],i1>, %arg1: !torch.vtensor<[2,4],i1>, %arg2: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[2,4],i1>, !torch.vtensor<[4],f32>) {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[2,4],i1> -> !torch.vtensor<[2,4],i1>
  %1 = torch.aten.tanh %arg2 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0, %1 : !torch.vtensor<[2,4],i1>, !torch.vtensor<[4],f32>
}
"""  # noqa: E501
# __and__ on float tensors: eager PyTorch refuses it, so the fix's condition does not hold.
AND_FLOAT = """func.func @f(%arg0: !torch.vtensor<[4],f32>, %arg1: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.__and__.Tensor %arg0, %arg1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
"""  # noqa: E501
PASSING = """func.func @f(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_catalog_is_the_knowledge_of_fixes():
    assert sorted(f.name for f in CATALOG) == sorted(FIXES)
    for fix in CATALOG:
        assert fix.level is FIXES[fix.name].level
        assert fix.ops or fix.messages or fix.miscompiles, fix.name
        assert fix.conditions, fix.name


def test_list_prints_every_fix_with_its_level_blockers_and_why():
    done = harness("fix", "--list")
    assert done.returncode == 0, done.stderr
    assert ("bitwise-and-or (torch-ir)\n"
            "  answers: op torch.aten.__and__.Tensor; op torch.aten.__or__.Tensor") in done.stdout
    assert ("persistent-buffers (nn-module)\n"
            "  answers: error containing 'Could not find state mapping for buffer'") in done.stdout
    assert done.stdout.count("why the numbers stay:") == len(FIXES)
    listed = json.loads(harness("fix", "--list", "--json").stdout)
    assert [f["name"] for f in listed] == [f.name for f in CATALOG]
    assert listed[0]["renames"] == [["torch.aten.__and__.Tensor", "torch.aten.bitwise_and.Tensor"],
                                    ["torch.aten.__or__.Tensor", "torch.aten.bitwise_or.Tensor"]]


def test_and_on_bool_is_fixed_lowered_and_verified(tmp_path):
    src = write(tmp_path, "and.mlir", AND_BOOL)
    out = tmp_path / "and.fixed.mlir"
    done = harness("fix", str(src), "-o", str(out), "--pipeline", "torch-to-linalg",
                   "--out", str(tmp_path), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["outcome"] == "verified"
    assert result["fixes_applied"] == ["bitwise-and-or"]
    assert result["steps"][0]["verification"]["verdict"] == "same-numbers"
    assert result["final"]["verdict"] == "same-numbers"
    text = out.read_text()
    assert "torch.aten.bitwise_and.Tensor %arg0, %arg1" in text and "__and__" not in text
    lowered = harness("run", str(out), "--pipeline", "torch-to-linalg")
    assert lowered.returncode == 0, lowered.stdout + lowered.stderr


def test_a_fix_whose_condition_fails_is_not_applied(tmp_path):
    src = write(tmp_path, "andf.mlir", AND_FLOAT)
    out = tmp_path / "andf.fixed.mlir"
    done = harness("fix", str(src), "-o", str(out), "--pipeline", "torch-to-linalg",
                   "--no-verify", "--out", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not applied: bitwise-and-or (torch-ir) for torch.aten.__and__.Tensor" in done.stdout
    assert "refused 1: aten.__and__.Tensor at" in done.stdout
    assert ("operand 0 is f32: & and | equal bitwise_and/bitwise_or "
            "on bool and integer tensors only") in done.stdout
    assert "torch-to-linalg still fails" in done.stdout
    assert not out.exists()


def test_a_file_that_lowers_needs_no_fix(tmp_path):
    src = write(tmp_path, "relu.mlir", PASSING)
    out = tmp_path / "relu.out.mlir"
    done = harness("fix", str(src), "-o", str(out), "--pipeline", "torch-to-linalg", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "applied" not in done.stdout
    assert f"nothing to fix: {src} lowers through torch-to-linalg" in done.stdout
    assert out.read_text() == PASSING


@pytest.mark.parametrize("case", ["not-mlir", "missing", "same-output", "no-output", "unknown-fix"])
def test_bad_input_gets_one_paragraph_and_exit_2(tmp_path, case):
    src = write(tmp_path, "ok.mlir", PASSING)
    bad = write(tmp_path, "model.py", "import torch\n")
    args = {"not-mlir": [str(bad), "-o", str(tmp_path / "o.mlir")],
            "missing": [str(tmp_path / "nope.mlir"), "-o", str(tmp_path / "o.mlir")],
            "same-output": [str(src), "-o", str(src)],
            "no-output": [str(src)],
            "unknown-fix": [str(src), "-o", str(tmp_path / "o.mlir"), "--only", "rename-all"]}[case]
    done = harness("fix", *args, "--out", str(tmp_path))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), done.stderr
    assert "Traceback" not in done.stderr
    expected = {"not-mlir": "is not MLIR", "missing": "does not exist", "same-output": "is the input file",
                "no-output": "needs an IR FILE and -o OUT", "unknown-fix": "unknown fix 'rename-all'"}[case]
    assert expected in lines[0]


def test_stock_opt_tiny_is_verified_after_its_two_fixes(tmp_path):
    """Stock HF OPT (preset tiny) from the TorchScript importer: __and__ blocks torch-to-linalg,
    and sdpa's scale=1.0 is miscompiled; with both fixes the RefBackend matches the reference
    evaluator of the unfixed import."""
    src = tmp_path / "opt-tiny.mlir"
    emitted = harness("emit", "opt-tiny", "--keep-weights", "-q", "-o", str(src))
    assert emitted.returncode == 0, emitted.stderr
    out = tmp_path / "opt-tiny.fixed.mlir"
    done = harness("fix", str(src), "-o", str(out), "--out", str(tmp_path), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["outcome"] == "verified"
    assert result["fixes_applied"] == ["sdpa-explicit-scale", "bitwise-and-or"]
    assert all(s["verification"]["verdict"] == "same-numbers" for s in result["steps"])
    assert result["final"]["verdict"] == "same-numbers" and result["final"]["max_abs_diff"] < 1e-5
    changed = [site["location"] for s in result["steps"] for site in s["application"]["changed"]]
    assert any(loc.endswith("masking_utils.py:54") for loc in changed), changed
    assert result["output_stages"] == ["torch-to-linalg"]
    assert "torch.aten.bitwise_and.Tensor" in out.read_text()
