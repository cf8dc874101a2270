"""``harness report --numerics`` on code that fails when it runs: a run-time failure bundle
(not a refusal) whose repro.sh exits 1 exactly when the code fails the same way. The two real
cases of the e2e suite: the elementwise lowering's size-1 broadcast assert (SIGABRT) and the
RefBackend's unresolved ``memrefCopy``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.execute.check import CheckOptions, check_file
from harness.execute.failure import RuntimeFailure, RuntimeFailureKind
from harness.diagnose.reduce.runtime import EXECUTION_STAGE
from harness.diagnose.report.result import CANNOT_RUN_STATUS, BundleKind
from harness.diagnose.report.runtime import RUNTIME_FILES
from harness.diagnose.report.standalone import write_standalone

from support import ROOT, harness


# lit_tests/pass/elementwise-dynamic-size1-broadcast-abort.mlir at the torch backend contract
# (its first RUN line): aten.logaddexp decomposed, [?,?,?] operands.
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
BROADCAST_ABORT = """
func.func @logaddexp_dynamic(%arg0: !torch.vtensor<[?,?,?],f32>, %arg1: !torch.vtensor<[?,?,?],f32>) -> !torch.vtensor<[?,?,?],f32> {
  %floatInf = torch.constant.float 0x7FF0000000000000
  %float1 = torch.constant.float 1.000000e+00
  %0 = torch.aten.sub.Tensor %arg0, %arg1, %float1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32>, !torch.float -> !torch.vtensor<[?,?,?],f32>
  %1 = torch.aten.abs %0 : !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  %2 = torch.aten.neg %1 : !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  %3 = torch.aten.maximum %arg0, %arg1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  %4 = torch.aten.exp %2 : !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  %5 = torch.aten.log1p %4 : !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  %6 = torch.aten.add.Tensor %3, %5, %float1 : !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32>, !torch.float -> !torch.vtensor<[?,?,?],f32>
  %7 = torch.aten.abs %3 : !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  %8 = torch.aten.eq.Scalar %7, %floatInf : !torch.vtensor<[?,?,?],f32>, !torch.float -> !torch.vtensor<[?,?,?],i1>
  %9 = torch.aten.where.self %8, %3, %6 : !torch.vtensor<[?,?,?],i1>, !torch.vtensor<[?,?,?],f32>, !torch.vtensor<[?,?,?],f32> -> !torch.vtensor<[?,?,?],f32>
  return %9 : !torch.vtensor<[?,?,?],f32>
}
"""  # noqa: E501

# x[:, :] with dynamic sizes, as the TorchScript importer gives SliceWholeTensorModule: the
# slices stay, and the RefBackend's lowering calls memrefCopy
# (lit_tests/execute/refbackend-returned-slice-memref-copy.mlir is its linalg).
RETURNED_SLICE = """
func.func @forward(%arg0: !torch.vtensor<[?,?],f32>) -> !torch.vtensor<[?,?],f32> {
  %int0 = torch.constant.int 0
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %1 = torch.aten.slice.Tensor %arg0, %int1, %none, %none, %int1 : !torch.vtensor<[?,?],f32>, !torch.int, !torch.none, !torch.none, !torch.int -> !torch.vtensor<[?,?],f32>
  %2 = torch.aten.slice.Tensor %1, %int0, %none, %none, %int1 : !torch.vtensor<[?,?],f32>, !torch.int, !torch.none, !torch.none, !torch.int -> !torch.vtensor<[?,?],f32>
  return %2 : !torch.vtensor<[?,?],f32>
}
"""  # noqa: E501


def report(tmp: Path, text: str, inputs: list[np.ndarray] | None) -> tuple[dict, Path]:
    src = tmp / "input.mlir"
    src.write_text(text)
    args = ["report", src, "--pipeline", "torch-to-linalg", "--numerics", "--out", tmp / "out", "--json"]
    if inputs is not None:
        np.savez(tmp / "inputs.npz", *inputs)
        args += ["--inputs", tmp / "inputs.npz"]
    proc = harness(*args, timeout=300)
    assert proc.returncode == 1, proc.stderr
    return json.loads(proc.stdout), src


def repro(folder: Path, **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "TORCH_MLIR_OPT")}
    return subprocess.run(["bash", str(folder / "repro.sh")], capture_output=True, text=True,
                          timeout=300, env={**base, "PYTHONPATH": str(ROOT), **env}, cwd="/")


def ops_of(text: str) -> int:
    return sum(1 for line in text.splitlines() if " = torch." in line or line.strip().startswith("torch."))


def still_fails(folder: Path, tmp: Path) -> RuntimeFailure | None:
    done = check_file(folder / "reduced.mlir", CheckOptions(
        inputs_path=str(folder / "inputs.npz"), out_dir=str(tmp)))
    if done.failed_stage != EXECUTION_STAGE:
        return None
    return RuntimeFailure.of(done.error, done.refbackend.signal if done.refbackend else "")


@pytest.fixture(scope="module")
def abort_bundle(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("abort")
    return report(tmp, BROADCAST_ABORT, [np.ones((3, 2, 4), "f4"), np.ones((3, 1, 4), "f4")])


@pytest.fixture(scope="module")
def symbol_bundle(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("symbol")
    return report(tmp, RETURNED_SLICE, None)


def test_the_broadcast_abort_is_bundled(abort_bundle, tmp_path):
    result, src = abort_bundle
    folder = Path(result["folder"])
    assert result["kind"] == "runtime-failure" and result["reproduced"]
    assert sorted(result["files"]) == sorted(RUNTIME_FILES)
    expected = RuntimeFailure(RuntimeFailureKind.SIGNAL, signal="SIGABRT",
                              message="mismatched size for broadcast")
    assert RuntimeFailure.from_json(result["failure"]) == expected
    reduced = (folder / "reduced.mlir").read_text()
    assert ops_of(reduced) <= ops_of(src.read_text()) and result["ops_after"] <= result["ops_before"]
    assert still_fails(folder, tmp_path) == expected
    issue = (folder / "issue.md").read_text()
    assert "dies by **SIGABRT**" in issue and "`mismatched size for broadcast`" in issue
    assert "the lowering of torch.aten." in issue  # the op whose lowering put the assert there
    assert "## Versions" in issue and "python -m harness" not in issue  # read without our tool
    # Triage: dynamic size-1 broadcasting is not supported by design (PR #240; closed PR #2882 was
    # turned down): not filed, and #2149 (a dynamic broadcast_to) is not its thread.
    assert result["triage"] == "by design" and result["title"].startswith("[torch-mlir] [by design] ")
    assert "Triage: **by design**." in issue and "llvm/torch-mlir#2882 (pull request, closed" in issue
    assert "Filing: **not filed**: by design upstream" in issue and "torch-mlir#2149 (issue" not in issue
    assert "## Root cause\n\nThe lowering of torch.aten." in issue
    assert "## Reproduces through\n\nNot determined: the report started from a bare IR file" in issue
    record = json.loads((folder / "record.json").read_text())
    assert record["schema"] == "harness.runtime-failure-report/1"
    assert str(src.parent) not in issue and str(src.parent) not in reduced  # redacted


def test_abort_repro_exits_1_exactly_when_it_aborts(abort_bundle, tmp_path):
    result, _ = abort_bundle
    folder = Path(result["folder"])
    fails = repro(folder, PYTHON=sys.executable)
    assert fails.returncode == 1, fails.stdout + fails.stderr
    assert "repro.py: REPRODUCED: the run dies by SIGABRT: mismatched size for broadcast" in fails.stdout
    # Inputs of equal sizes: nothing to broadcast, the code runs: not this bug.
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    with np.load(folder / "inputs.npz") as npz:
        shape = npz["arg0"].shape
        np.savez(copy / "inputs.npz", **{k: np.ones(shape, "f4") for k in npz.files})
    write_standalone(copy, BundleKind.RUNTIME_FAILURE, "torch-to-linalg", "test")  # repro.py embeds them
    runs = repro(copy, PYTHON=sys.executable)
    assert runs.returncode == 0 and "repro.py: NOT REPRODUCED" in runs.stdout, runs.stdout
    missing = repro(folder, PYTHON="/nonexistent/python")
    assert missing.returncode == CANNOT_RUN_STATUS and "CANNOT RUN: " in missing.stdout


def test_the_missing_symbol_is_bundled(symbol_bundle, tmp_path):
    result, src = symbol_bundle
    folder = Path(result["folder"])
    assert result["kind"] == "runtime-failure" and result["reproduced"]
    expected = RuntimeFailure(RuntimeFailureKind.MISSING_SYMBOLS, symbols=("memrefCopy",))
    assert RuntimeFailure.from_json(result["failure"]) == expected
    assert ops_of((folder / "reduced.mlir").read_text()) <= ops_of(src.read_text())
    assert still_fails(folder, tmp_path) == expected
    issue = (folder / "issue.md").read_text()
    assert "Symbols not found: [ memrefCopy ]" in issue
    fails = repro(folder, PYTHON=sys.executable)
    assert fails.returncode == 1 and "Symbols not found: [ memrefCopy ]" in fails.stdout, fails.stdout
    # A program without the slice returns its argument: no copy, it runs.
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    (copy / "reduced.mlir").write_text(
        "func.func @forward(%arg0: !torch.vtensor<[?,?],f32>) -> !torch.vtensor<[?,?],f32> {\n"
        "  return %arg0 : !torch.vtensor<[?,?],f32>\n}\n")
    write_standalone(copy, BundleKind.RUNTIME_FAILURE, "torch-to-linalg", "test")
    runs = repro(copy, PYTHON=sys.executable)
    assert runs.returncode == 0 and "NOT REPRODUCED" in runs.stdout, runs.stdout


def test_failure_signatures_read_both_kinds():
    assert RuntimeFailure.of("JIT session error: Symbols not found: [ b, a ]\nerror: RuntimeError: x") \
        == RuntimeFailure(RuntimeFailureKind.MISSING_SYMBOLS, symbols=("a", "b"))
    died = RuntimeFailure.of("the code died by SIGABRT: mismatched size for broadcast")
    assert died.signal == "SIGABRT" and died.message == "mismatched size for broadcast"
    assert died != RuntimeFailure.of("the code died by SIGSEGV: mismatched size for broadcast")


def test_a_runtime_verification_abort_is_its_op_and_reason_not_its_location():
    """MLIR's runtime op verification prints the op, ``^ why`` and a ``Location:`` line holding a
    temporary path: the signature is the op and the reason, the same from any folder."""
    text = ("the code died by SIGABRT: ERROR: Runtime op verification failed\n"
            "%cast_0 = memref.cast %cast : memref<?x?x4xf32> to memref<?x1x4xf32>\n"
            "^ size mismatch of dim 1\n"
            'Location: loc("/tmp/harness-x1/candidate.linalg.mlir":3:13)\n')
    died = RuntimeFailure.of(text)
    assert died.message == "runtime op verification failed: memref.cast: size mismatch of dim 1"
    assert died == RuntimeFailure.of(text.replace("harness-x1", "harness-y2"))


def test_a_runtime_verification_abort_at_an_onnx_node_keeps_the_node():
    """An ONNX port's check fails at a name location (the onnx_importer names each op after its
    ONNX node): no path in it, so the signature keeps it, and a reduction that keeps "the same
    failure" keeps it at that node (one time-bounded reduction in three kept a check that named
    no node: the same op and reason elsewhere)."""
    text = ("the code died by SIGABRT: ERROR: Runtime op verification failed\n"
            "memref.store %595, %alloc_102[%585, %587] : memref<?x4x1x?xf32>\n"
            "^ out-of-bounds access\n"
            'Location: loc("node_softmax")\n'
            "Fatal Python error: Aborted\n")
    died = RuntimeFailure.of(text)
    assert died.message == ('runtime op verification failed: memref.store: out-of-bounds access '
                            'at loc("node_softmax")')
    assert died != RuntimeFailure.of(text.replace('loc("node_softmax")', 'loc("node_add")'))
    assert died != RuntimeFailure.of(text.replace('loc("node_softmax")', 'loc("/tmp/c.mlir":3:4)'))


def test_redaction_leaves_the_embedded_arrays_whole(tmp_path):
    """repro.py embeds inputs.npz and expected.npz in base64, where runs like "/TOw25TL" look
    like absolute paths: redacting the whole text turned them into "<path>/..." and GPT-2's
    bundle failed to decode its inputs. The arrays come back byte for byte."""
    import ast
    import base64

    from harness.diagnose.report.redact import Redactor

    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "reduced.mlir").write_text(
        "func.func @forward(%arg0: !torch.vtensor<[4096],f32>) -> !torch.vtensor<[4096],f32> {\n"
        "  return %arg0 : !torch.vtensor<[4096],f32>\n}\n")
    arrays = np.random.default_rng(0).standard_normal(4096).astype(np.float32)
    np.savez(folder / "inputs.npz", arg0=arrays)
    np.savez(folder / "expected.npz", out0=arrays)
    encoded = base64.b64encode((folder / "inputs.npz").read_bytes()).decode()
    redactor = Redactor.for_machine([folder], enabled=True)
    lines = "\n".join(repr(encoded[i:i + 96]) for i in range(0, len(encoded), 96))
    assert redactor.text(lines) != lines  # as repro.py lays it out, the text pass corrupts it
    write_standalone(folder, BundleKind.RUNTIME_FAILURE, "torch-to-linalg", "test", redactor)
    module = ast.parse((folder / "repro.py").read_text())
    embedded = {node.targets[0].id: ast.literal_eval(node.value) for node in module.body
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ("INPUTS_NPZ", "EXPECTED_NPZ")}
    assert base64.b64decode(embedded["INPUTS_NPZ"]) == (folder / "inputs.npz").read_bytes()
    assert base64.b64decode(embedded["EXPECTED_NPZ"]) == (folder / "expected.npz").read_bytes()


# reports/upstream/view-flatten-two-dynamic-dims-wrong-collapse's function: without MLIR's
# runtime op verification its code returns [2, 4] for [6, 4] (reading garbage); with it, the
# memref.cast's check aborts.
VIEW_FLATTEN = """
func.func @flatten(%arg0: !torch.vtensor<[?,?,4],f32>) -> !torch.vtensor<[?,4],f32> {
  %int-1 = torch.constant.int -1
  %int4 = torch.constant.int 4
  %0 = torch.prim.ListConstruct %int-1, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %1 = torch.aten.view %arg0, %0 : !torch.vtensor<[?,?,4],f32>, !torch.list<int> -> !torch.vtensor<[?,4],f32>
  return %1 : !torch.vtensor<[?,4],f32>
}
"""


def test_a_bad_access_that_returns_garbage_is_a_run_time_failure_with_runtime_checks(tmp_path):
    src = tmp_path / "flatten.mlir"
    src.write_text(VIEW_FLATTEN)
    np.savez(tmp_path / "inputs.npz", np.ones((2, 3, 4), "f4"))
    proc = harness("report", str(src), "--pipeline", "torch-to-linalg", "--numerics",
                   "--inputs", str(tmp_path / "inputs.npz"), "--out", str(tmp_path / "out"), "--json",
                   timeout=900)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["kind"] == "runtime-failure" and result["reproduced"]
    assert "size mismatch" in json.dumps(result["failure"])


def test_a_bad_access_that_only_segfaults_is_named_by_its_checked_run(tmp_path):
    """index_put given empty index tensors (a boolean mask that selects nothing, issue 45): the
    unchecked code reads past a buffer and dies by a signal that names nothing; the bundle runs
    reduced.mlir once more under runtime checks and says the out-of-bounds memref.load, and its
    repro.py, whose lowering has the checks, dies on that load, not on its own descriptors (a
    0-d argument of rank 1, an empty one of stride 0 were rejected by the calling convention's
    checks before the code ran)."""
    from support.programs import EMPTY_INDEX_PUT

    empty = np.zeros(0, np.int64)
    result, _ = report(tmp_path, EMPTY_INDEX_PUT,
                       [np.ones((1, 4, 8), np.float32), empty, empty, empty, np.array(0.0, np.float32)])
    folder = Path(result["folder"])
    assert result["kind"] == "runtime-failure" and result["reproduced"]
    record = json.loads((folder / "record.json").read_text())
    checked = RuntimeFailure.from_json(record["checked_failure"])
    said = "runtime op verification failed: memref.load: out-of-bounds access"
    assert checked == RuntimeFailure(RuntimeFailureKind.SIGNAL, signal="SIGABRT", message=said)
    issue = (folder / "issue.md").read_text()
    assert f"`{said}`" in issue
    # the title names the load, whichever signal (if any) the unchecked run died by
    assert "memref.load: out-of-bounds access" in result["title"], result["title"]
    assert "(`python repro.py` shows it)" in issue and "python -m harness" not in issue
    ran = repro(folder, PYTHON=sys.executable)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "memref.load" in ran.stdout and "out-of-bounds access" in ran.stdout
    assert "mismatch" not in ran.stdout
