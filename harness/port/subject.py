"""What a port takes: an eager module, two input sets, and how to trace it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from harness.models.dynamic import DynamicDim
from harness.models.hf import as_tuple
from harness.models.hf_inputs import InputSet


@dataclass
class Subject:
    """What a port takes: a module called with positional tensors, its two input sets, and how
    to trace it (None: the TorchScript frontend is not offered)."""

    name: str                            # for files, titles, and the IR's module name
    eager: torch.nn.Module
    inputs: InputSet                     # the traced (and exported) inputs
    second_inputs: InputSet              # other values, same shapes: what a trace may freeze
    # -> the TorchScript module and notes on how it was traced (settings, tracer warnings)
    trace: Callable[[], tuple[torch.jit.ScriptModule, list[str]]] | None = None
    output_names: tuple[str, ...] = ()
    # --dynamic: per input, its dynamic axes (empty: a static port)
    dynamic_axes: tuple[dict[int, DynamicDim], ...] = ()
    # FILE:LINE of each TracerWarning of the last trace (filled by ``trace``)
    tracer_warnings: list[str] = field(default_factory=list)

    @property
    def dynamic(self) -> bool:
        return any(self.dynamic_axes)

    def expected(self, inputs: InputSet) -> tuple[torch.Tensor, ...]:
        with torch.no_grad():
            return as_tuple(self.eager(*inputs.tensors))
