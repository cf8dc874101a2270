"""TorchScript (JIT IR) to torch-dialect MLIR, on the torch-mlir wheel's Python bindings.

The wheel ships no TorchScript importer; this package is one. Its public names match upstream
torch-mlir's ``torch_mlir.jit_ir_importer`` so scripts written for it run with only the import
changed::

    from harness.frontends.torchscript import ClassAnnotator, ImportOptions, ModuleBuilder
    mb = ModuleBuilder()
    mb.import_module(torch.jit.script(model)._c, ClassAnnotator())
    print(mb.module)
"""

from .annotations import ClassAnnotator, forward_annotator
from .builder import ImportOptions, ImportStats, ModuleBuilder, new_context
from .registry import get_registered_ops

__all__ = [
           "ClassAnnotator",
           "ImportOptions",
           "ImportStats",
           "ModuleBuilder",
           "forward_annotator",
           "get_registered_ops",
           "new_context",
]
