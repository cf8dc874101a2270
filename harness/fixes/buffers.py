"""``persistent-buffers``: non-persistent buffers made persistent before ``torch.export``.

Why: HF models register derived tensors with ``register_buffer(..., persistent=False)``
(rotary ``inv_freq``, BERT's ``position_ids``, GPT-Neo's causal ``bias``, Gemma's
``embed_scale``). torch 2.13's ``torch.export`` keeps them among the exported program's
buffers, and the torch-mlir 20261001 ``fx_importer`` looks every buffer up in the
``state_dict`` only: "Could not find state mapping for buffer" (KeyError on the buffer's name).
Measured: 15 of the 21 architectures of docs/fix.md's table stop there on the FX path.

Why the numbers stay: persistence decides only whether ``state_dict()`` saves a buffer;
``forward`` reads (and writes) the same tensor either way. The change goes through the public
``register_buffer(name, tensor, persistent=True)`` and is undone with ``persistent=False``.
Buffers that are None (registered but unset) are left alone: export does not keep them.

The port applies the same change to the program it exported already
(:func:`persistent_in_program`): export and decomposition are most of an FX import, and the
fixed module's export is that program with the buffers moved from its constants to its state
(the same IR: tests/fixes/test_buffers_program.py). Where the forward assigns the buffer again
(CTRL's ``self.pos_encoding = self.pos_encoding.to(...)``, Wav2Vec2-Conformer's ``self.pe``),
torch.export refuses the fixed module ("Non-persistent buffer ... is in the state dict") and
only the program's form imports.
"""

from __future__ import annotations

import dataclasses

import torch
from torch.export.graph_signature import ExportGraphSignature, InputKind

from .base import Application, ModuleEvidence, ModuleFix, Site

STATE_MAPPING = "Could not find state mapping for buffer"


class PersistentBuffers(ModuleFix):
    name = "persistent-buffers"
    messages = (STATE_MAPPING,)
    conditions = ("buffers that are None are left alone; the change is undone after export "
                  "(register_buffer(..., persistent=False))")

    def apply(self, module: torch.nn.Module, evidence: ModuleEvidence = ModuleEvidence()) -> Application:
        app = Application(self.name, self.level, module=module)
        moved: list[tuple[torch.nn.Module, str, torch.Tensor]] = []
        for prefix, sub in module.named_modules():
            for name in sorted(sub._non_persistent_buffers_set):
                tensor = sub._buffers.get(name)
                if tensor is None:
                    continue
                sub.register_buffer(name, tensor, persistent=True)
                moved.append((sub, name, tensor))
                full = f"{prefix}.{name}" if prefix else name
                app.changed.append(Site(f"buffer {full} made persistent",
                                        f"{type(sub).__name__} {prefix or '(root)'}"))

        def undo() -> None:
            for sub, name, tensor in moved:
                sub.register_buffer(name, tensor, persistent=False)

        app.undo = undo
        return app

    def on_export(self, exported: torch.export.ExportedProgram) -> torch.export.ExportedProgram | None:
        return persistent_in_program(exported)


def non_persistent_buffers(module: torch.nn.Module) -> list[str]:
    """The dotted names of the buffers ``state_dict()`` leaves out (and None ones skipped)."""
    return [f"{prefix}.{name}" if prefix else name
            for prefix, sub in module.named_modules()
            for name in sorted(sub._non_persistent_buffers_set)
            if sub._buffers.get(name) is not None]


def persistent_in_program(exported: torch.export.ExportedProgram) -> torch.export.ExportedProgram | None:
    """``exported`` as the module with persistent buffers exports it: each non-persistent
    buffer's tensor moved from the program's constants to its state_dict, its input spec made
    persistent (None when it has none). The graph is shared, not copied: the importer replaces
    its placeholders, so the program it is made from is not imported too."""
    signature = exported.graph_signature
    state, constants = dict(exported.state_dict), dict(exported.constants)
    specs = []
    for spec in signature.input_specs:
        moved = spec.kind is InputKind.BUFFER and not spec.persistent and spec.target in constants
        if moved:
            state[spec.target] = constants.pop(spec.target)
        specs.append(dataclasses.replace(spec, persistent=True) if moved else spec)
    if len(state) == len(exported.state_dict):
        return None
    return exported._update(exported.graph_module,
                            ExportGraphSignature(specs, list(signature.output_specs)),
                            state_dict=state, constants=constants)
