"""Small real modules imported by harness.frontends.torchscript and lowered by torch-mlir-opt through
torchscript-to-torch and torch-to-linalg (harness.torchscript.compile), traced and scripted.

Each case names the linalg function signature its shapes imply and the linalg ops its layers
must become (a Linear is a matmul, a Conv2d a conv_2d_nchw_fchw, ...). Where torch-mlir
itself cannot lower a construct, a test pins down its diagnostic so a change shows up.
"""

import re
from typing import Dict, Tuple

import pytest
import torch

from torch import nn

from harness import torchscript
from harness.errors import PipelineFailure

from support.small_modules import TupleOut, UnpacksSubmoduleTuple


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.eval()

    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x))))


class EmbedNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, ids):
        return self.norm(self.embed(ids))


class Attention(nn.Module):
    """Single-head self-attention written out (nn.MultiheadAttention: see the tests below)."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(4, 12)
        self.out = nn.Linear(4, 4)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        weights = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1)
        return self.out(weights @ v)


class SharedLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = self.a

    def forward(self, x):
        return self.b(self.a(x))


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((4,), 2.0))
        self.register_buffer("shift", torch.arange(4.0))

    def forward(self, x):
        return x * self.scale + self.shift


class ControlFlow(nn.Module):
    """A loop carrying an int, an if choosing a float, a tuple built and returned: the
    control flow is on scalars, which torch-mlir lowers (to scf) and folds."""

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        n = 0
        for i in range(x.size(0)):
            n = n + i
        if n > 2:
            k = 2.0
        else:
            k = 3.0
        pair = (x * k, x + float(n))
        return pair[1], pair[0]


CASES = [
    # model factory, example inputs, linalg signature, linalg ops that must appear
    (MLP, [torch.ones(2, 3)],
     "func.func @forward(%arg0: tensor<2x3xf32>) -> tensor<2x2xf32>", ["linalg.matmul"]),
    (ConvBlock, [torch.ones(1, 3, 8, 8)],
     "func.func @forward(%arg0: tensor<1x3x8x8xf32>) -> tensor<1x4x4x4xf32>",
     ["linalg.conv_2d_nchw_fchw", "linalg.pooling_nchw_max"]),
    (EmbedNorm, [torch.tensor([[1, 2, 3]])],
     "func.func @forward(%arg0: tensor<1x3xi64>) -> tensor<1x3x4xf32>", ["linalg.generic", "linalg.index"]),
    (Attention, [torch.ones(1, 3, 4)],
     "func.func @forward(%arg0: tensor<1x3x4xf32>) -> tensor<1x3x4xf32>", ["linalg.batch_matmul"]),
    (SharedLinear, [torch.ones(2, 4)],
     "func.func @forward(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32>", ["linalg.matmul"]),
    (Scaled, [torch.ones(2, 4)],
     "func.func @forward(%arg0: tensor<2x4xf32>) -> tensor<2x4xf32>", ["linalg.generic"]),
    (TupleOut, [torch.ones(3, 4)],
     "func.func @forward(%arg0: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)", ["linalg.matmul"]),
    (UnpacksSubmoduleTuple, [torch.ones(3, 4)],
     "func.func @forward(%arg0: tensor<3x4xf32>) -> tensor<3x2xf32>", ["linalg.matmul"]),
]


def lowered(model, inputs, *, use_tracing: bool, out_dir=None) -> str:
    return str(torchscript.compile(model, inputs, output_type="linalg-on-tensors", use_tracing=use_tracing,
                                   out_dir=out_dir or "harness-out"))


@pytest.mark.parametrize("use_tracing", [True, False], ids=["traced", "scripted"])
@pytest.mark.parametrize("factory, inputs, signature, linalg_ops", CASES, ids=[c[0].__name__ for c in CASES])
def test_lowers_to_linalg(factory, inputs, signature, linalg_ops, use_tracing):
    text = lowered(factory(), inputs, use_tracing=use_tracing)
    assert signature + " {" in text, text
    for op in linalg_ops:
        assert re.search(rf"= {re.escape(op)}\b", text), (op, text)
    assert "torch." not in text.replace("torch.debug_module_name", "")


def test_scripted_control_flow_lowers_to_linalg():
    text = lowered(ControlFlow(), [torch.ones(2, 3)], use_tracing=False)
    assert "func.func @forward(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {" in text
    assert "scf.for" in text
    assert re.search(r"= linalg\.generic", text)


class ScaledWide(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("shift", torch.arange(20.0))  # over 16 elements: a resource blob

    def forward(self, x):
        return x + self.shift


def test_weights_reach_linalg_as_the_same_resource_blobs():
    model = ScaledWide()
    text = lowered(model, [torch.ones(2, 20)], use_tracing=False)
    assert re.search(r"arith\.constant dense_resource<shift\w*> : tensor<20xf32>", text)
    blob = re.search(r'shift\w*: "0x([0-9A-F]+)"', text).group(1)
    assert blob[8:] == model.shift.numpy().tobytes().hex().upper()


def test_small_weights_reach_linalg_as_dense_constants():
    text = lowered(Scaled(), [torch.ones(2, 4)], use_tracing=False)
    assert ("arith.constant dense<[0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> "
            ": tensor<4xf32>") in text
    assert "dense_resource" not in text


def test_traced_multihead_attention_lowers_to_linalg():
    class MHA(nn.Module):
        def __init__(self):
            super().__init__()
            # Training mode keeps MHA off its fused fast path, whose trace is not stable.
            self.attn = nn.MultiheadAttention(4, 2, dropout=0.0, batch_first=True)

        def forward(self, x):
            return self.attn(x, x, x, need_weights=False)[0]

    text = lowered(MHA().train(), [torch.ones(1, 3, 4)], use_tracing=True)
    assert "func.func @forward(%arg0: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {" in text
    assert re.search(r"= linalg\.(batch_)?matmul", text)


def test_scripted_multihead_attention_fails_in_torch_mlir_on_is_nested(tmp_path):
    class MHA(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(4, 2, batch_first=True)

        def forward(self, x):
            return self.attn(x, x, x, need_weights=False)[0]

    with pytest.raises(PipelineFailure) as info:
        lowered(MHA().eval(), [torch.ones(1, 3, 4)], use_tracing=False, out_dir=tmp_path)
    assert "failed to legalize operation 'torch.operator'" in info.value.diagnostics
    assert 'name = "prim.is_nested"' in info.value.diagnostics
    # The diagnostic points into torch's own MultiheadAttention source.
    assert re.search(r"torch/nn/modules/activation\.py:\d+:\d+: error:", info.value.diagnostics)


def test_dict_survives_to_the_backend_contract_in_torch_mlir(tmp_path):
    class UsesDict(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            d: Dict[str, float] = {"a": 1.0, "b": 2.0}
            return x * d["b"]

    with pytest.raises(PipelineFailure) as info:
        lowered(UsesDict(), [torch.ones(2, 3)], use_tracing=False, out_dir=tmp_path)
    # torch-mlir folds the lookup but keeps the dead DictConstruct, which the backend
    # contract rejects; the diagnostic carries the dict's Python line.
    assert "unsupported by backend contract: type '!torch.dict<str, float>'" in info.value.diagnostics
    assert re.search(rf"{re.escape(__file__)}:\d+:\d+: error: unsupported by backend contract",
                     info.value.diagnostics)
