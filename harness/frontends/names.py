"""The frontends' names, importable without torch (the IR cache's hit path stays torch-free)."""

from __future__ import annotations

from harness.enums import ParsableEnum


class FrontendName(ParsableEnum):
    TORCHSCRIPT = "torchscript"  # torch.jit.trace/script -> the project's importer (the mission's)
    FX = "fx"                    # torch.export -> the wheel's fx_importer
    ONNX = "onnx"                # torch.export -> torch.onnx.export -> the wheel's onnx_importer
