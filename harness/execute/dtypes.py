"""Element types, as the torch dialect, the builtin tensors, numpy, torch and the RefBackend spell
them, and the signatures of the functions this package runs.

The torch dialect's types have no Python binding in the wheel (``_torchMlir`` exports only
``register_dialect``), so ``!torch.vtensor<[2,?],f32>`` is read from its text here; builtin
tensor types are read through the bindings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

import numpy as np

from harness.enums import ParsableEnum
from harness.errors import UnsupportedDTypeError

if TYPE_CHECKING:
    import torch
    from torch_mlir import ir


class DType(ParsableEnum):
    """A tensor element type the numerics path knows, named as numpy names it.

    A closed set like the others (not a ``str`` mixin, which mypy's strict equality lets a
    member be compared with a string, silently False): ``.value`` (or ``str()``) is numpy's
    name, ``.short`` the torch dialect's, ``.numpy`` and ``.torch`` the libraries' own types."""

    BOOL = "bool"
    UINT8 = "uint8"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT16 = "float16"
    BFLOAT16 = "bfloat16"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    COMPLEX64 = "complex64"
    COMPLEX128 = "complex128"

    @classmethod
    def parse(cls, value: str | ParsableEnum) -> Self:
        """From numpy's, torch's or the torch dialect's spelling (``float32``, ``torch.float32``,
        ``f32``, ``si64``); an element type no spelling names is the numerics check's own
        error (:class:`UnsupportedDTypeError`), not a usage error."""
        if isinstance(value, cls):
            return value
        key = str(value).strip().removeprefix("torch.")
        for member in cls:
            if member.value == key or _ALIASES.get(key) is member:
                return member
        raise UnsupportedDTypeError(str(value), "a dtype name", ", ".join(m.value for m in cls))

    @classmethod
    def of(cls, array: np.ndarray | torch.Tensor) -> DType:
        """The DType of a numpy array or torch tensor."""
        return cls.parse(str(array.dtype))

    @property
    def numpy(self) -> np.dtype:
        if self is DType.BFLOAT16:
            raise UnsupportedDTypeError("bf16", "numpy", "numpy has no bfloat16 without ml_dtypes; "
                                        "compare bf16 results as float32")
        return np.dtype(self.value)

    @property
    def torch(self) -> torch.dtype:
        import torch

        return getattr(torch, self.value if self is not DType.BOOL else "bool")

    @property
    def is_float(self) -> bool:
        return self in (DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32, DType.FLOAT64)

    @property
    def is_complex(self) -> bool:
        return self in (DType.COMPLEX64, DType.COMPLEX128)

    @property
    def short(self) -> str:
        """The torch dialect's spelling (``f32``, ``si64``), for messages."""
        return _SHORT[self]


_SHORT = {
    DType.BOOL: "i1", DType.UINT8: "ui8", DType.INT8: "si8", DType.INT16: "si16",
    DType.INT32: "si32", DType.INT64: "si64", DType.FLOAT16: "f16", DType.BFLOAT16: "bf16",
    DType.FLOAT32: "f32", DType.FLOAT64: "f64", DType.COMPLEX64: "complex<f32>",
    DType.COMPLEX128: "complex<f64>",
}
# Element types of the torch dialect (signed and unsigned integers are distinct there).
TORCH_ELEMENT_TO_DTYPE = {v: k for k, v in _SHORT.items()}
# Element types of builtin tensors: signless after the backend type conversion, so ui8 and si8
# both become i8 there (the torch-level signature tells them apart); literals of the torch
# dialect keep the signed spellings.
MLIR_ELEMENT_TO_DTYPE = {
    "i1": DType.BOOL, "i8": DType.INT8, "i16": DType.INT16, "i32": DType.INT32,
    "i64": DType.INT64, "ui8": DType.UINT8, "si8": DType.INT8, "si16": DType.INT16,
    "si32": DType.INT32, "si64": DType.INT64, "f16": DType.FLOAT16, "bf16": DType.BFLOAT16,
    "f32": DType.FLOAT32, "f64": DType.FLOAT64, "complex<f32>": DType.COMPLEX64,
    "complex<f64>": DType.COMPLEX128,
}
_ALIASES = {
    **TORCH_ELEMENT_TO_DTYPE, **MLIR_ELEMENT_TO_DTYPE,
    "bool_": DType.BOOL, "half": DType.FLOAT16, "float": DType.FLOAT32, "double": DType.FLOAT64,
    "long": DType.INT64, "int": DType.INT32, "short": DType.INT16, "cfloat": DType.COMPLEX64,
    "cdouble": DType.COMPLEX128,
}


@dataclass(frozen=True)
class TensorSpec:
    """A tensor argument or result: element type and shape (None = a dynamic dimension)."""

    dtype: DType
    shape: tuple[int | None, ...]

    def describe(self) -> str:
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.dtype.short}[{dims}]"

    def to_json(self) -> dict:
        return {"dtype": self.dtype.value, "shape": list(self.shape)}

    @classmethod
    def from_json(cls, data: dict) -> TensorSpec:
        return cls(DType.parse(data["dtype"]), tuple(data["shape"]))


@dataclass(frozen=True)
class TensorSignature:
    """A function's tensor arguments and results."""

    name: str
    args: tuple[TensorSpec, ...]
    results: tuple[TensorSpec, ...]

    def describe(self) -> str:
        return (f"@{self.name}({', '.join(a.describe() for a in self.args)}) -> "
                f"({', '.join(r.describe() for r in self.results)})")

    def to_json(self) -> dict:
        return {"name": self.name, "args": [a.to_json() for a in self.args],
                "results": [r.to_json() for r in self.results]}

    @classmethod
    def from_json(cls, data: dict) -> TensorSignature:
        """What :meth:`to_json` wrote (the worker's and the JIT child's requests)."""
        return cls(data["name"], tuple(map(TensorSpec.from_json, data["args"])),
                   tuple(map(TensorSpec.from_json, data["results"])))


_TORCH_TENSOR = re.compile(r"^!torch\.v?tensor<\[(?P<dims>[^\]]*)\],(?P<elt>.+)>$")


def torch_tensor_spec(type_text: str) -> TensorSpec | None:
    """``!torch.vtensor<[1,?],si64>`` as a TensorSpec; None for any other type (or a tensor
    without a known shape and dtype)."""
    m = _TORCH_TENSOR.match(type_text.strip())
    if not m:
        return None
    elt = TORCH_ELEMENT_TO_DTYPE.get(m.group("elt"))
    if elt is None:
        raise UnsupportedDTypeError(m.group("elt"), f"in {type_text}",
                                    ", ".join(sorted(TORCH_ELEMENT_TO_DTYPE)))
    dims = m.group("dims").strip()
    shape = tuple(None if d.strip() == "?" else int(d) for d in dims.split(",")) if dims else ()
    return TensorSpec(elt, shape)


def builtin_tensor_spec(type_: ir.Type) -> TensorSpec | None:
    """A builtin ``tensor<2x?xf32>`` (an ``ir.Type``) as a TensorSpec; None for other types."""
    from torch_mlir import ir

    ranked = type_.maybe_downcast() if hasattr(type_, "maybe_downcast") else type_
    if not isinstance(ranked, ir.RankedTensorType):
        return None
    elt = str(ranked.element_type)
    if elt not in MLIR_ELEMENT_TO_DTYPE:
        raise UnsupportedDTypeError(elt, f"in {type_}", ", ".join(sorted(MLIR_ELEMENT_TO_DTYPE)))
    shape = tuple(None if ranked.is_dynamic_dim(i) else ranked.shape[i] for i in range(ranked.rank))
    return TensorSpec(MLIR_ELEMENT_TO_DTYPE[elt], shape)
