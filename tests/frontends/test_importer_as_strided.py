"""as_strided reads become gathers at import (harness/frontends/torchscript/as_strided.py).

torch-mlir lowers no aten.as_strided; a static chain of views from an argument is imported as
aten.index.Tensor with constant coordinates, and the compiled module must give eager PyTorch's
numbers (the expected values are eager's, computed here, never the code under test's). What
the probe cannot decide stays as_strided, and the pipeline reports it as before."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

from harness import torchscript
from harness.errors import PipelineFailure
from harness.execute.refbackend import RefBackendOptions, run_refbackend
from harness.frontends.compat import TensorPlaceholder, import_torchscript
from harness.frontends.torchscript.as_strided import plan_gathers


class AfterTranspose(torch.nn.Module):
    def forward(self, x):
        return torch.as_strided(x.transpose(0, 1), size=(2, 3), stride=(1, 4), storage_offset=1)


class AfterCopy(torch.nn.Module):
    def forward(self, x):  # contiguous() copies: the read addresses the copy's storage
        return torch.as_strided(x.transpose(0, 1).contiguous(), size=(2, 3), stride=(1, 2), storage_offset=1)


class AfterSliceAndExpand(torch.nn.Module):
    def forward(self, x):
        view = x[1:3].unsqueeze(0).expand(2, 2, 4)
        return torch.as_strided(view, size=(2, 2), stride=(1, 3))


class Nested(torch.nn.Module):
    def forward(self, x):
        inner = torch.as_strided(x, size=(6,), stride=(2,), storage_offset=1)
        return torch.as_strided(inner, size=(2, 2), stride=(1, 4))


class ThenArithmetic(torch.nn.Module):
    def forward(self, x):
        return torch.as_strided(x, size=(3, 3), stride=(1, 4)) * 2.0 + x[0, 0]


class DynamicRows(torch.nn.Module):
    def forward(self, x):  # reads storage offsets 0..10: the first row of any [?, 12] input
        return torch.as_strided(x, size=(3, 4), stride=(2, 2))


def _run(module: torch.nn.Module, shape: list[int], x: torch.Tensor, tmp_path) -> np.ndarray:
    compiled = torchscript.compile(module, [TensorPlaceholder(shape, torch.float32)],
                                   output_type="linalg-on-tensors", out_dir=tmp_path / "out")
    text = str(compiled)
    assert "as_strided" not in text
    linalg = tmp_path / "m.linalg.mlir"
    linalg.write_text(text)
    # In a child: a wrong gather may read out of bounds and crash.
    result = run_refbackend(linalg, [x.numpy()], options=RefBackendOptions(work_dir=tmp_path))
    assert result.ok, result.error or result.lowering
    return result.outputs[0]


@pytest.mark.parametrize("module", [AfterTranspose, AfterCopy, AfterSliceAndExpand, Nested, ThenArithmetic],
                         ids=lambda m: m.__name__)
def test_static_reads_lower_and_match_eager(module, tmp_path):
    x = torch.randn(3, 4)
    got = _run(module(), [3, 4], x, tmp_path)
    np.testing.assert_allclose(got, module()(x).numpy(), rtol=1e-6, atol=1e-6)


def test_a_dynamic_leading_size_read_directly_matches_eager_for_every_size(tmp_path):
    for rows in (1, 5):
        x = torch.randn(rows, 12)
        got = _run(DynamicRows(), [-1, 12], x, tmp_path)
        np.testing.assert_array_equal(got, DynamicRows()(x).numpy())


def test_the_import_is_a_gather_of_the_argument():
    builder = import_torchscript(AfterTranspose(), [TensorPlaceholder([3, 4], torch.float32)])
    text = str(builder.module)
    assert re.search(r"torch\.aten\.index\.Tensor %arg1, %\d+ :", text), text
    assert "torch.aten.as_strided" not in text
    # eager's indices, as coordinates into x: x.t() is [4, 3] with strides (1, 4), so element
    # (i, j) of the read is storage 1 + i + 4 j, which is x[(1 + i + 4 j) // 4, (1 + i + 4 j) % 4].
    assert "dense<[[0, 1, 2], [0, 1, 2]]>" in text and "dense<[[1, 1, 1], [2, 2, 2]]>" in text


class WrittenAfter(torch.nn.Module):
    def forward(self, x):
        y = torch.as_strided(x, size=(2, 2), stride=(1, 2))
        x.add_(1.0)  # y sees this write: a gather taken before it would not
        return y


class FromAComputedTensor(torch.nn.Module):
    def forward(self, x):
        return torch.as_strided(x + 1.0, size=(2, 2), stride=(1, 2))


def _gathers(module, arg_shapes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = torch.jit.script(module).forward.graph
    return plan_gathers(graph, [None, *arg_shapes])


@pytest.mark.parametrize("module,shape,why", [
    (WrittenAfter(), (3, 4), "a write to the base"),
    (FromAComputedTensor(), (3, 4), "the base is not an argument"),
    (AfterTranspose(), (-1, 4), "a dynamic size under a view"),
    (AfterTranspose(), None, "an unannotated argument"),
], ids=lambda p: p if isinstance(p, str) else "")
def test_what_the_probe_cannot_decide_stays_as_strided(module, shape, why):
    assert _gathers(module, [shape]) == {}, why


def test_an_undecided_read_still_fails_in_the_pipeline(tmp_path):
    with pytest.raises(PipelineFailure, match=r"as_strided|backend illegal"):
        torchscript.compile(FromAComputedTensor(), [TensorPlaceholder([3, 4], torch.float32)],
                            output_type="torch", out_dir=tmp_path)
