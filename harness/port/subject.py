"""What a port takes: an eager module, two input sets, and how to trace it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from harness.frontends.base import Made
from harness.models.dynamic import DynamicDim
from harness.models.generic import as_tuple
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
    # The part of the model its inputs leave unrun ("" when none): a verified port is then
    # "partial", never "verified" (a vision-language model's image tower that never ran).
    not_run: str = ""
    # The model given as a frontend's own program file (an .onnx file): that frontend imports
    # it as it is, with no trace or export (None: an eager module).
    program_file: Path | None = None

    @property
    def dynamic(self) -> bool:
        return any(self.dynamic_axes)

    # eager's outputs per input set, computed once: both frontends and each check compare
    # against the same values (a module fix is checked equal in eager and undone before).
    _expected: list[tuple[InputSet, tuple[torch.Tensor, ...]]] = field(
        default_factory=list, repr=False, compare=False)
    _expected_float64: list[tuple[InputSet, tuple[torch.Tensor, ...] | None]] = field(
        default_factory=list, repr=False, compare=False)
    # Each frontend's own program of ``eager`` (a trace, an export), by its maker's frontend and
    # settings: the ONNX frontend converts the FX frontend's export, and on static shapes
    # torch.onnx.export's capture settings make the same program, so a port of both exports
    # once (harness.port.frontend._source_program).
    made_programs: dict[tuple[str, str], Made] = field(
        default_factory=dict, repr=False, compare=False)

    def expected_float64(self, inputs: InputSet) -> tuple[torch.Tensor, ...] | None:
        """Eager in float64 (a copy of the module, float inputs widened), computed once per set
        as :meth:`expected` is: the reference that tells float32 rounding from a wrong result;
        None when the model does not run so."""
        import copy

        for seen, outputs in self._expected_float64:
            if seen is inputs:
                return outputs
        try:
            wide = copy.deepcopy(self.eager).double()
            tensors = [t.double() if t.is_floating_point() else t for t in inputs.tensors]
            with torch.no_grad():
                found: tuple[torch.Tensor, ...] | None = as_tuple(wide(*tensors))
        except Exception:  # a float32-only kernel or dtype check: no float64 opinion
            found = None
        self._expected_float64.append((inputs, found))
        return found

    def expected(self, inputs: InputSet) -> tuple[torch.Tensor, ...]:
        for seen, outputs in self._expected:
            if seen is inputs:
                return outputs
        with torch.no_grad():
            outputs = as_tuple(self.eager(*inputs.tensors))
        self._expected.append((inputs, outputs))
        return outputs
