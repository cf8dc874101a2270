"""The FX import's faster weight literals (harness/frontends/fx.py, ``_literal_hooks``): the
same IR as the wheel's own path, byte for byte, resources included."""

from __future__ import annotations

import torch
from torch import nn

from harness.frontends.fx import _literal_hooks


class _Small(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.norm = nn.BatchNorm2d(4)
        self.linear = nn.Linear(4 * 6 * 6, 5)
        self.register_buffer("offset", torch.arange(5, dtype=torch.int64))

    def forward(self, x):
        y = self.norm(self.conv(x)).flatten(1)
        return self.linear(y) + self.offset


def test_the_hook_imports_the_same_ir_as_the_wheel():
    from torch_mlir import fx

    torch.manual_seed(0)
    model = _Small().eval()
    x = torch.randn(1, 3, 8, 8)
    exported = torch.export.export(model, (x,))
    hooks = _literal_hooks()
    ours = fx.export_and_import(exported, x, output_type="raw", hooks=hooks)
    wheel = fx.export_and_import(exported, x, output_type="raw")
    assert "dense_resource<torch_tensor_4_3_3_3_torch.float32>" in str(ours)
    assert hooks._made, "the hook made no literal: the test would not see a difference"
    assert str(ours) == str(wheel)
