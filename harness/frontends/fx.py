"""The FX path: ``torch.export`` and the torch-mlir wheel's ``fx_importer``, beside TorchScript.

The mission's path is TorchScript (``frontends.torchscript``); this one stands beside it so a
failure can be compared across frontends. The wheel does the import; this module only names the
model when torch.export fails, since its own errors are many and deep.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import torch

from harness.errors import ModelError


def export_and_import(model: torch.nn.Module | torch.export.ExportedProgram,
                      examples: Sequence[torch.Tensor], *, name: str):
    """``model`` exported on ``examples`` (or its export, as it is) and imported as raw torch
    dialect (an ``ir.Module``)."""
    from torch_mlir import fx

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch.export's own deprecations
            return fx.export_and_import(model, *examples, output_type="raw")
    except Exception as e:  # torch.export's own errors are many and deep; name the model
        raise ModelError(
            f"torch.export / the FX importer could not import '{name}': {type(e).__name__}: "
            f"{str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}. Use "
            "--importer torchscript, or make the model exportable (torch.export docs)."
        ) from e
