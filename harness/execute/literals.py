"""Tensor literals of the torch dialect (``torch.vtensor.literal``, ``torch.tensor.literal``) as
torch tensors.

- ``dense<...>``: the bindings give a numpy array (splats expanded, i1 as bool).
- ``dense_resource<NAME>``: the bindings have no accessor for a blob's bytes (the C API reads one
  element per call). Printing a module that holds only a clone of the literal prints that one
  blob in its ``dialect_resources`` section, as ``"0x"`` + a 4-byte little-endian alignment +
  the raw bytes; that is read back here. A blob left out when the file was written (weights
  elided) is an ElidedWeightsError, never a zero guess.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import torch

from harness.errors import ElidedWeightsError, UnsupportedDTypeError

from .dtypes import MLIR_ELEMENT_TO_DTYPE, DType

if TYPE_CHECKING:
    from torch_mlir import ir

_BLOB = re.compile(r'^\s*(?:"[^"]*"|[^\s:]+)\s*:\s*"0x(?P<hex>[0-9A-Fa-f]*)"', re.M)


def literal_tensor(op: ir.Operation) -> torch.Tensor:
    """The tensor of a ``torch.vtensor.literal`` / ``torch.tensor.literal`` op."""
    from torch_mlir import ir

    attr = op.attributes["value"]
    shaped = ir.ShapedType(attr.type)
    elt = str(shaped.element_type)
    shape = tuple(shaped.shape)
    if elt not in MLIR_ELEMENT_TO_DTYPE:
        raise UnsupportedDTypeError(elt, f"a tensor literal of type {attr.type}",
                                    ", ".join(sorted(MLIR_ELEMENT_TO_DTYPE)))
    dtype = MLIR_ELEMENT_TO_DTYPE[elt]
    if isinstance(attr, ir.DenseResourceElementsAttr) or str(attr).startswith("dense_resource<"):
        return _from_blob(op, _resource_name(attr), dtype, shape)
    if dtype is DType.BFLOAT16:
        raise UnsupportedDTypeError("bf16", f"a dense literal ({str(attr)[:60]})",
                                    "bf16 literals as dense_resource blobs")
    array = np.array(ir.DenseElementsAttr(attr))
    if dtype.is_complex:
        raise UnsupportedDTypeError(elt, "a dense literal", "real element types")
    return torch.from_numpy(np.ascontiguousarray(array).reshape(shape).copy())


def _resource_name(attr: ir.Attribute) -> str:
    text = str(attr)
    return text[len("dense_resource<"):text.index(">")]


def _from_blob(op: ir.Operation, name: str, dtype: DType, shape: tuple[int, ...]) -> torch.Tensor:
    from torch_mlir import ir

    with op.context, ir.Location.unknown():
        holder = ir.Module.create()
        with ir.InsertionPoint(holder.body):
            op.operation.clone()
        text = str(holder)
    section = text.rfind("{-#")
    m = _BLOB.search(text, section) if section >= 0 else None
    if m is None:
        raise ElidedWeightsError(name)
    data = bytes.fromhex(m.group("hex"))[4:]  # the first 4 bytes are the blob's alignment
    count = int(np.prod(shape)) if shape else 1
    if dtype is DType.BFLOAT16:
        raw = np.frombuffer(data, np.uint16, count=count).copy()
        return torch.from_numpy(raw.view(np.int16)).view(torch.bfloat16).reshape(shape)
    array = np.frombuffer(data, dtype.numpy, count=count).copy()
    return torch.from_numpy(array).reshape(shape)
