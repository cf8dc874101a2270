"""Weights as flat arrays before the JIT: the same bytes, one LLVM constant each.

The RefBackend's lowering gives each constant global its tensor's nested array type
(``!llvm.array<64 x array<3 x array<7 x array<7 x f32>>>>``). Translating that to LLVM IR
makes one constant per innermost row, each uniqued: measured on torchvision's resnet18 (11.7 M
weights), 43 s of the ExecutionEngine's compile. A flat ``!llvm.array<9408 x f32>`` holding the
same blob becomes one data array. Nothing else changes: an array of scalars has no padding, so
the layout is the same, and every user reaches the global through ``llvm.mlir.addressof`` (an
opaque pointer) and a ``getelementptr`` that carries its own element type.

The rewrite is textual, on the printed LLVM-dialect module, and only of the lines it fully
matches (a ``dense_resource`` global of rank 2 or more); a line it got wrong would not parse.
"""

from __future__ import annotations

import math
import re

#: ``llvm.mlir.global ... @NAME(dense_resource<KEY> : tensor<AxBx...xT>) {...} : !llvm.array<...>``
_GLOBAL = re.compile(
    rb"^(?P<head>[ \t]*llvm\.mlir\.global [^\n(]*@[\w$.\-]+\(dense_resource<[^>\n]+> : )"
    rb"tensor<(?P<dims>(?:\d+x){2,})(?P<element>[fi]\d+|bf16)>"
    rb"(?P<middle>\)[^\n]*? : )!llvm\.array<[^\n]*>$",
    re.MULTILINE)


def _flat(match: re.Match[bytes]) -> bytes:
    count = math.prod(int(d) for d in match["dims"].split(b"x") if d)
    element = match["element"]
    return (match["head"] + b"tensor<%dx%s>" % (count, element) + match["middle"]
            + b"!llvm.array<%d x %s>" % (count, element))


def flatten_constant_globals(llvm_text: bytes) -> tuple[bytes, int]:
    """The module's text with each multi-dimensional ``dense_resource`` global flat, and how
    many were."""
    end = llvm_text.find(b"\n{-#")  # the blobs' section: megabytes of hex, no globals
    end = len(llvm_text) if end < 0 else end
    head, count = _GLOBAL.subn(_flat, llvm_text[:end])
    return (head + llvm_text[end:], count) if count else (llvm_text, 0)
