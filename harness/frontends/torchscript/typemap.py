"""TorchScript types and torch dtypes to torch-dialect MLIR types.

Types are built by parsing their assembly once per distinct string and caching the result in
the context: a traced OPT graph holds a few dozen distinct types across ~1000 values.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch_mlir import ir

from harness.errors import UnsupportedTypeError

# Element types of builtin tensors (resource literals) and of !torch.tensor<..., DTYPE>.
TORCH_DTYPE_TO_MLIR_TYPE_ASM: dict[torch.dtype, str] = {
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float32: "f32",
    torch.float64: "f64",
    torch.uint8: "ui8",
    torch.int8: "si8",
    torch.int16: "si16",
    torch.int32: "si32",
    torch.int64: "si64",
    torch.bool: "i1",
    torch.complex64: "complex<f32>",
    torch.complex128: "complex<f64>",
    torch.qint8: "!torch.qint8",
    torch.quint8: "!torch.quint8",
}

# TorchScript's ScalarType enum as the JIT stores a dtype constant (an int).
TORCH_DTYPE_TO_INT: dict[torch.dtype, int] = {
    torch.uint8: 0,
    torch.int8: 1,
    torch.int16: 2,
    torch.int32: 3,
    torch.int64: 4,
    torch.float16: 5,
    torch.float32: 6,
    torch.float64: 7,
    torch.complex64: 9,
    torch.complex128: 10,
    torch.bool: 11,
    torch.qint8: 12,
    torch.quint8: 13,
    torch.bfloat16: 15,
}

# JIT type kinds that the torch dialect spells as a plain keyword type.
JIT_KIND_TO_MLIR_TYPE_ASM: dict[str, str] = {
    "IntType": "!torch.int",
    "SymIntType": "!torch.int",
    "FloatType": "!torch.float",
    "SymFloatType": "!torch.float",
    "BoolType": "!torch.bool",
    "SymBoolType": "!torch.bool",
    "NumberType": "!torch.number",
    "StringType": "!torch.str",
    "NoneType": "!torch.none",
    "DeviceObjType": "!torch.Device",
    "GeneratorType": "!torch.Generator",
    "AnyType": "!torch.any",
    # These are ints in TorchScript's schemas and in the torch dialect.
    "ScalarTypeType": "!torch.int",
    "LayoutType": "!torch.int",
    "MemoryFormatType": "!torch.int",
    "QSchemeType": "!torch.int",
}


def dtype_asm(dtype: torch.dtype, context: str) -> str:
    try:
        return TORCH_DTYPE_TO_MLIR_TYPE_ASM[dtype]
    except KeyError:
        supported = ", ".join(str(d).replace("torch.", "") for d in TORCH_DTYPE_TO_MLIR_TYPE_ASM)
        raise UnsupportedTypeError(str(dtype), context, supported) from None


def tensor_type_asm(
    sizes: list[int | None] | None, dtype: torch.dtype | None, *, value_semantics: bool, context: str
) -> str:
    """``!torch.tensor<[2,?],f32>``; unknown rank is ``*``, unknown dtype ``unk``."""
    prefix = "!torch.vtensor" if value_semantics else "!torch.tensor"
    if sizes is None and dtype is None:
        return prefix
    shape = ("*" if sizes is None
             else "[" + ",".join("?" if d is None or d < 0 else str(d) for d in sizes) + "]")
    elem = "unk" if dtype is None else dtype_asm(dtype, context)
    return f"{prefix}<{shape},{elem}>"


class TypeMapper:
    """Maps ``torch._C.JitType`` to ``ir.Type`` within one context, with a cache by assembly."""

    def __init__(self, context: ir.Context, *, ignore_tensor_shapes: bool = False,
                 value_semantics: bool = False):
        self.context = context
        self.ignore_tensor_shapes = ignore_tensor_shapes
        self.value_semantics = value_semantics
        self._parsed: dict[str, ir.Type] = {}

    def parse(self, asm: str) -> ir.Type:
        t = self._parsed.get(asm)
        if t is None:
            t = ir.Type.parse(asm, self.context)
            self._parsed[asm] = t
        return t

    def tensor(self, sizes: list[int | None] | None, dtype: torch.dtype | None, *,
               context: str = "tensor") -> ir.Type:
        return self.parse(tensor_type_asm(sizes, dtype, value_semantics=self.value_semantics,
                                          context=context))

    def from_jit(self, jit_type: torch._C.JitType, context: str, *, refine: bool = True) -> ir.Type:
        """The MLIR type of a TorchScript type; ``refine=False`` erases tensor shapes/dtypes."""
        return self.parse(self.asm(jit_type, context, refine=refine))

    def asm(self, jit_type: torch._C.JitType, context: str, *, refine: bool = True) -> str:
        kind = jit_type.kind()
        simple = JIT_KIND_TO_MLIR_TYPE_ASM.get(kind)
        if simple is not None:
            return simple
        handler: Callable | None = _COMPOUND.get(kind)
        if handler is None:
            raise UnsupportedTypeError(
                str(jit_type), context, "Tensor, int, float, bool, number, str, None, Device, "
                "Generator, Any, Optional, Union, List, Tuple, Dict and nn.Module class types",
            )
        return handler(self, jit_type, context, refine and not self.ignore_tensor_shapes)


def _tensor(mapper: TypeMapper, t: torch._C.TensorType, context: str, refine: bool) -> str:
    if not refine:
        return "!torch.vtensor" if mapper.value_semantics else "!torch.tensor"
    return tensor_type_asm(t.varyingSizes(), t.dtype(), value_semantics=mapper.value_semantics,
                           context=context)


def _contained(mapper: TypeMapper, t: torch._C.Type, context: str, refine: bool) -> list[str]:
    # Inside a torch type, contained torch types drop the dialect prefix: !torch.list<int>.
    return [mapper.asm(c, context, refine=refine).removeprefix("!torch.") for c in t.containedTypes()]


def _optional(mapper: TypeMapper, t: torch._C.Type, context: str, refine: bool) -> str:
    (inner,) = _contained(mapper, t, context, refine)
    return f"!torch.optional<{inner}>"


def _list(mapper: TypeMapper, t: torch._C.Type, context: str, refine: bool) -> str:
    (inner,) = _contained(mapper, t, context, refine)
    return f"!torch.list<{inner}>"


def _tuple(mapper: TypeMapper, t: torch._C.Type, context: str, refine: bool) -> str:
    return "!torch.tuple<" + ", ".join(_contained(mapper, t, context, refine)) + ">"


def _union(mapper: TypeMapper, t: torch._C.Type, context: str, refine: bool) -> str:
    return "!torch.union<" + ", ".join(_contained(mapper, t, context, refine)) + ">"


def _dict(mapper: TypeMapper, t: torch._C.Type, context: str, refine: bool) -> str:
    key, value = _contained(mapper, t, context, refine)
    return f"!torch.dict<{key}, {value}>"


# The one TorchScript custom class torch-mlir has a type for (quantized linear weights).
LINEAR_PARAMS_CLASS = "__torch__.torch.classes.quantized.LinearPackedParamsBase"


def _class(mapper: TypeMapper, t: torch._C.ClassType, context: str, refine: bool) -> str:
    # torch-mlir models every class type as an nn.Module; TorchScript classes that are not
    # modules have no object-graph form there and fail in GlobalizeObjectGraph, not here.
    if t.qualified_name() == LINEAR_PARAMS_CLASS:
        return "!torch.LinearParams"
    return f'!torch.nn.Module<"{t.qualified_name()}">'


_COMPOUND: dict[str, Callable] = {
    "TensorType": _tensor,
    "OptionalType": _optional,
    "ListType": _list,
    "TupleType": _tuple,
    "UnionType": _union,
    "DictType": _dict,
    "ClassType": _class,
}
