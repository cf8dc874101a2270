"""Tensor values as MLIR elements attributes.

Weights become ``dense_resource`` blobs that borrow the tensor's memory (no copy, no hex
text unless the printer is asked for it); literals of up to ``DENSE_MAX_ELEMENTS`` elements
and every bool tensor are dense attributes, which the folders can see through. Each tensor is
turned into an attribute once, keyed by the identity of its storage view, so tied weights stay
one blob.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import torch
from torch_mlir import ir

from harness.errors import MetaTensorError, UnsupportedTypeError

from .typemap import TypeMapper, dtype_asm

# numpy views of a tensor's bytes, by dtype. bf16 and f16 have no exact numpy twin everywhere,
# so they are reinterpreted as same-width integers: the blob holds raw bytes either way.
TORCH_DTYPE_TO_NPY_VIEW: dict[torch.dtype, torch.dtype] = {
    torch.bfloat16: torch.int16,
    torch.float16: torch.int16,
}

# Literals up to this many elements are written inline as dense attributes; larger ones are
# resource blobs borrowing the tensor's memory.
DENSE_MAX_ELEMENTS = 16

_RESOURCE_NAME_BAD = re.compile(r"[^A-Za-z0-9_.]")


def resource_name(hint: str) -> str:
    name = _RESOURCE_NAME_BAD.sub("_", hint).strip("._") or "tensor"
    if name[0].isdigit():
        name = "t_" + name
    return name


@dataclass
class TensorLiterals:
    """Creates and de-duplicates the elements attributes of one module's tensors."""

    types: TypeMapper
    _by_identity: dict[tuple, ir.Attribute] = field(default_factory=dict)
    _keepalive: list = field(default_factory=list)
    _names: set[str] = field(default_factory=set)
    total_bytes: int = 0

    def identity(self, t: torch.Tensor) -> tuple:
        """Same storage, offset, shape, strides and dtype: the same tensor for the IR."""
        try:
            ptr = t.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError):
            ptr = id(t)
        return (ptr, t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)

    def _unique_name(self, hint: str) -> str:
        base = resource_name(hint)
        name, n = base, 1
        while name in self._names:
            name = f"{base}_{n}"
            n += 1
        self._names.add(name)
        return name

    def elements_attr(self, tensor: torch.Tensor, name_hint: str, context: str = "") -> ir.Attribute:
        key = self.identity(tensor)
        cached = self._by_identity.get(key)
        if cached is not None:
            return cached
        attr = self._make(tensor, name_hint, context)
        self._by_identity[key] = attr
        return attr

    def _make(self, tensor: torch.Tensor, name_hint: str, where: str) -> ir.Attribute:
        context = f"tensor literal '{name_hint}'" + (f" of {where}" if where else "")
        if tensor.is_meta:  # torch's own error names no parameter
            raise MetaTensorError(name_hint, context)
        if tensor.layout != torch.strided:
            raise UnsupportedTypeError(
                f"{str(tensor.layout).removeprefix('torch.')} tensor of {tensor.dtype}", context,
                "dense, strided tensors (.to_dense() it first)",
            )
        if tensor.is_quantized:
            # The literal holds the integer representation; the caller wraps it in
            # torch.per_tensor_affine.create with the scale and zero point.
            tensor = tensor.int_repr()
        elem_asm = dtype_asm(tensor.dtype, context)
        shape = "x".join(str(d) for d in tensor.shape)
        builtin_type = self.types.parse(f"tensor<{shape + 'x' if shape else ''}{elem_asm}>")
        data = tensor.detach()
        if data.device.type != "cpu":
            data = data.cpu()
        data = data.contiguous()
        view_dtype = TORCH_DTYPE_TO_NPY_VIEW.get(data.dtype)
        array = (data.view(view_dtype) if view_dtype else data).numpy()
        if data.dtype == torch.bool:
            # i1 blobs hold one byte per element, which the ExecutionEngine's memref conversion
            # rejects ("no known conversion for innermost element type"); dense bools are
            # bit-packed by the bindings and lower everywhere (upstream's importer wrote these).
            return ir.DenseElementsAttr.get(np.ascontiguousarray(array), type=builtin_type.element_type,
                                            shape=list(tensor.shape))
        if 0 < data.numel() <= DENSE_MAX_ELEMENTS or (data.numel() == 0 and view_dtype is None):
            # Small literals are dense, as upstream's importer wrote every literal: torch-mlir's
            # folders read dense values only (AtenToDtypeOp::fold: up to 16 elements), and a
            # reader sees the numbers.
            if view_dtype is not None:
                flat = data.flatten().tolist()
                if all(v == flat[0] for v in flat):
                    scalar = ir.FloatAttr.get(builtin_type.element_type, float(flat[0]))
                    return ir.DenseElementsAttr.get_splat(builtin_type, scalar)
                return ir.DenseElementsAttr.get(
                    [ir.FloatAttr.get(builtin_type.element_type, float(v)) for v in flat],
                    type=builtin_type)
            return ir.DenseElementsAttr.get(
                np.ascontiguousarray(array), type=builtin_type.element_type,
                shape=list(tensor.shape),
            )
        self._keepalive.append(array)
        self.total_bytes += array.nbytes
        return ir.DenseResourceElementsAttr.get_from_buffer(
            array, self._unique_name(name_hint), builtin_type, context=self.types.context
        )
