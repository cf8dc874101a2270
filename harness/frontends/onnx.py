"""The ONNX path: torch.onnx.export of the FX frontend's ``torch.export`` program, then the
torch-mlir wheel's ``onnx_importer`` (``torch.operator "onnx.X"`` ops in the torch dialect), then
``torch-onnx-to-torch-backend-pipeline``: how torch-mlir's own CI (the ``onnx`` e2e config),
SHARK and IREE's ONNX input reach torch-mlir.

The export reuses the FX export (``torch.onnx.export`` takes an ``ExportedProgram``) rather than
exporting twice. The ``.onnx`` file is kept in the port's folder, and onnxruntime runs it against
eager PyTorch: an exporter bug is told apart from a torch-mlir bug.

Needs the ``[onnx]`` extra (onnx, onnxscript for the dynamo exporter, onnxruntime).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from harness.compiler.text import strip_ansi
from harness.errors import ModelError, OnnxMissingError

if TYPE_CHECKING:
    from torch_mlir import ir


def _require(module: str, what: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise OnnxMissingError(what, e) from None


def check() -> None:
    """The one-paragraph error when a package of the [onnx] extra is missing."""
    _require("onnx", "the onnx package")
    _require("onnxscript", "onnxscript (torch.onnx.export's dynamo exporter)")
    _require("onnxruntime", "onnxruntime (it runs the .onnx file against eager PyTorch)")


@dataclass(frozen=True)
class OnnxPayload:
    """The ONNX frontend's program: the .onnx file it imports, and the torch.export program
    torch.onnx.export wrote it from (None: the model was given as the file); the port reads
    the export to explain a buffer the import found missing."""

    path: Path
    exported: torch.export.ExportedProgram | None = None

    def script_module(self) -> None:
        return None

    def export_program(self) -> torch.export.ExportedProgram | None:
        return self.exported

    def program_file(self) -> Path:
        return self.path

    def with_dynamic_axes(self, axes: tuple[tuple[int, ...], ...]) -> OnnxPayload:
        """As it is: the file keeps the dynamic sizes of the export it was written from."""
        return self


@dataclass(frozen=True)
class Untranslated:
    """The node of the program torch.onnx.export could not translate into ONNX (no ONNX function
    for its op, or one that failed on it): what its ConversionError says, with the node's stack
    from the torch.export program (the exporter's message names the node, not the model's line)."""

    node: str    # the FX node's name: randn
    op: str      # its target: aten.randn.generator
    reason: str  # the exporter's innermost message: No ONNX function found for <OpOverload(...)>...
    stack: str   # the node's stack_trace in the program ("" when the program has none for it)


class ExportFailed(ModelError):
    """torch.onnx.export refused the program: the exporter's error, with the model named, and
    the node it could not translate when its error names one."""

    def __init__(self, message: str, untranslated: Untranslated | None = None):
        super().__init__(message)
        self.untranslated = untranslated


#: The exporter's ConversionError for one node (torch/onnx/_internal/exporter/_core.py):
#: ``Error when translating node %randn : [num_users=1] = call_function[target=torch.ops.aten...]``.
_TRANSLATING = re.compile(r"Error when translating node %(\S+) : .*?call_function\[target=(?:torch\.ops\.)?"
                          r"([\w.:]+)\]")


def untranslated(error: BaseException, exported: torch.export.ExportedProgram | None) -> Untranslated | None:
    """The node named by ``error``'s chain of causes, its innermost cause's first line as the
    reason, and its stack looked up in ``exported`` (by name, else the first node of its op:
    the exporter's decompositions keep both). None when no cause names a node."""
    chain: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and seen not in chain and len(chain) < 16:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    found = next((m for e in chain if (m := _TRANSLATING.search(str(e)))), None)
    if found is None:
        return None
    node, op = found[1], found[2]
    reason = next((line.strip() for line in strip_ansi(str(chain[-1])).splitlines() if line.strip()), "")
    stack = ""
    if exported is not None:
        nodes = [n for n in exported.graph.nodes if n.op == "call_function"]
        match = (next((n for n in nodes if n.name == node), None)
                 or next((n for n in nodes if str(n.target) == op), None))
        stack = str(match.meta.get("stack_trace") or "") if match is not None else ""
    return Untranslated(node, op, reason[:400], stack)


def export(exported: torch.export.ExportedProgram, examples: Sequence[torch.Tensor], path: Path,
           *, name: str) -> Path:
    """``exported`` (torch.export's program) as an ONNX file at ``path`` (the dynamo exporter,
    its optimizer on), written with its weights inside."""
    check()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")  # the exporter's own progress and deprecations
            program = torch.onnx.export(exported, tuple(examples), dynamo=True)
            assert program is not None
            program.save(os.fspath(path))
    except Exception as e:  # the exporter's errors are many and deep; name the model and the node
        node = untranslated(e, exported)
        if node is not None:
            raise ExportFailed(
                f"torch.onnx.export could not export '{name}': it could not translate node %{node.node} "
                f"({node.op}) into ONNX: {node.reason}. The exporter's gap, not torch-mlir's: port it "
                "through --frontend fx, or compute that op otherwise in the model.", node) from e
        first = strip_ansi(str(e)).strip().splitlines()[0][:300] if str(e).strip() else ""
        raise ExportFailed(f"torch.onnx.export could not export '{name}': {type(e).__name__}: "
                           f"{first}. Port it through --frontend fx, or make it exportable.") from e
    return path


def import_file(path: Path) -> ir.Module:
    """The ONNX file as the torch dialect (``torch.operator "onnx.X"``), through the wheel's
    onnx_importer, with the ONNX model's shapes inferred first (the importer types each value
    from the graph's value_info)."""
    onnx = _require("onnx", "the onnx package")
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.extras import onnx_importer

    model = onnx.shape_inference.infer_shapes(onnx.load(os.fspath(path)), data_prop=True)
    context = ir.Context()
    torch_dialect.register_dialect(context)
    info = onnx_importer.ModelInfo(model)
    module = info.create_module(context=context)
    importer = onnx_importer.NodeImporter.define_function(info.main_graph, module.operation)
    importer.import_all()
    return module


def runner(path: Path) -> Callable[[Sequence[torch.Tensor]], list[torch.Tensor]]:
    """How onnxruntime runs the ONNX file (its session made once, at the first run)."""
    ort = _require("onnxruntime", "onnxruntime")
    made: list[Any] = []

    def run(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        if not made:
            options = ort.SessionOptions()
            options.log_severity_level = 3
            made.append(ort.InferenceSession(os.fspath(path), options,
                                             providers=["CPUExecutionProvider"]))
        session = made[0]
        feeds = {i.name: t.detach().cpu().numpy() for i, t in zip(session.get_inputs(), tensors,
                                                                   strict=False)}
        return [torch.from_numpy(o) for o in session.run(None, feeds)]

    return run


def node_types(path: Path) -> dict[str, str]:
    """Each node's ONNX op, ``onnx.Unsqueeze`` (with its domain when not the default one)."""
    onnx = _require("onnx", "the onnx package")
    model = onnx.load(os.fspath(path), load_external_data=False)
    return {n.name: f"onnx.{n.op_type}" if not n.domain else f"{n.domain}.{n.op_type}"
            for n in model.graph.node}


def node_stack(path: Path) -> dict[str, str]:
    """Each node's Python stack, as the dynamo exporter records it in the node's metadata
    (``pkg.torch.onnx.stack_trace``): the model's line behind an ONNX op."""
    onnx = _require("onnx", "the onnx package")
    model = onnx.load(os.fspath(path), load_external_data=False)
    found = {}
    for node in model.graph.node:
        for prop in node.metadata_props:
            if prop.key == "pkg.torch.onnx.stack_trace" and prop.value:
                found[node.name] = prop.value
    return found
