"""``autograd-function-forward``: a ``torch.autograd.Function`` called by the model runs its
``forward`` as ordinary ops, so ``torch.jit.trace`` records them instead of one opaque
``prim::PythonOp``.

Why: the trace keeps a Function call as ``prim::PythonOp`` (a Python callable the graph cannot
look into); the importer imports it as ``torch.operator "prim.PythonOp"`` and
``torchscript-to-torch`` fails on it. Bloom's GeLU is one (``GeLUFunction.apply`` at
modeling_bloom.py:164; the location points into torch/autograd/function.py). ``torch.export``
traces through Functions, so the FX path does not meet it.

How: the model is wrapped in :class:`ForwardInlined`, whose forward runs the model while each
named Function's ``apply`` calls ``Function.forward`` directly (with a context that records
nothing, or without one for Functions that define ``setup_context``); the classes are restored
when the call returns, and by ``undo``. No source line of the model changes.

Why the numbers stay: in inference ``apply`` returns what ``forward`` returns; backward is never
run, so the Function's own backward (Bloom's is a hand-written GeLU derivative) is not needed.
Refused: a module in training mode, and a Function that overrides ``apply`` itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, TypeGuard

import torch

from .base import Application, ModuleEvidence, ModuleFix, RefusedSite, Site

PYTHON_OP = 'torch.operator "prim.PythonOp"'
FunctionClass = type[torch.autograd.Function]


class AutogradFunctionForward(ModuleFix):
    name = "autograd-function-forward"
    ops = (PYTHON_OP,)
    messages = ("prim.PythonOp", "prim::PythonOp")
    conditions = ("the module is in eval mode (no backward), and the Function does not "
                  "override apply")

    def apply(self, module: torch.nn.Module, evidence: ModuleEvidence = ModuleEvidence()) -> Application:
        app = Application(self.name, self.level, module=module)
        found = functions_called(module, evidence)
        if module.training:
            app.refused += [RefusedSite(_qualname(f), "the model", "the module is in training mode: "
                                        "backward would need the Function's own backward")
                            for f in found]
            return app
        usable = []
        for fn in found:
            if "apply" in vars(fn):
                app.refused.append(RefusedSite(_qualname(fn), "the model", "it overrides apply, so "
                                               "apply may do more than call forward"))
                continue
            usable.append(fn)
            app.changed.append(Site(f"{_qualname(fn)}.apply -> {_qualname(fn)}.forward",
                                    f"{fn.__module__}"))
        if usable:
            app.module = ForwardInlined(module, tuple(usable)).eval()
            app.undo = lambda: None  # the original module is untouched; the wrapper is dropped
        return app


class ForwardInlined(torch.nn.Module):
    """``inner`` called with the named Functions' ``apply`` replaced by their ``forward``."""

    def __init__(self, inner: torch.nn.Module, functions: tuple[FunctionClass, ...]):
        super().__init__()
        self.inner = inner
        self.functions = functions

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        with forward_only(self.functions):
            return self.inner(*args, **kwargs)


class _NoGradContext:
    """What ``Function.forward`` gets as ``ctx`` outside autograd: accepts what forward tells
    it for backward and keeps nothing that matters."""

    def __init__(self, inputs: int):
        self.needs_input_grad = (False,) * inputs
        self.saved_tensors: tuple = ()

    def save_for_backward(self, *tensors: torch.Tensor) -> None:
        self.saved_tensors = tensors

    def save_for_forward(self, *tensors: torch.Tensor) -> None:
        pass

    def mark_dirty(self, *tensors: torch.Tensor) -> None:
        pass

    def mark_non_differentiable(self, *tensors: torch.Tensor) -> None:
        pass

    def set_materialize_grads(self, value: bool) -> None:
        pass


def _defines_setup_context(fn: type) -> bool:
    base = torch.autograd.function._SingleLevelFunction.setup_context
    return getattr(fn, "setup_context", base) is not base


def _call_forward(cls: FunctionClass, *args: Any, **kwargs: Any) -> Any:
    if _defines_setup_context(cls):
        return cls.forward(*args, **kwargs)
    return cls.forward(_NoGradContext(len(args)), *args, **kwargs)


@contextlib.contextmanager
def forward_only(functions: Sequence[FunctionClass]) -> Iterator[None]:
    """While inside, ``F.apply(...)`` is ``F.forward(ctx, ...)`` for each F in ``functions``."""
    saved = [(fn, vars(fn).get("apply")) for fn in functions]
    for fn in functions:
        _set_apply(fn, classmethod(_call_forward))
    try:
        yield
    finally:
        for fn, original in saved:
            if original is None:
                delattr(fn, "apply")
            else:
                _set_apply(fn, original)


def functions_called(module: torch.nn.Module, evidence: ModuleEvidence) -> list[FunctionClass]:
    """The autograd Functions the model calls: the ``prim::PythonOp`` nodes of its trace, or,
    without one, the Functions whose ``apply`` runs in one eager call on the examples."""
    found: list[FunctionClass] = []
    if evidence.script is not None:
        graph = evidence.script.inlined_graph  # kept: its nodes die with it
        for node in graph.findAllNodes("prim::PythonOp"):
            owner = getattr(node.pyobj(), "__self__", None)
            if _is_function(owner) and owner not in found:
                found.append(owner)
        return found
    if not evidence.examples:
        return found
    original = torch.autograd.Function.__dict__["apply"]

    def recording(cls: FunctionClass, *args: Any, **kwargs: Any) -> Any:
        if cls not in found:
            found.append(cls)
        return original.__func__(cls, *args, **kwargs)

    _set_apply(torch.autograd.Function, classmethod(recording))
    try:
        with torch.no_grad():
            module(*evidence.examples)
    finally:
        _set_apply(torch.autograd.Function, original)
    return found


def _set_apply(fn: FunctionClass, apply: Any) -> None:
    """``fn.apply = apply``: the classmethod patched on purpose, and restored by the caller."""
    fn.apply = apply  # type: ignore[method-assign]  # a patch, which mypy refuses for a method


def _is_function(obj: object) -> TypeGuard[FunctionClass]:
    return isinstance(obj, type) and issubclass(obj, torch.autograd.Function)


def _qualname(fn: type) -> str:
    return getattr(fn, "__qualname__", str(fn))
