"""``--fix`` before the pipelines: the module fixes (``harness.fixes.modules``) that answer what
the trace or the import showed, and the program traced or exported again from the fixed module.

- TorchScript: a ``prim::PythonOp`` in the trace (a ``torch.autograd.Function``; Bloom's GeLU)
  would fail ``torchscript-to-torch``: ``autograd-function-forward``, then trace again.
- FX: the import's "Could not find state mapping for buffer" (non-persistent buffers):
  ``persistent-buffers``, then import again: the failed import's decomposed program with the
  same buffers persistent (``fixes.buffers.persistent_in_program``: the IR the fixed module's
  export gives), not a second export.

Each fix is checked at once in eager (the module before and after, on both input sets) and
rolled back when the numbers moved; the lowered module is still checked against the original
eager model at the end. Each step goes into the record's ``fixes``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import torch

from harness.fixes.autograd import PYTHON_OP
from harness.fixes.base import BlockerSeen
from harness.fixes.steps import FixStep
from harness.fixes.modules import apply_module_fix, module_fixes
from harness.models.generic import as_tuple

from .record import FrontendPort
from .subject import Subject


def trace_blockers(script: torch.jit.ScriptModule) -> list[BlockerSeen]:
    """What in the trace no pass will convert: each ``prim::PythonOp`` (one per Function)."""
    graph = script.inlined_graph  # kept alive while its nodes are read
    seen: list[BlockerSeen] = []
    # torch 2.13's _C/__init__.pyi declares findAllNodes on Node only; Graph binds it too (the
    # whole graph, nested blocks included), and walking the blocks by hand would redo it.
    for node in graph.findAllNodes("prim::PythonOp"):  # type: ignore[attr-defined]
        name = node.pyname() if hasattr(node, "pyname") else "prim::PythonOp"
        blocker = BlockerSeen(op=PYTHON_OP, message=f"prim::PythonOp {name} in the trace",
                              stage="trace")
        if blocker not in seen:
            seen.append(blocker)
    return seen + trace_ops(script)


def export_blockers(exported: torch.export.ExportedProgram) -> list[BlockerSeen]:
    """What in an exported program a module fix answers before any pass runs: each op the
    program calls that a module fix names (``transformers.grouped_mm_fallback.default``,
    ``aten.histc.default``: MoE experts, ``moe-batched-experts``), once each. Without it the
    FX import would carry the op into a pipeline that cannot lower it."""
    from harness.fixes.catalog import CATALOG
    from harness.fixes.base import ModuleFix

    names = [m for f in CATALOG if isinstance(f, ModuleFix) for m in f.messages]
    seen: list[BlockerSeen] = []
    for node in exported.graph.nodes:
        target = str(node.target) if node.op == "call_function" else ""
        if target and any(name in target for name in names):
            blocker = BlockerSeen(message=f"{target} in the exported program", stage="export")
            if blocker not in seen:
                seen.append(blocker)
    return seen


def trace_ops(script: torch.jit.ScriptModule) -> list[BlockerSeen]:
    """The trace's nodes a module fix names by op (``aten::histc`` as ``aten.histc``), once each."""
    from harness.fixes.catalog import CATALOG
    from harness.fixes.base import ModuleFix

    names = [m for f in CATALOG if isinstance(f, ModuleFix) for m in f.messages if "." in m]
    graph = script.inlined_graph
    seen: list[BlockerSeen] = []
    for name in names:
        kind = name.replace(".", "::", 1)
        if graph.findAllNodes(kind):  # type: ignore[attr-defined]
            blocker = BlockerSeen(message=f"{name} in the trace", stage="trace")
            if blocker not in seen:
                seen.append(blocker)
    return seen


def fix_module(subject: Subject, blockers: list[BlockerSeen], port: FrontendPort, *,
               script: torch.jit.ScriptModule | None = None,
               ) -> tuple[torch.nn.Module | None, list[FixStep]]:
    """The module fixes answering ``blockers`` applied to ``subject.eager`` one after the
    other: the module to trace or export now (None when no fix was kept) and the kept steps
    (to undo once the program is made). Every step tried is appended to ``port.fixes``."""
    module = subject.eager
    kept: list[FixStep] = []
    applied: list[str] = []  # each kept fix as the note names it
    examples = [subject.inputs.tensors, subject.second_inputs.tensors]
    for fix, blocker in module_fixes(blockers):
        expected = _unfixed_outputs(subject) if module is subject.eager else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            step = apply_module_fix(fix, blocker, module, examples, script=script, expected=expected,
                                    run=_outputs if expected is not None else None)
        port.fixes.append(step.recorded())
        if step.kept and step.application is not None:  # a kept step holds its application
            kept.append(step)
            module = step.application.module
            applied.append(f"{step.fix} ({step.application.summary()}; eager before and after: "
                           f"{step.verification.render() if step.verification else 'not checked'})")
    if not kept:
        return None, []
    port.notes.append("--fix applied: " + ", ".join(applied))
    return module, kept


def _outputs(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    """A module's outputs flattened as the port's eager ones (``Subject.expected``), so a fix is
    checked on the outputs the numbers compare."""
    with torch.no_grad():
        return as_tuple(module(*inputs))


def _unfixed_outputs(subject: Subject) -> list[tuple[torch.Tensor, ...]] | None:
    """The subject's eager outputs on both sets: the unfixed module's, run once for the port's
    numbers too (None when they are not plain tensors: the fix then runs the module itself)."""
    try:
        return [subject.expected(subject.inputs), subject.expected(subject.second_inputs)]
    except TypeError:
        return None


def undo(steps: list[FixStep]) -> None:
    """Puts the module back (the buffers' persistence) once the program is made."""
    for step in steps:
        if step.application is not None and step.application.undo is not None:
            step.application.undo()
