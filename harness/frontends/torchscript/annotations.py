"""Which members of an object graph are exported, and what shapes method arguments have.

The role of upstream torch-mlir's ``ClassAnnotator``, with its method names. Requests are
recorded against a root class type and a path of attribute names, and resolved when the object
graph is imported, because only then are attribute names and their class types known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import torch

from harness.errors import AnnotationError

ArgAnnotation = Optional[tuple[Sequence[int], torch.dtype, bool]]


def _qualname(class_type) -> str:
    if isinstance(class_type, str):
        return class_type
    if isinstance(class_type, torch.jit.ScriptModule):
        return class_type._c._type().qualified_name()
    if isinstance(class_type, torch._C.ScriptModule):
        return class_type._type().qualified_name()
    if hasattr(class_type, "qualified_name"):
        return class_type.qualified_name()
    raise AnnotationError(
        f"expected a TorchScript class type (module._c._type()), a ScriptModule or a qualified "
        f"name, got {type(class_type).__name__}. Pass script_module._c._type()."
    )


@dataclass(frozen=True)
class ArgTypeBound:
    """One annotated argument: shape (-1 = dynamic), dtype, and whether it has value semantics."""

    shape: tuple[int, ...] | None
    dtype: torch.dtype | None
    value_semantics: bool

    def type_asm(self) -> str:
        from .typemap import tensor_type_asm

        sizes = None if self.shape is None else [None if d < 0 else d for d in self.shape]
        return tensor_type_asm(sizes, self.dtype, value_semantics=self.value_semantics,
                               context="argument annotation")


@dataclass
class ClassAnnotator:
    """Export and argument annotations, applied by ``ModuleBuilder.import_module``."""

    _export_none: list[str] = field(default_factory=list)
    _export_paths: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    _arg_annotations: list[tuple[str, tuple[str, ...], tuple[ArgTypeBound | None, ...]]] = field(
        default_factory=list)

    def exportNone(self, class_type) -> None:  # noqa: N802 (upstream's name)
        """Make every attribute and method of this class and its submodules private."""
        self._export_none.append(_qualname(class_type))

    def exportPath(self, class_type, path: Sequence[str]) -> None:  # noqa: N802
        """Export the member at ``path`` (attribute names, then the member)."""
        if not path:
            raise AnnotationError("exportPath needs a non-empty path such as ['forward'].")
        self._export_paths.append((_qualname(class_type), tuple(path)))

    def annotateArgs(self, class_type, path: Sequence[str], annotations: Sequence[ArgAnnotation]) -> None:  # noqa: N802
        """Shape/dtype bounds of a method's arguments; ``None`` for self and unannotated ones."""
        bounds: list[ArgTypeBound | None] = []
        for i, a in enumerate(annotations):
            if a is None:
                bounds.append(None)
                continue
            try:
                shape, dtype, value_semantics = a
            except (TypeError, ValueError):
                raise AnnotationError(
                    f"argument annotation {i} of {'.'.join(path)} is {a!r}; expected None or a "
                    "(shape, dtype, value_semantics) tuple like ([1, 7], torch.int64, True)."
                ) from None
            if shape is not None and not all(isinstance(d, int) for d in shape):
                raise AnnotationError(
                    f"argument annotation {i} of {'.'.join(path)} has shape {shape!r}; use ints "
                    "and -1 for a dynamic dimension."
                )
            if dtype is not None and not isinstance(dtype, torch.dtype):
                raise AnnotationError(
                    f"argument annotation {i} of {'.'.join(path)} has dtype {dtype!r}; use a "
                    "torch.dtype such as torch.float32."
                )
            bounds.append(ArgTypeBound(None if shape is None else tuple(shape), dtype, bool(value_semantics)))
        self._arg_annotations.append((_qualname(class_type), tuple(path), tuple(bounds)))

    # Spellings of the same calls in Python style.
    export_none = exportNone
    export_path = exportPath
    annotate_args = annotateArgs

    def __repr__(self) -> str:
        lines = ["ClassAnnotator {"]
        lines += [f"  exportNone {q}" for q in self._export_none]
        lines += [f"  exportPath {q} {'.'.join(p)}" for q, p in self._export_paths]
        lines += [f"  annotateArgs {q} {'.'.join(p)} {list(b)}" for q, p, b in self._arg_annotations]
        return "\n".join(lines + ["}"])


@dataclass
class ResolvedAnnotations:
    """Annotations resolved against one object graph, keyed by (class qualname, member)."""

    private: set[tuple[str, str]] = field(default_factory=set)
    arg_bounds: dict[tuple[str, str], tuple[ArgTypeBound | None, ...]] = field(default_factory=dict)

    def is_private(self, class_qualname: str, member: str) -> bool:
        return (class_qualname, member) in self.private


def forward_annotator(script_module, examples: Sequence[object]) -> ClassAnnotator:
    """Exports only ``forward`` and bounds each argument by its example's shape and dtype.

    What upstream's ``torch_mlir.compile`` did for every model: examples are tensors or
    anything with ``.shape`` and ``.dtype`` (a placeholder); others, and arguments past the
    examples (left at their defaults), get no bound.
    """
    class_type = script_module._c._type()
    annotator = ClassAnnotator()
    annotator.exportNone(class_type)
    annotator.exportPath(class_type, ["forward"])
    bounds: list[ArgAnnotation] = [None]
    for e in examples:
        has_shape = hasattr(e, "shape") and isinstance(getattr(e, "dtype", None), torch.dtype)
        bounds.append((list(e.shape), e.dtype, True) if has_shape else None)
    n_args = len(script_module._c._get_method("forward").schema.arguments)
    annotator.annotateArgs(class_type, ["forward"], bounds + [None] * (n_args - len(bounds)))
    return annotator
