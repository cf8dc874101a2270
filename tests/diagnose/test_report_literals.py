"""A report of a file whose weights are inline ``dense<"0x...">`` literals, not resource blobs:
input.mlir elides them (torch-mlir-opt reprints the file; a 100 MB one-line literal then
costs no run more than ``harness run`` does), keeps file and line in every location, and still
fails the same way. Small literals are part of the program and stay."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.diagnose.report import ReportOptions, Weights, make_report
from harness.diagnose.report import inputs as inputs_module
from harness.diagnose.report.inputs import has_large_literal

N = 64  # elements: over the elision limit of 16
HEX = os.urandom(4 * N).hex().upper()  # not a splat (a splat prints as one value, never elided)


def _literal_input(hex_digits: str, n: int) -> str:
    return f"""\
#loc1 = loc("model.py":10:0)
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[?,1],si64> {{
  %w = torch.vtensor.literal(dense<"0x{hex_digits}"> : tensor<{n}xf32>) : !torch.vtensor<[{n}],f32> loc(#loc1)
  %1 = torch.aten.tanh %w : !torch.vtensor<[{n}],f32> -> !torch.vtensor<[{n}],f32>
  %0 = torch.aten.nonzero %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[?,1],si64>
  return %0 : !torch.vtensor<[?,1],si64>
}}
"""


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    work = tmp_path_factory.mktemp("literal")
    src = work / "literal.mlir"
    src.write_text(_literal_input(HEX, N))
    return make_report(src, "torch-to-linalg", options=ReportOptions(out_dir=work / "out", budget_s=5))


def test_a_large_inline_literal_is_elided_and_the_failure_stays(large):
    assert large.weights is Weights.ELIDED and large.reproduced
    text = (Path(large.folder) / "input.mlir").read_text()
    assert HEX[:64] not in text
    assert f"dense_resource<__elided__> : tensor<{N}xf32>" in text
    assert 'loc("model.py":10:0)' in text
    assert 'loc("literal.mlir":5:8)' in text  # an op without a location: the original file's line
    assert "torch.aten.nonzero" in text and "torch.aten.tanh" in text


def test_a_small_literal_is_part_of_the_program_and_stays(tmp_path):
    small = os.urandom(4 * 8).hex().upper()
    src = tmp_path / "small.mlir"
    src.write_text(_literal_input(small, 8))
    result = make_report(src, "torch-to-linalg", options=ReportOptions(out_dir=tmp_path / "out",
                                                                       reduce=False))
    assert result.weights is Weights.NONE
    assert f'dense<"0x{small}">' in (Path(result.folder) / "input.mlir").read_text()


@pytest.mark.parametrize("cut", [3, 10, 40])
def test_a_literal_split_between_chunks_is_found(tmp_path, monkeypatch, cut):
    text = _literal_input(HEX, N)
    at = text.index('dense<"0x') + cut
    src = tmp_path / "split.mlir"
    src.write_text(text)
    monkeypatch.setattr(inputs_module, "_SCAN_CHUNK", at)  # the first chunk ends inside it
    assert has_large_literal(src)
    src.write_text(_literal_input(HEX[:2 * 64], N))  # 64 bytes (16 f32): not over the limit
    assert not has_large_literal(src)


@pytest.mark.parametrize("cut", [1, 3, 5])
def test_a_plain_needle_split_between_chunks_is_found(tmp_path, monkeypatch, cut):
    src = tmp_path / "needle.mlir"
    src.write_text('#loc1 = loc("model.py":10:0)\n')
    monkeypatch.setattr(inputs_module, "_SCAN_CHUNK", src.read_text().index("loc(") + cut)
    assert inputs_module.file_contains(src, b"loc(")
    assert not inputs_module.file_contains(src, b"dialect_resources")
