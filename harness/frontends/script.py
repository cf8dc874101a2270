"""The TorchScript frontend's program: the traced or scripted module, and the axes ``--dynamic``
imports as -1.

Its own module (not the ``torchscript`` package, the importer) so that the frontends' table
declares the payload without importing the importer: the table is read by every flow, most of
which never import a trace.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import torch


@dataclass(frozen=True)
class ScriptPayload:
    """What the TorchScript importer takes besides the examples: the module, and per example the
    axes imported as -1 (``--dynamic``, once the port found the trace kept them; empty: all
    static)."""

    module: torch.jit.ScriptModule
    dynamic_axes: tuple[tuple[int, ...], ...] = ()

    def script_module(self) -> torch.jit.ScriptModule:
        return self.module

    def export_program(self) -> None:
        return None

    def program_file(self) -> Path | None:
        return None

    def with_dynamic_axes(self, axes: tuple[tuple[int, ...], ...]) -> ScriptPayload:
        return replace(self, dynamic_axes=axes)
