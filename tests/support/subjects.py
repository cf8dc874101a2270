"""A port subject for small two-input modules ``forward(x, mask)``: the traced set (mask all
ones) and a second set (x shifted by 1, the first row's first position masked), shared by the
port tests that drive ``port_frontend`` on a module of their own."""

from __future__ import annotations

import torch
from torch import nn

from harness.models.hf_inputs import InputSet
from harness.port.subject import Subject


def masked_subject(module: nn.Module, *, x_shift: float = -0.5, trace=None) -> Subject:
    """``module`` as a subject: x = arange(8)/7 + ``x_shift`` as 2x4, traced with
    ``torch.jit.trace`` on the first set unless ``trace`` says otherwise."""
    x = torch.arange(8, dtype=torch.float32).reshape(2, 4) / 7 + x_shift
    ones = torch.ones(2, 4, dtype=torch.int64)
    padded = ones.clone()
    padded[0, :1] = 0
    names = ("x", "mask")
    first = InputSet(names, (x, ones), "x, mask all ones")
    second = InputSet(names, (x + 1, padded), "x + 1, mask padded")

    def traced():
        return torch.jit.trace(module, first.tensors, check_trace=False), ["traced in the test"]

    return Subject(type(module).__name__.lower(), module.eval(), first, second,
                   trace=trace or traced, output_names=("y",))
