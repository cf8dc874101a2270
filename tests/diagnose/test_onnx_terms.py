"""An ONNX op the conversion left, in ONNX's terms, in ``harness explain`` as in the port, and
from a bytecode file too (issue 42: the opset was read from the text only, so a ``.mlirbc``
input said "its opset")."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.compiler.mlir import WriteOptions, write_module
from harness.diagnose.explain import explain_file
from harness.diagnose.onnx_terms import onnx_op_name, onnx_opset
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
    assert blocker.onnx.startswith("ONNX op Softsign (opset 13) has no TorchOnnxToTorch pattern")
    assert "  onnx: ONNX op Softsign (opset 13)" in "\n".join(result.render())


def test_bisect_names_the_onnx_op_and_its_opset(tmp_path):
    from harness.diagnose.bisect import bisect

    _, bytecode = _softsign(tmp_path)
    result = bisect(bytecode, pipelines.default().resolve("onnx-to-torch"), out_dir=tmp_path)
    assert result.failing_pass == "convert-torch-onnx-to-torch"
    (blocker,) = [r for r in result.responsible if r.blocker]
    assert blocker.describe().startswith("ONNX op Softsign (opset 13) has no TorchOnnxToTorch pattern")
