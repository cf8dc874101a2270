"""The persistent-buffers fix applied to an exported, decomposed program
(harness.fixes.buffers.persistent_in_program) imports to the very IR that exporting the fixed
module gives: the port imports that program again instead of exporting twice."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from harness.fixes.buffers import PersistentBuffers, persistent_in_program
from harness.frontends.fx import ImportFailed, export_and_import
from harness.models import generic


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.tensor([1.0, 2.0, 3.0, 4.0]), persistent=False)
        self.register_buffer("shift", torch.tensor([0.5, 0.5, 0.5, 0.5]))  # persistent already
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        return self.linear(x * self.scale + self.shift)


def _export(module: nn.Module, examples) -> torch.export.ExportedProgram:
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        return torch.export.export(module, examples, strict=False)


def _both(module: nn.Module, examples) -> tuple[str, str]:
    """(the failed import's program with its buffers persistent, the fixed module's export)."""
    with pytest.raises(ImportFailed, match="Could not find state mapping for buffer") as failed:
        export_and_import(_export(module, examples), examples, name="m")
    decomposed = failed.value.decomposed
    assert decomposed is not None
    patched = persistent_in_program(decomposed)
    assert patched is not None
    reused = export_and_import(patched, examples, name="m", decomposed=True)
    app = PersistentBuffers().apply(module)
    try:
        exported_again = export_and_import(_export(module, examples), examples, name="m")
    finally:
        app.undo()
    return str(reused), str(exported_again)


def test_a_small_module_imports_to_the_same_ir():
    module = Scaled().eval()
    reused, exported_again = _both(module, (torch.randn(2, 4),))
    assert "dense_resource" in reused or "vtensor.literal" in reused
    assert reused == exported_again
    assert "scale" in module._non_persistent_buffers_set  # the module is as it was


def test_tiny_bert_imports_to_the_same_ir():
    # BERT's position_ids and token_type_ids are non-persistent buffers
    prepared = generic.prepare("bert")
    reused, exported_again = _both(prepared.module, tuple(prepared.inputs.tensors))
    assert reused == exported_again and len(reused) > 100_000


def test_a_program_without_non_persistent_buffers_is_left_alone():
    module = nn.Linear(4, 4)
    with torch.no_grad():
        program = _export(module, (torch.randn(2, 4),)).run_decompositions()
    assert persistent_in_program(program) is None
