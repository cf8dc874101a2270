"""An ONNX op the conversion left, in ONNX's terms, in ``harness explain`` as in the port, and
from a bytecode file too (issue 42: the opset was read from the text only, so a ``.mlirbc``
input said "its opset")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.compiler.mlir import WriteOptions, write_module
from harness.diagnose.explain import explain_file
from harness.diagnose.onnx_terms import left_in, node_of, onnx_op_name, onnx_opset
from harness.compiler import pipelines

onnx = pytest.importorskip("onnx")


def _softsign(folder: Path) -> tuple[Path, Path]:
    from harness.frontends.onnx import import_file
    from support.programs import softsign_onnx

    module = import_file(softsign_onnx(folder / "softsign.onnx", opset=13))
    text, bytecode = folder / "ss.mlir", folder / "ss.mlirbc"
    write_module(module, text, WriteOptions())
    write_module(module, bytecode, WriteOptions(bytecode=True))
    return text, bytecode


def test_the_opset_is_read_from_text_and_from_bytecode(tmp_path):
    text, bytecode = _softsign(tmp_path)
    assert bytecode.read_bytes()[:4] == b"ML\xefR"  # MLIR bytecode, no text to search
    assert onnx_opset(text) == 13 and onnx_opset(bytecode) == 13
    plain = tmp_path / "plain.mlir"
    plain.write_text("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n")
    assert onnx_opset(plain) is None and onnx_opset(tmp_path / "missing.mlir") is None


def test_explain_names_the_onnx_op_and_its_opset(tmp_path):
    _, bytecode = _softsign(tmp_path)
    result = explain_file(bytecode, pipelines.default().resolve("onnx-to-torch"))
    (blocker,) = result.blockers
    assert onnx_op_name(blocker.op) == "Softsign"
    assert blocker.onnx.startswith("ONNX op Softsign (node ss, opset 13) has no TorchOnnxToTorch pattern")
    assert "  onnx: ONNX op Softsign (node ss, opset 13)" in "\n".join(result.render())


def test_bisect_names_the_onnx_op_and_its_opset(tmp_path):
    from harness.diagnose.bisect import bisect

    _, bytecode = _softsign(tmp_path)
    result = bisect(bytecode, pipelines.default().resolve("onnx-to-torch"), out_dir=tmp_path)
    assert result.failing_pass == "convert-torch-onnx-to-torch"
    (blocker,) = [r for r in result.responsible if r.blocker]
    assert blocker.describe().startswith(
        "ONNX op Softsign (node ss, opset 13) has no TorchOnnxToTorch pattern")


def test_the_node_is_read_off_the_errors_that_name_the_op():
    error = ('<unknown>: error: loc("ss"): failed to legalize operation \'torch.operator\' that was '
             'explicitly marked illegal: %1 = "torch.operator"(%arg0) <{name = "onnx.Softsign"}> : '
             '(!torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,4],f32>\n'
             '<unknown>: note: loc("ss"): see current operation: %1 = "torch.operator"(%arg0) '
             '<{name = "onnx.Softsign"}> : (!torch.vtensor<[2,4],f32>) -> !torch.vtensor<[2,4],f32>')
    assert left_in(error) == [("Softsign", "ss")]  # the note repeats it: named once
    assert node_of('loc("node_Unsqueeze_3")') == "node_Unsqueeze_3" and node_of("loc(unknown)") == ""


def test_report_of_an_onnx_import_names_the_op_says_onnx_and_reproduces(tmp_path):
    """Issue 42: ``harness report`` of the onnx_importer's IR. The bundle's repro.sh grepped
    ``error: failed to legalize ...`` where MLIR prints the node's name location first
    (``error: loc("ss"): failed to legalize ...``): its self-check said NOT REPRODUCED. The
    report now names the ONNX op as explain and bisect do (node and opset), and says it
    reproduces through ONNX: the input records the importer's opset."""
    import subprocess

    from support import harness

    text, _ = _softsign(tmp_path)
    done = harness("--no-progress", "report", text, "--pipeline", "onnx-to-torch",
                   "--out", tmp_path / "out", timeout=300)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]  # 1: reproduced
    said = done.stdout.splitlines()
    assert "reproduces through: onnx" in said
    assert "onnx: ONNX op Softsign (node ss, opset 13) has no TorchOnnxToTorch pattern" in done.stdout
    assert any(line.startswith("self-check: reproduced") for line in said), done.stdout
    (bundle,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    issue = (bundle / "issue.md").read_text()
    root = issue.split("## Root cause", 1)[1].split("##", 1)[0]
    assert "ONNX op Softsign (node ss, opset 13) has no TorchOnnxToTorch pattern" in root
    through = issue.split("## Reproduces through", 1)[1].split("##", 1)[0]
    assert "- ONNX (torch.onnx.export + onnx_importer): **hits**" in through
    assert "torch.operator \"onnx.Softsign\"" in (bundle / "input.mlir").read_text()
    from harness.compiler.binary import wheel_binary

    repro = subprocess.run(["bash", "repro.sh"], cwd=bundle, capture_output=True, text=True,
                           env={**os.environ, "TORCH_MLIR_OPT": str(wheel_binary())},
                           timeout=120, check=False)
    assert repro.returncode == 1 and "REPRODUCED" in repro.stdout, repro.stdout + repro.stderr


def test_the_report_says_the_python_line_an_onnx_port_recorded(tmp_path):
    """The IR of an ONNX import holds node names only; the model's line is in the port record
    (its blocker's location, from the exporter's stack): the report's diagnosis says it."""
    from harness.compiler.runner import run_pipeline
    from harness.diagnose.blockers import analyze
    from harness.diagnose.report.diagnosis import Diagnosis

    text, _ = _softsign(tmp_path)
    pipeline = pipelines.default().resolve("onnx-to-torch")
    diagnosis = Diagnosis.of(analyze(text, pipeline), run_pipeline(text, pipeline), "the pipeline",
                             {'torch.operator "onnx.Softsign"': "model.py:12"})
    assert diagnosis is not None
    assert diagnosis.onnx.startswith("ONNX op Softsign (node ss, opset 13, exported from model.py:12)")
    assert diagnosis.onnx in diagnosis.sentences()


def test_timeline_names_the_onnx_op_at_the_pass_that_left_it(tmp_path):
    from harness.diagnose.timeline_record import load
    from support import harness

    text, _ = _softsign(tmp_path)
    done = harness("--no-progress", "timeline", text, "--pipeline", "onnx-to-torch",
                   "--out", tmp_path / "tl", timeout=300)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert ("onnx: at #1 convert-torch-onnx-to-torch: ONNX op Softsign (node ss, opset 13) has no "
            "TorchOnnxToTorch pattern") in done.stdout
    record = load(tmp_path / "tl")
    assert len(record.onnx) == 1 and record.onnx[0].startswith("at #1 convert-torch-onnx-to-torch")
    assert "ONNX: at #1 convert-torch-onnx-to-torch" in (tmp_path / "tl" / "index.html").read_text()
