"""The object graph of a TorchScript module: class types, ``torch.nn_module`` instances and the
values of their slots, in upstream's order.

Each object is preceded by its class's ``torch.class_type`` (the first time the class is seen)
and by the values of its slots; the ``torch.nn_module`` op closes it. Values are imported once
per identity, as upstream's importer did:

- objects by identity (two wrappers of one TorchScript object are one ``nn_module``; a probe of
  the ``training`` flag tells two objects of one class apart);
- tensors by their TensorImpl; two different tensors that share storage are refused, since the
  object graph gives each its own storage and the aliasing would be lost;
- None, bool, int, float and str by value, so ``training = True`` is one constant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeGuard

import torch
from torch_mlir import ir

from harness.errors import (
    AliasedTensorError,
    TorchScriptImportError,
    UnsupportedTypeError,
)

from .annotations import ClassAnnotator
from .nodes import CalleeTypes, ImportEnv, emit_constant, emit_tensor
from .typemap import LINEAR_PARAMS_CLASS

# Values imported once per value rather than per object (IValue hashing in upstream's importer).
_BY_VALUE = (type(None), bool, int, float, str)


@dataclass
class ClassInfo:
    qualname: str
    attr_names: list[str]
    attr_types: list[torch._C.JitType]
    methods: dict[str, torch._C.ScriptMethod]
    first_path: str
    signatures: dict[str, CalleeTypes] = field(default_factory=dict)
    emitted: bool = False


def named_attributes(obj: torch._C.ScriptModule) -> list[tuple[str, object]]:
    return torch._C._jit_debug_module_iterators(obj)["named_attributes"]  # type: ignore[attr-defined]  # not in torch/_C's .pyi


def is_linear_params(value: object) -> TypeGuard[torch._C.ScriptObject]:
    return isinstance(value, torch._C.ScriptObject) and value._type().qualified_name() == LINEAR_PARAMS_CLASS


class ObjectGraph:
    """Collects the classes of one object graph, then emits its objects and values."""

    def __init__(self, env: ImportEnv, module: ir.Module, annotator: ClassAnnotator):
        self.env = env
        self.module = module
        self.annotator = annotator
        self.classes: dict[str, ClassInfo] = {}
        self._objects: dict[str, list[tuple[torch._C.ScriptModule, ir.Value]]] = {}
        # TensorImpl address -> (the tensor, kept alive so the address is not reused, value)
        self._tensors: dict[int, tuple[torch.Tensor, ir.Value]] = {}
        self._storages: dict[int, str] = {}  # StorageImpl address -> first path
        self._by_value: dict[tuple, ir.Value] = {}
        self.object_count = 0
        self.root_qualname = ""

    @property
    def _ip(self) -> ir.InsertionPoint:
        return ir.InsertionPoint(self.module.body)

    # ----- classes ----------------------------------------------------------------------

    def _attributes(self, obj: torch._C.ScriptModule, info: ClassInfo) -> list[tuple[str, object]]:
        # The names are the class's; reading each value is cheaper than the iterator, which
        # walks every parameter, buffer and submodule of the object on each call.
        return [(name, obj.getattr(name)) for name in info.attr_names]  # type: ignore[attr-defined]  # not in torch/_C's .pyi

    def collect(self, obj: torch._C.ScriptModule, path: str) -> None:
        class_type = obj._type()
        qualname = class_type.qualified_name()
        known = self.classes.get(qualname)
        named = self._attributes(obj, known) if known else named_attributes(obj)
        if qualname not in self.classes:
            info = ClassInfo(
                qualname=qualname,
                attr_names=[n for n, _ in named],
                attr_types=list(class_type.containedTypes()),  # type: ignore[attr-defined]  # not in torch/_C's .pyi
                methods={name: obj._get_method(name) for name in obj._method_names()},
                first_path=path,
            )
            if len(info.attr_names) != len(info.attr_types):
                raise TorchScriptImportError(
                    f"class {qualname} at {path} reports {len(info.attr_names)} attribute values "
                    f"but {len(info.attr_types)} attribute types; this TorchScript object cannot "
                    "be imported."
                )
            self.classes[qualname] = info
        for (name, value), jit_type in zip(named, class_type.containedTypes(), strict=False):  # type: ignore[attr-defined]  # not in torch/_C's .pyi
            if isinstance(value, torch._C.ScriptModule):
                self.collect(value, f"{path}.{name}")
            elif is_linear_params(value):
                continue
            elif jit_type.kind() == "ClassType" or isinstance(value, torch._C.ScriptObject):
                raise UnsupportedTypeError(
                    str(jit_type), f"attribute {path}.{name} holds a TorchScript class object, "
                    "which torch-mlir's object graph cannot represent",
                    "nn.Module submodules and quantized LinearPackedParamsBase as attributes; pass "
                    "the object's fields instead",
                )

    def _emit_class_type(self, info: ClassInfo) -> None:
        loc = self.env.locs.unknown
        types = self.env.types
        with self._ip:
            op = ir.Operation.create("torch.class_type",
                                     attributes={"sym_name": ir.StringAttr.get(info.qualname)},
                                     regions=1, loc=loc)
        block = op.regions[0].blocks.append()
        with ir.InsertionPoint(block):
            for name, jit_type in zip(info.attr_names, info.attr_types, strict=False):
                attrs = {"name": ir.StringAttr.get(name),
                         "type": ir.TypeAttr.get(types.from_jit(
                             jit_type, f"attribute {info.first_path}.{name} of class {info.qualname}",
                             refine=False))}
                if not self.annotator.is_exported(info.qualname, name):
                    attrs["isPrivate"] = ir.UnitAttr.get()
                ir.Operation.create("torch.attr", attributes=attrs, loc=loc)
            for name in info.methods:
                attrs = {"name": ir.StringAttr.get(name),
                         "function": ir.FlatSymbolRefAttr.get(f"{info.qualname}.{name}")}
                if not self.annotator.is_exported(info.qualname, name):
                    attrs["isPrivate"] = ir.UnitAttr.get()
                ir.Operation.create("torch.method", attributes=attrs, loc=loc)
            ir.Operation.create("torch.class_type_terminator", loc=loc)
        info.emitted = True

    # ----- objects ----------------------------------------------------------------------

    @staticmethod
    def _same_object(a: torch._C.ScriptModule, b: torch._C.ScriptModule) -> bool:
        """Whether two wrappers are one TorchScript object. The binding exposes no pointer, so
        this flips ``training`` through one wrapper, reads it through the other, and restores
        it; only called for wrappers of one class."""
        before = a.getattr("training")  # type: ignore[attr-defined]  # not in torch/_C's .pyi
        try:
            a.setattr("training", not before)
            return b.getattr("training") != before  # type: ignore[attr-defined]  # not in torch/_C's .pyi
        finally:
            a.setattr("training", before)

    def import_object(self, obj: torch._C.ScriptModule, path: str) -> ir.Value:
        qualname = obj._type().qualified_name()
        if not self.root_qualname:
            self.root_qualname = qualname
        key = qualname  # objects of one class are candidates; the probe tells them apart
        for candidate, value in self._objects.get(key, ()):
            if self._same_object(candidate, obj):
                return value
        info = self.classes[qualname]
        if not info.emitted:
            self._emit_class_type(info)
        slots = [(name, self.import_value(value, jit_type, f"{path}.{name}"))
                 for (name, value), jit_type in zip(self._attributes(obj, info), info.attr_types,
                                                    strict=False)]
        loc = ir.Location.name(path, self.env.locs.unknown)
        with self._ip:
            op = ir.Operation.create("torch.nn_module", results=[self.env.types.from_jit(obj._type(), path)],
                                     regions=1, loc=loc)
        block = op.regions[0].blocks.append()
        with ir.InsertionPoint(block):
            for name, v in slots:
                ir.Operation.create("torch.slot", operands=[v], attributes={"name": ir.StringAttr.get(name)},
                                    loc=loc)
            ir.Operation.create("torch.nn_module_terminator", loc=loc)
        self._objects.setdefault(key, []).append((obj, op.result))
        self.object_count += 1
        return op.result

    # ----- slot values ------------------------------------------------------------------

    def import_value(self, value: object, jit_type: torch._C.JitType, path: str) -> ir.Value:
        if isinstance(value, torch._C.ScriptModule):
            return self.import_object(value, path)
        loc = ir.Location.name(path, self.env.locs.unknown)
        hint = path.removeprefix("<root>.")
        if isinstance(value, torch.Tensor):
            return self._import_tensor(value, loc, path)
        if is_linear_params(value):
            return self._import_linear_params(value, loc, path)
        if isinstance(value, _BY_VALUE):
            key = (type(value).__name__, value.hex() if isinstance(value, float) else value, jit_type.kind())
            cached = self._by_value.get(key)
            if cached is None:
                with self._ip:
                    cached = emit_constant(self.env, value, jit_type, loc, hint, f"attribute {path}")
                self._by_value[key] = cached
            return cached
        with self._ip:
            return emit_constant(self.env, value, jit_type, loc, hint, f"attribute {path}")

    def _import_tensor(self, tensor: torch.Tensor, loc: ir.Location, path: str) -> ir.Value:
        cached = self._tensors.get(tensor._cdata)
        if cached is not None:
            return cached[1]
        if tensor.layout == torch.strided and not tensor.is_quantized:
            storage = tensor.untyped_storage()._cdata
            first = self._storages.setdefault(storage, path)
            if first != path:
                raise AliasedTensorError(path, first, self.root_qualname)
        with self._ip:
            value = emit_tensor(self.env, tensor, loc, path.removeprefix("<root>."), f"attribute {path}",
                                scalar=lambda v, t: self.import_value(v, t, path))
        self._tensors[tensor._cdata] = (tensor, value)
        return value

    def _import_linear_params(self, packed: torch._C.ScriptObject, loc: ir.Location, path: str) -> ir.Value:
        weight, bias = torch.ops.quantized.linear_unpack(packed)
        operands = [self._import_tensor(weight, loc, f"{path}.weight")]
        if bias is not None:
            operands.append(self._import_tensor(bias, loc, f"{path}.bias"))
        with self._ip:
            return ir.Operation.create("torch.linear_params.create",
                                       results=[self.env.types.parse("!torch.LinearParams")],
                                       operands=operands, loc=loc).result
