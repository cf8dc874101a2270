"""Writing IR with weights elided (harness.compiler.mlir.print_op, mlir.write_module).

The writer prints the module with MLIR's resource limit at 0 (no blob is hexed) and asks MLIR
for the section of the blobs small enough to stay. Each test compares its output
byte for byte with MLIR's own single print at the limit, which hexes every blob to decide:
the same IR, locations, resource names and kept blobs.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import torch
from torch import nn
from torch_mlir import ir

from harness.compiler.mlir import WriteOptions, write_module
from harness.compiler.mlir import (
    ELIDE_RESOURCES_OVER_CHARS,
    PrintOptions,
    new_context,
    parse_ir,
    print_op,
    resources_that_may_print,
)
from harness.compiler import pipelines
from harness.compiler.runner import run_pipeline
from harness.frontends.torchscript import ModuleBuilder


def mlir_elided(op: ir.Operation, debug_info: bool = True) -> str:
    """MLIR's own print at the limit: what the file read before the elision's own limit."""
    buf = io.StringIO()
    op.print(file=buf, large_resource_limit=ELIDE_RESOURCES_OVER_CHARS,
             enable_debug_info=debug_info, assume_verified=True)
    return buf.getvalue()


class MixedTensors(nn.Module):
    """Blobs on both sides of the 64-character limit, interleaved in the graph. The importer
    writes tensors of up to 16 elements as dense literals, so the blobs here are byte tensors:
    20 i8 (10 + 40 = 50 characters) stays, 30 i8 (70 characters) goes; one-element tensors are
    dense splats."""

    def __init__(self):
        super().__init__()
        self.big = nn.Parameter(torch.arange(64.0).reshape(8, 8))
        self.register_buffer("pair", torch.arange(17, dtype=torch.uint8))
        self.register_buffer("six", torch.arange(20, dtype=torch.int8))
        self.register_buffer("seven", torch.arange(30, dtype=torch.int8))
        self.register_buffer("mask", torch.arange(18) % 2 == 0)
        self.register_buffer("one", torch.tensor([2.0]))

    def forward(self, x):
        y = (x @ self.big).sum() * self.one
        counts = self.six.sum() + self.seven.sum() + self.pair.sum() + self.mask.sum()
        return y + counts


def imported_mixed() -> ModuleBuilder:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        script = torch.jit.trace(MixedTensors(), (torch.ones(2, 8),), check_trace=False)
    builder = ModuleBuilder()
    builder.import_module(script._c)
    builder.verify()
    return builder


def test_importer_output_keeps_small_blobs_exactly_as_mlir_prints_them(tmp_path):
    builder = imported_mixed()
    op = builder.module.operation
    expected = mlir_elided(op)
    # The module under test has what the case is about: kept and elided blobs side by side.
    assert 'six: "0x01000000' in expected and "seven:" not in expected and "big:" not in expected
    assert "dense_resource<seven>" in expected and "dense_resource<big>" in expected
    written = write_module(builder.module, tmp_path / "mixed.mlir", WriteOptions(keep_weights=False))
    assert written.read_text() == expected
    assert print_op(op, PrintOptions(elide_weights=True)) == expected
    assert print_op(op, PrintOptions(debug_info=False, elide_weights=True)) == mlir_elided(op, False)


def test_only_blobs_that_may_fit_are_handed_to_the_hexing_print():
    op = imported_mixed().module.operation
    names = [str(a).split(" : ")[0] for a in resources_that_may_print(op, ELIDE_RESOURCES_OVER_CHARS)]
    # 64 bytes or fewer may print in 64 characters; big (256 bytes) never does.
    # (mask is a dense literal: the importer writes bool tensors dense.)
    assert sorted(names) == ["dense_resource<pair>", "dense_resource<seven>", "dense_resource<six>"]


def test_nested_attributes_borderline_sizes_and_blobless_handles():
    """Resources in array and dictionary attributes, on both sides of the limit, next to a
    handle whose blob is absent (a file that was itself written elided)."""
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse("module attributes {x.absent = dense_resource<absent> : tensor<4xf32>} {}")
        f32, i64 = ir.F32Type.get(), ir.IntegerType.get_signless(64)
        arrays = [np.arange(100, dtype=np.float32), np.array([1, 2], dtype=np.int64),
                  np.arange(6, dtype=np.float32), np.arange(7, dtype=np.float32)]
        big, pair, six, seven = (
            ir.DenseResourceElementsAttr.get_from_buffer(a, name, ir.RankedTensorType.get(list(a.shape), t))
            for a, name, t in zip(arrays, ("big", "pair", "six", "seven"), (f32, i64, f32, f32), strict=True))
        op = module.operation
        op.attributes["x.list"] = ir.ArrayAttr.get([seven, big, ir.ArrayAttr.get([pair])])
        op.attributes["x.dict"] = ir.DictAttr.get({"b": six, "a": big})
        expected = mlir_elided(op)
        assert 'pair: "0x08' in expected and 'six: "0x04' in expected and "seven:" not in expected
        assert print_op(op, PrintOptions(elide_weights=True)) == expected
        del op.attributes["x.list"], op.attributes["x.dict"]
        assert print_op(op, PrintOptions(elide_weights=True)) == mlir_elided(op)  # no blob at all


@pytest.fixture(scope="module")
def opt_tiny():
    from harness.frontends.torchscript import forward_annotator
    from harness.models import opt as opt_driver

    model = opt_driver.build_opt("tiny")
    inputs = opt_driver.example_inputs(model.config)
    traced = opt_driver.trace_opt(model, inputs).module
    builder = ModuleBuilder()
    builder.import_module(traced, forward_annotator(traced, inputs))
    return builder


def test_opt_file_is_mlir_s_own_elided_print_and_still_lowers(opt_tiny, tmp_path):
    op = opt_tiny.module.operation
    assert resources_that_may_print(op, ELIDE_RESOURCES_OVER_CHARS) == []  # every weight is big
    written = write_module(opt_tiny.module, tmp_path / "opt.torch.mlir")
    text = written.read_text()
    assert text == mlir_elided(op)
    assert "dense_resource<model.decoder.embed_tokens.weight>" in text and '"0x' not in text
    assert parse_ir(text) is not None
    record = run_pipeline(written, pipelines.default().get("torchscript-to-torch").textual())
    assert record.ok, record.stderr[-2000:]


def test_fx_importer_output_is_mlir_s_own_elided_print(tmp_path):
    from harness.frontends.fx import export_and_import

    class Small(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)
            self.register_buffer("pair", torch.tensor([1.0, 2.0]))

        def forward(self, x):
            return self.fc(x)[:, :2] * self.pair

    module = export_and_import(Small(), (torch.ones(1, 8),), name="Small")
    expected = mlir_elided(module.operation)
    assert "dense_resource<" in expected
    assert write_module(module, tmp_path / "fx.mlir").read_text() == expected
