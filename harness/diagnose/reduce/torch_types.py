"""Torch dialect types read through the wheel's C API, not from their printed text.

The Python bindings expose no torch type classes (``!torch.vtensor<[2,3],f32>`` is a bare
``ir.Type``), but the wheel's ``libTorchMLIRAggregateCAPI`` has torch-mlir's C API for them. The
reducer needs a type's kind, sizes and dtype to build a zero constant of it and to know whether
a new function argument of that type says as much as the value it replaces; types cross the
boundary through the capsules the bindings provide for C-API interop (``_CAPIPtr`` /
``_CAPICreate``). The library sits beside the bindings' extension in the wheel (``_mlir_libs``).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

from torch_mlir import ir


class TypeKind(Enum):
    """The kinds of type the reducer treats differently; everything else is OTHER."""

    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    NONE = "none"
    STRING = "str"
    DEVICE = "Device"
    VALUE_TENSOR = "vtensor"
    TENSOR = "tensor"  # non-value (raw TorchScript) tensors
    BUILTIN_TENSOR = "builtin tensor"  # tensor<...>, ranked or not
    OTHER = "other"

    @property
    def is_scalar(self) -> bool:
        return self in _SCALARS


_SCALARS = frozenset({TypeKind.INT, TypeKind.FLOAT, TypeKind.BOOL, TypeKind.NONE, TypeKind.STRING,
                      TypeKind.DEVICE})
# The C-API predicate of each torch kind.
_IS_A = {TypeKind.INT: "Int", TypeKind.FLOAT: "Float", TypeKind.BOOL: "Bool", TypeKind.NONE: "None",
         TypeKind.STRING: "String", TypeKind.DEVICE: "Device", TypeKind.VALUE_TENSOR: "ValueTensor",
         TypeKind.TENSOR: "NonValueTensor"}


@dataclass(frozen=True)
class TensorInfo:
    """What a tensor type states: ``sizes`` None when unranked (-1 for a dynamic size), ``dtype``
    None when unknown."""

    sizes: tuple[int, ...] | None
    dtype: ir.Type | None

    @property
    def has_rank_and_dtype(self) -> bool:
        return self.sizes is not None and self.dtype is not None

    @property
    def is_static(self) -> bool:
        return self.has_rank_and_dtype and all(d >= 0 for d in self.sizes)  # type: ignore[union-attr]


class _MlirType(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p)]


class _CAPI:
    """The handful of torch-mlir C-API functions the reducer calls, typed for ctypes."""

    def __init__(self) -> None:
        folder = Path(ir.__file__).parent / "_mlir_libs"
        lib = ctypes.CDLL(str(next(folder.glob("libTorchMLIRAggregateCAPI.*"))))
        self.is_a = {k: self._declare(lib, f"torchMlirTypeIsATorch{suffix}", ctypes.c_bool, _MlirType)
                     for k, suffix in _IS_A.items()}
        self.tensor: dict[TypeKind, dict[str, Callable[..., Any]]] = {}
        for kind, prefix in ((TypeKind.VALUE_TENSOR, "torchMlirTorchValueTensorType"),
                             (TypeKind.TENSOR, "torchMlirTorchNonValueTensorType")):
            self.tensor[kind] = {
                "has_sizes": self._declare(lib, prefix + "HasSizes", ctypes.c_bool, _MlirType),
                "rank": self._declare(lib, prefix + "GetRank", ctypes.c_int64, _MlirType),
                "sizes": self._declare(lib, prefix + "GetSizes", ctypes.c_int64, _MlirType,
                                       ctypes.POINTER(ctypes.c_int64)),
                "has_dtype": self._declare(lib, prefix + "HasDtype", ctypes.c_bool, _MlirType),
                "dtype": self._declare(lib, prefix + "GetDtype", _MlirType, _MlirType),
            }
        api = ctypes.pythonapi
        api.PyCapsule_GetName.restype = ctypes.c_char_p
        api.PyCapsule_GetName.argtypes = [ctypes.py_object]
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        api.PyCapsule_New.restype = ctypes.py_object
        api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self.api = api

    @staticmethod
    def _declare(lib: ctypes.CDLL, name: str, restype: type[ctypes._CDataType],
                 *argtypes: type[ctypes._CDataType]) -> Callable[..., Any]:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, list(argtypes)
        return fn

    def raw(self, type_: ir.Type) -> tuple[_MlirType, bytes]:
        capsule = type_._CAPIPtr
        name = self.api.PyCapsule_GetName(capsule)
        return _MlirType(self.api.PyCapsule_GetPointer(capsule, name)), name

    def wrap(self, raw: _MlirType, name: bytes) -> ir.Type:
        return ir.Type._CAPICreate(self.api.PyCapsule_New(raw.ptr, name, None)).maybe_downcast()


@cache
def _capi() -> _CAPI:
    return _CAPI()


def kind(type_: ir.Type) -> TypeKind:
    type_ = type_.maybe_downcast()
    if isinstance(type_, (ir.RankedTensorType, ir.UnrankedTensorType)):
        return TypeKind.BUILTIN_TENSOR
    capi = _capi()
    raw, _ = capi.raw(type_)
    return next((k for k, is_a in capi.is_a.items() if is_a(raw)), TypeKind.OTHER)


def tensor_info(type_: ir.Type) -> TensorInfo | None:
    """Sizes and dtype of a torch or builtin tensor type; None for other types."""
    type_ = type_.maybe_downcast()
    if isinstance(type_, ir.RankedTensorType):
        return TensorInfo(tuple(type_.shape), type_.element_type)
    if isinstance(type_, ir.UnrankedTensorType):
        return TensorInfo(None, type_.element_type)
    k = kind(type_)
    if k not in (TypeKind.VALUE_TENSOR, TypeKind.TENSOR):
        return None
    capi = _capi()
    fns = capi.tensor[k]
    raw, name = capi.raw(type_)
    sizes = None
    if fns["has_sizes"](raw):
        rank = fns["rank"](raw)
        buffer = (ctypes.c_int64 * max(rank, 1))()
        fns["sizes"](raw, buffer)
        sizes = tuple(buffer[:rank])
    dtype = capi.wrap(fns["dtype"](raw), name) if fns["has_dtype"](raw) else None
    return TensorInfo(sizes, dtype)
