"""Weights as flat arrays before the JIT: the same bytes, one LLVM constant each.

The RefBackend's lowering gives each constant global its tensor's nested array type
(``!llvm.array<64 x array<3 x array<7 x array<7 x f32>>>>``). Translating that to LLVM IR
makes one constant per innermost row, each uniqued: measured on torchvision's resnet18 (11.7 M
weights), 43 s of the ExecutionEngine's compile. A flat ``!llvm.array<9408 x f32>`` holding the
same blob becomes one data array. Nothing else changes: an array of scalars has no padding, so
the layout is the same, and every user reaches the global through ``llvm.mlir.addressof`` (an
opaque pointer) and a ``getelementptr`` that carries its own element type.

A weight reaches the lowered module in one of two forms, and both are rewritten:

- ``dense_resource<KEY>``: the FX and TorchScript importers' weights (the blob stays in the
  module's resource section);
- ``dense<"0x...">``, the bytes inline: the ONNX path's weights. The importer makes each
  initializer a ``dense_resource``, but torch-mlir's ``onnx.Constant`` pattern
  (TorchOnnxToTorch, DefaultDomainAtoF.cpp) copies it into a ``DenseElementsAttr``. Left
  nested, they made rt_detr's JIT 85 s against 4 s for the same weights from FX. The hex is
  the elements in row-major order whatever the shape (one element's worth: a splat), so it
  reads the same under the flat type.

The rewrite is textual, on the printed LLVM-dialect module, and only of the lines it fully
matches (a global of rank 2 or more); a line it got wrong would not parse. It finds the lines
with ``bytes.find`` and never runs a regular expression over a weight's hex, which is most of a
module's text (rt_detr's 300 MB).
"""

from __future__ import annotations

import math
import re

_KEYWORD = b"llvm.mlir.global "

#: The part of a global's line before its value: ``llvm.mlir.global ... @NAME(``.
_HEAD = re.compile(rb"[ \t]*llvm\.mlir\.global [^\n(]*@[\w$.\-]+\(")

#: The part after its value: `` : tensor<AxBx...xT>) {...} : !llvm.array<...>``.
_TAIL = re.compile(
    rb" : tensor<(?P<dims>(?:\d+x){2,})(?P<element>[fi]\d+|bf16)>"
    rb"(?P<middle>\)[^\n]*? : )!llvm\.array<[^\n]*>")


def _value_end(text: bytes, start: int, stop: int) -> int:
    """Where the value at ``start`` (``dense_resource<KEY>`` or ``dense<"0x...">``) ends, before
    ``stop``; -1 for any other value (a splat written as a number, a nested list, a string)."""
    if text.startswith(b"dense_resource<", start, stop):
        end = text.find(b">", start, stop)
        return -1 if end < 0 else end + 1
    if text.startswith(b'dense<"0x', start, stop):
        end = text.find(b'">', start, stop)  # hex has no quote: the first one closes it
        return -1 if end < 0 else end + 2
    return -1


def _flat_tail(text: bytes, start: int, stop: int) -> tuple[int, int, bytes] | None:
    """For the global's line from ``start`` (``stop``: no further than that): where its value
    ends, where the line ends, and what follows the value with the flat type; None to keep the
    line as it is. The value is found before the line's end: a weight's hex is scanned once."""
    paren = text.find(b"(", start, stop)
    if paren < 0 or b"\n" in text[start:paren] or _HEAD.fullmatch(text, start, paren + 1) is None:
        return None
    end = _value_end(text, paren + 1, stop)
    if end < 0:
        return None
    line_end = text.find(b"\n", end, stop)
    line_end = stop if line_end < 0 else line_end
    tail = _TAIL.fullmatch(text, end, line_end)
    if tail is None:
        return None
    count = math.prod(int(d) for d in tail["dims"].split(b"x") if d)
    element = tail["element"]
    return end, line_end, (b" : tensor<%dx%s>" % (count, element) + tail["middle"]
                           + b"!llvm.array<%d x %s>" % (count, element))


def flatten_constant_globals(llvm_text: bytes) -> tuple[bytes, int]:
    """The module's text with each multi-dimensional ``dense_resource`` or hex ``dense``
    global flat, and how many were."""
    end = llvm_text.find(b"\n{-#")  # the blobs' section: megabytes of hex, no globals
    end = len(llvm_text) if end < 0 else end
    pieces: list[bytes] = []
    kept = count = 0  # kept: where the text not yet in pieces starts
    found = llvm_text.find(_KEYWORD, 0, end)
    while found >= 0:
        start = llvm_text.rfind(b"\n", 0, found) + 1
        flat = _flat_tail(llvm_text, start, end)
        after = found + len(_KEYWORD)
        if flat is not None:
            value_end, after, tail = flat
            pieces += [llvm_text[kept:value_end], tail]
            kept, count = after, count + 1
        found = llvm_text.find(_KEYWORD, after, end)
    if not count:
        return llvm_text, 0
    return b"".join([*pieces, llvm_text[kept:]]), count
