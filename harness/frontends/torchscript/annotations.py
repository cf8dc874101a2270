"""Which members of an object graph are exported, and what shapes method arguments have.

The role and the method names of upstream torch-mlir's ``ClassAnnotator``: one annotation per
class type (keyed by its qualified name), with one entry per attribute and per method, all
exported until ``exportNone`` says otherwise. Every request is checked when it is made, against
the class type itself (its attributes, submodules and method signatures), so a wrong path or a
wrong number of argument annotations fails at the call that wrote it, not inside the import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeGuard
from collections.abc import Sequence

import torch

from harness.errors import AnnotationError

ArgSpec = tuple[Sequence[int], torch.dtype, bool] | None

# c10::toString(ScalarType): how upstream's repr names a dtype.
TORCH_DTYPE_TO_SCALAR_TYPE_NAME: dict[torch.dtype, str] = {
    torch.uint8: "Byte",
    torch.int8: "Char",
    torch.int16: "Short",
    torch.int32: "Int",
    torch.int64: "Long",
    torch.float16: "Half",
    torch.float32: "Float",
    torch.float64: "Double",
    torch.complex32: "ComplexHalf",
    torch.complex64: "ComplexFloat",
    torch.complex128: "ComplexDouble",
    torch.bool: "Bool",
    torch.qint8: "QInt8",
    torch.quint8: "QUInt8",
    torch.qint32: "QInt32",
    torch.bfloat16: "BFloat16",
}


@dataclass(frozen=True)
class ClassLayout:
    """What a class type declares, in declaration order."""

    qualname: str
    attribute_names: tuple[str, ...]
    attribute_types: tuple[torch._C.JitType, ...]
    method_names: tuple[str, ...]
    method_schemas: dict[str, torch._C.FunctionSchema]

    def attribute_type(self, name: str) -> torch._C.JitType | None:
        try:
            return self.attribute_types[self.attribute_names.index(name)]
        except ValueError:
            return None


def _is_module_class(t: torch._C.JitType) -> TypeGuard[torch._C.ClassType]:
    """A class type with attributes and methods to annotate: not a C++ custom class such as
    quantized LinearPackedParamsBase, which has neither."""
    return t.kind() == "ClassType" and not t.qualified_name().startswith("__torch__.torch.classes.")  # type: ignore[attr-defined]  # not in torch/_C's .pyi


_SKELETONS: dict[str, torch._C.ScriptModule] = {}


def _skeleton(class_type: torch._C.ClassType) -> torch._C.ScriptModule:
    cached = _SKELETONS.get(class_type.qualified_name())
    if cached is None:
        cached = _SKELETONS[class_type.qualified_name()] = _new_skeleton(class_type)
    return cached


def _new_skeleton(class_type: torch._C.ClassType) -> torch._C.ScriptModule:
    # The binding lists a class type's attribute types in order but not their names; a
    # ConcreteModuleType lists the names unordered. An object of the type lists both, in order,
    # once its tensor and submodule slots hold values (the iterator reads them).
    obj = torch._C._create_module_with_type(class_type)
    concrete = torch._C.ConcreteModuleType.from_jit_type(class_type)
    for name, (jit_type, _is_param) in concrete.get_attributes().items():  # type: ignore[attr-defined]  # not in torch/_C's .pyi
        if jit_type.kind() == "TensorType":
            obj.setattr(name, torch.empty(0))
    for name, child in concrete.get_modules():  # type: ignore[attr-defined]  # not in torch/_C's .pyi
        obj.setattr(name, _skeleton(child.jit_type))
    return obj


# Layouts by qualified name; a qualified name names one class type for the life of the process
# (the JIT mangles a new name for every new type), so entries never go stale.
_LAYOUTS: dict[str, ClassLayout] = {}


def _layout_of_type(class_type: torch._C.ClassType) -> ClassLayout:
    cached = _LAYOUTS.get(class_type.qualified_name())
    if cached is not None:
        return cached
    try:
        obj = _skeleton(class_type)
        named = torch._C._jit_debug_module_iterators(obj)["named_attributes"]  # type: ignore[attr-defined]  # not in torch/_C's .pyi
    except RuntimeError as e:
        raise AnnotationError(
            f"cannot read the attributes of class type {class_type.qualified_name()} ({e}). "
            "Annotate through the scripted module itself: pass script_module or script_module._c."
        ) from None
    methods = tuple(class_type.method_names())  # type: ignore[attr-defined]  # not in torch/_C's .pyi
    layout = _LAYOUTS[class_type.qualified_name()] = ClassLayout(
        qualname=class_type.qualified_name(),
        attribute_names=tuple(n for n, _ in named),
        attribute_types=tuple(class_type.containedTypes()),  # type: ignore[attr-defined]  # not in torch/_C's .pyi
        method_names=methods,
        method_schemas={m: obj._get_method(m).schema for m in methods},
    )
    return layout


def class_layout(class_type: torch._C.ClassType | torch.jit.ScriptModule | torch._C.ScriptModule | str,
                 ) -> ClassLayout:
    """The layout of a class type, given as the type, a ScriptModule or a qualified name."""
    if isinstance(class_type, torch.jit.ScriptModule):
        class_type = class_type._c
    if isinstance(class_type, torch._C.ScriptModule):
        class_type = class_type._type()
    if isinstance(class_type, str):
        found = torch.jit._state._python_cu.get_class(class_type)
        if found is None:
            raise AnnotationError(
                f"no TorchScript class is named {class_type!r}. Pass the class type itself: "
                "script_module._c._type()."
            )
        class_type = found
    if not isinstance(class_type, torch._C.ClassType):
        raise AnnotationError(
            f"expected a TorchScript class type (module._c._type()), a ScriptModule or a qualified "
            f"name, got {type(class_type).__name__}. Pass script_module._c._type()."
        )
    return _layout_of_type(class_type)


@dataclass(frozen=True)
class ArgAnnotation:
    """One argument's bound: shape (-1 = dynamic), dtype, and whether it has value semantics."""

    shape: tuple[int, ...] | None = None
    dtype: torch.dtype | None = None
    has_value_semantics: bool = False

    def is_bound(self) -> bool:
        """Whether the annotation says anything: upstream bound only arguments with both a
        shape and a dtype; a dtype alone (``!torch.vtensor<*,f32>``) is a bound here too."""
        return self.shape is not None or self.dtype is not None or self.has_value_semantics

    def type_asm(self) -> str:
        from .typemap import tensor_type_asm

        sizes = None if self.shape is None else [None if d < 0 else d for d in self.shape]
        return tensor_type_asm(sizes, self.dtype, value_semantics=self.has_value_semantics,
                               context="argument annotation")

    def render(self, index: int) -> list[str]:
        dtype = ("<none>" if self.dtype is None
                 else TORCH_DTYPE_TO_SCALAR_TYPE_NAME.get(self.dtype, str(self.dtype)))
        shape = "<none>" if self.shape is None else "[" + ", ".join(str(d) for d in self.shape) + "]"
        return [f"ArgAnnotation({index}) {{", f"  dtype = {dtype}", f"  shape = {shape}",
                f"  hasValueSemantics = {str(self.has_value_semantics).lower()}", "}"]


@dataclass
class MethodAnnotation:
    is_exported: bool = True
    arg_annotations: tuple[ArgAnnotation, ...] | None = None


@dataclass
class ClassAnnotation:
    """The annotations of one class type: one flag per attribute, one entry per method."""

    layout: ClassLayout
    attributes: dict[str, bool] = field(default_factory=dict)  # name -> exported
    methods: dict[str, MethodAnnotation] = field(default_factory=dict)

    @staticmethod
    def of(layout: ClassLayout) -> ClassAnnotation:
        return ClassAnnotation(layout, {n: True for n in layout.attribute_names},
                               {m: MethodAnnotation() for m in layout.method_names})

    def is_exported(self, member: str) -> bool:
        if member in self.methods:
            return self.methods[member].is_exported
        return self.attributes.get(member, True)

    def render(self) -> list[str]:
        lines = [f"ClassAnnotation('{self.layout.qualname}') {{"]
        for name, exported in self.attributes.items():
            lines += [f"  AttributeAnnotation('{name}') {{", f"    isExported = {str(exported).lower()}",
                      "  }"]
        for name, method in self.methods.items():
            lines += [f"  MethodAnnotation('{name}') {{",
                      f"    isExported = {str(method.is_exported).lower()}"]
            if method.arg_annotations is None:
                lines.append("    argAnnotations = <none>")
            else:
                lines.append("    argAnnotations =")
                for i, a in enumerate(method.arg_annotations):
                    lines += ["      " + line for line in a.render(i)]
            lines.append("  }")
        return [*lines, "}"]


class ClassAnnotator:
    """Export and argument annotations, applied by ``ModuleBuilder.import_module``."""

    def __init__(self) -> None:
        self._classes: dict[str, ClassAnnotation] = {}

    def _annotation(self, layout: ClassLayout) -> ClassAnnotation:
        annotation = self._classes.get(layout.qualname)
        if annotation is None:
            annotation = self._classes[layout.qualname] = ClassAnnotation.of(layout)
        return annotation

    def _class_at(self, root: ClassLayout, path: Sequence[str], what: str) -> ClassLayout:
        layout = root
        for name in path:
            t = layout.attribute_type(name)
            if t is None or not _is_module_class(t):
                submodules = [n for n, ty in zip(layout.attribute_names, layout.attribute_types, strict=False)
                              if _is_module_class(ty)]
                raise AnnotationError(
                    f"{what}: {layout.qualname} has no submodule in attribute '{name}' (its "
                    f"submodules: {', '.join(submodules) or 'none'})."
                )
            layout = _layout_of_type(t)
        return layout

    def exportNone(self, class_type: torch._C.ClassType | torch.jit.ScriptModule
                   | torch._C.ScriptModule | str) -> None:  # upstream's name
        """Make every attribute and method of this class and its submodules private."""
        stack, seen = [class_layout(class_type)], set()
        while stack:
            layout = stack.pop()
            if layout.qualname in seen:
                continue
            seen.add(layout.qualname)
            annotation = self._annotation(layout)
            annotation.attributes = {n: False for n in annotation.attributes}
            for method in annotation.methods.values():
                method.is_exported = False
            stack.extend(_layout_of_type(t) for t in layout.attribute_types if _is_module_class(t))

    def exportPath(self, class_type: torch._C.ClassType | torch.jit.ScriptModule
                   | torch._C.ScriptModule | str, path: Sequence[str]) -> None:  # upstream's camelCase name
        """Export the member at ``path`` (attribute names, then the member)."""
        path = list(path)
        if not path:
            raise AnnotationError("Empty exported path. Can only export a property of a class. "
                                  "Give the member's path, such as ['forward'] or ['sub', 'weight'].")
        layout = self._class_at(class_layout(class_type), path[:-1], f"exportPath {'.'.join(path)}")
        member = path[-1]
        if member not in layout.attribute_names and member not in layout.method_names:
            raise AnnotationError(
                f"class '{layout.qualname}' does not have a method or attribute called '{member}' "
                f"(methods: {', '.join(layout.method_names) or 'none'}; attributes: "
                f"{', '.join(layout.attribute_names) or 'none'})."
            )
        annotation = self._annotation(layout)
        if member in annotation.attributes:
            annotation.attributes[member] = True
        if member in annotation.methods:
            annotation.methods[member].is_exported = True

    def annotateArgs(self, class_type: torch._C.ClassType | torch.jit.ScriptModule
                     | torch._C.ScriptModule | str, path: Sequence[str],  # upstream's camelCase name
                     annotations: Sequence[ArgSpec]) -> None:
        """Shape/dtype bounds of a method's arguments; ``None`` for self and unannotated ones."""
        path = list(path)
        if not path:
            raise AnnotationError("Empty annotated path. Can only annotate shapes/dtypes of a method "
                                  "of a class. Give the method's path, such as ['forward'].")
        layout = self._class_at(class_layout(class_type), path[:-1], f"annotateArgs {'.'.join(path)}")
        method = path[-1]
        if method not in layout.method_names:
            raise AnnotationError(
                f"class '{layout.qualname}' does not have a method called '{method}' (methods: "
                f"{', '.join(layout.method_names) or 'none'})."
            )
        params = layout.method_schemas[method].arguments
        if len(annotations) != len(params):
            signature = ", ".join(f"{a.type} {a.name}" for a in params)
            raise AnnotationError(
                "There must be one argument annotation per function parameter. Including 'self' "
                f"the number of argument annotations is: {len(annotations)}. The number of function "
                f"parameters is: {len(params)}. The function signature is ({signature}). Use None "
                "for self and for arguments without a bound."
            )
        parsed = tuple(_arg_annotation(a, i, ".".join(path)) for i, a in enumerate(annotations))
        self._annotation(layout).methods[method].arg_annotations = parsed

    # Spellings of the same calls in Python style.
    export_none = exportNone
    export_path = exportPath
    annotate_args = annotateArgs

    # ----- what the builder asks ---------------------------------------------------------

    def annotated_classes(self) -> list[str]:
        return sorted(self._classes)

    def is_exported(self, class_qualname: str, member: str) -> bool:
        annotation = self._classes.get(class_qualname)
        return True if annotation is None else annotation.is_exported(member)

    def arg_annotations(self, class_qualname: str, method: str) -> tuple[ArgAnnotation, ...] | None:
        annotation = self._classes.get(class_qualname)
        if annotation is None or method not in annotation.methods:
            return None
        return annotation.methods[method].arg_annotations

    def __repr__(self) -> str:
        lines = ["ClassAnnotator {"]
        for name in sorted(self._classes):
            lines += ["  " + line for line in self._classes[name].render()]
        return "\n".join([*lines, "}"])


def _arg_annotation(spec: Any, index: int, where: str) -> ArgAnnotation:  # the caller's, checked here
    if spec is None:
        return ArgAnnotation()
    try:
        shape, dtype, value_semantics = spec
    except (TypeError, ValueError):
        raise AnnotationError(
            f"argument annotation {index} of {where} is {spec!r}; expected None or a "
            "(shape, dtype, value_semantics) tuple like ([1, 7], torch.int64, True)."
        ) from None
    if shape is not None and not all(isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise AnnotationError(
            f"argument annotation {index} of {where} has shape {shape!r}; use ints and -1 for a "
            "dynamic dimension."
        )
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise AnnotationError(
            f"unsupported scalar type '{dtype!r}' in argument annotation {index} of {where}; use a "
            "torch.dtype such as torch.float32."
        )
    return ArgAnnotation(None if shape is None else tuple(shape), dtype, bool(value_semantics))


def forward_annotator(script_module: torch.jit.ScriptModule, examples: Sequence[object]) -> ClassAnnotator:
    """Exports only ``forward`` and bounds each argument by its example's shape and dtype.

    What upstream's ``torch_mlir.compile`` did for every model: examples are tensors or
    anything with ``.shape`` and ``.dtype`` (a placeholder); others, and arguments past the
    examples (left at their defaults), get no bound.
    """
    class_type = script_module._c._type()
    annotator = ClassAnnotator()
    annotator.exportNone(class_type)
    annotator.exportPath(class_type, ["forward"])
    bounds: list[ArgSpec] = [None]
    for e in examples:
        shape, dtype = getattr(e, "shape", None), getattr(e, "dtype", None)
        bounds.append((list(shape), dtype, True) if shape is not None and isinstance(dtype, torch.dtype)
                      else None)
    n_args = len(script_module._c._get_method("forward").schema.arguments)
    annotator.annotateArgs(class_type, ["forward"], bounds + [None] * (n_args - len(bounds)))
    return annotator
