"""The FX path: ``torch.export`` and the torch-mlir wheel's ``fx_importer``, beside TorchScript.

The mission's path is TorchScript (``frontends.torchscript``); this one stands beside it so a
failure can be compared across frontends. The wheel does the import; this module only names the
model when torch.export fails, since its own errors are many and deep.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from harness.errors import ModelError

if TYPE_CHECKING:
    from torch_mlir import ir
    from torch_mlir.extras.fx_importer import FxImporterHooks, GraphNodeImporter, InputInfo


#: The dtypes whose tensors :class:`_TensorLiterals` turns into literals through numpy (the
#: ones ``Tensor.numpy()`` takes and the fx_importer writes the same bytes for).
_NUMPY_DTYPES = frozenset({torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                           torch.float16, torch.float32, torch.float64})


def _literal_hooks() -> FxImporterHooks:
    """The fx_importer's hooks with a faster tensor literal (see :class:`_TensorLiterals`)."""
    from torch_mlir.extras.fx_importer import FxImporterHooks

    class _TensorLiterals(FxImporterHooks):
        """The wheel's importer makes each weight's literal through ``Tensor.tolist()`` (its
        comment: ``numpy()`` fails under a FakeTensorMode), a Python float per element:
        measured, 22 of the 35 s that importing torchvision's mobilenet_v3_small took (2.5 M
        parameters). A real tensor goes through ``numpy()`` instead, into the same
        ``dense_resource`` blob with the same bytes; a fake one, a bool, bfloat16 and a
        one-element tensor (a splat) stay with the wheel's own path."""

        def __init__(self) -> None:
            self._made: dict[int, tuple[torch.Tensor, object]] = {}

        def resolve_literal(self, gni: GraphNodeImporter, literal: Any,
                            info: InputInfo | None) -> ir.Value | None:
            from torch._subclasses.fake_tensor import is_fake
            from torch_mlir.ir import DenseResourceElementsAttr, Operation

            from torch_mlir.extras.fx_importer import create_mlir_tensor_type

            if (not isinstance(literal, torch.Tensor) or literal.dtype not in _NUMPY_DTYPES
                    or literal.numel() <= 1 or is_fake(literal) or literal.device.type != "cpu"):
                return None
            made = self._made.get(id(literal))
            if made is None or made[0] is not literal:
                try:
                    array = literal.detach().contiguous().numpy().copy()
                except (RuntimeError, TypeError):
                    return None  # a tensor numpy() refuses: the wheel's own path
                shape = "_".join(str(d) for d in literal.shape)
                attr = DenseResourceElementsAttr.get_from_buffer(
                    array, f"torch_tensor_{shape}_{literal.dtype}", create_mlir_tensor_type(literal))
                made = self._made[id(literal)] = (literal, attr)
            return Operation.create(name="torch.vtensor.literal",
                                    results=[gni._cc.tensor_to_vtensor_type(literal)],
                                    attributes={"value": made[1]}).result

    return _TensorLiterals()


@dataclass(frozen=True)
class FxPayload:
    """The FX frontend's program: torch.export's, which the port exported already (to time the
    two apart), and whether it went through the wheel's decomposition table already (the
    persistent-buffers fix imports the failed import's decomposition again: not run twice)."""

    exported: torch.export.ExportedProgram
    decomposed: bool = False

    def script_module(self) -> None:
        return None

    def export_program(self) -> torch.export.ExportedProgram:
        return self.exported

    def program_file(self) -> Path | None:
        return None

    def with_dynamic_axes(self, axes: tuple[tuple[int, ...], ...]) -> FxPayload:
        """As it is: torch.export keeps (or refuses, with a guard) the dynamic sizes it was
        given when it exported."""
        return self


class ImportFailed(ModelError):
    """torch.export or the FX importer failed; ``decomposed``: the decomposed program it failed
    on (None when the wheel exported the module itself)."""

    def __init__(self, message: str, decomposed: torch.export.ExportedProgram | None):
        super().__init__(message)
        self.decomposed = decomposed


def reimport(error: BaseException, rewrite: Callable[[torch.export.ExportedProgram],
                                                    torch.export.ExportedProgram | None]
             ) -> FxPayload | None:
    """The program an import failed on (:class:`ImportFailed`'s decomposition), changed by
    ``rewrite``, to import again as it is; None when the failure kept no program or ``rewrite``
    changes nothing."""
    decomposed = error.decomposed if isinstance(error, ImportFailed) else None
    changed = rewrite(decomposed) if decomposed is not None else None
    return FxPayload(changed, decomposed=True) if changed is not None else None


def export_and_import(model: torch.nn.Module | torch.export.ExportedProgram,
                      examples: Sequence[torch.Tensor], *, name: str, decomposed: bool = False,
                      ) -> ir.Module:
    """``model`` exported on ``examples`` (or its export, as it is) and imported as raw torch
    dialect (an ``ir.Module``). An export goes through the wheel's decomposition table here,
    as the wheel's own ``export_and_import`` would (``decomposed``: it did already); on a
    failure the decomposed program rides on the error (:class:`ImportFailed`): the
    decomposition is most of an import (tiny BERT: 1.5 of 1.6 s), and the persistent-buffers
    fix imports that very program again (harness.fixes.buffers.persistent_in_program)."""
    from torch_mlir import fx
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table

    program = model
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch.export's own deprecations
            if isinstance(model, torch.export.ExportedProgram):
                if not decomposed:
                    program = model.run_decompositions(get_decomposition_table())
                # an empty table: the wheel decomposes nothing again
                return fx.export_and_import(program, *examples, output_type="raw",
                                            hooks=_literal_hooks(), decomposition_table={})
            return fx.export_and_import(model, *examples, output_type="raw",
                                        hooks=_literal_hooks())
    except Exception as e:  # torch.export's own errors are many and deep; name the model
        raise ImportFailed(
            f"torch.export / the FX importer could not import '{name}': {type(e).__name__}: "
            f"{str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}. Use "
            "--importer torchscript, or make the model exportable (torch.export docs).",
            program if isinstance(program, torch.export.ExportedProgram) else None) from e
