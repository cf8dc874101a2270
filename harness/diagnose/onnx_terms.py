"""An ONNX op the conversion left, in ONNX's terms: its name, node and the file's opset, which
is what a TorchOnnxToTorch pattern is written for (issue 42). Shared by the port's blockers and
``harness explain``/``report`` of an imported ONNX file, text or bytecode (``.mlirbc``)."""

from __future__ import annotations

import re
from pathlib import Path

from harness.compiler.mlir import children, is_bytecode, read_module

#: The ONNX opset the onnx_importer records on each function it imports.
OPSET_ATTR = "torch.onnx_meta.opset_version"
_OPSET = re.compile(rf"{re.escape(OPSET_ATTR)} = (\d+)")
#: The generic op the importer leaves for an ONNX op: ``torch.operator "onnx.Softsign"``.
GENERIC_PREFIX = 'torch.operator "onnx.'
#: An MLIR name location: the onnx_importer names each op's location after its ONNX node.
NAME_LOC = re.compile(r'loc\("([^"]+)"\)')
#: An ONNX op in MLIR's generic form, as an error quotes it: ``<{name = "onnx.Softsign"}>``.
_GENERIC_NAME = re.compile(r'"torch\.operator"\([^)]*\) <\{name = "onnx\.(\w+)"')


def onnx_op_name(op: str) -> str:
    """``Softsign`` for ``torch.operator "onnx.Softsign"``; "" for any other op."""
    return op.removeprefix(GENERIC_PREFIX).removesuffix('"') if op.startswith(GENERIC_PREFIX) else ""


def node_of(text: str) -> str:
    """The ONNX node an error or location names (``ss`` for ``loc("ss")``); "" when none."""
    found = NAME_LOC.search(text)
    return found.group(1) if found else ""


#: An op of printed IR and its location: ``%3 = torch.aten.exp %2 : ... loc(#loc44)``.
_OP_AT = re.compile(r'^\s*(?:%[^=]+=\s*)?(torch\.(?:aten|prims|operator)[\w.]*(?: "[^"]+")?)\b.*'
                    r'\bloc\((#loc\d+|"[^"]+")\)\s*$', re.M)


def node_ops(printed: str, node: str) -> list[str]:
    """The torch ops that printed torch IR (an ``onnx-to-torch`` output, with its debug info)
    locates at ONNX node ``node`` (``loc("node")`` or an alias of it), each once, in order:
    what TorchOnnxToTorch made of that node. Constants and lists are left out."""
    aliases = {m.group(1) for m in re.finditer(rf'^(#loc\d+) = loc\("{re.escape(node)}"\)', printed, re.M)}
    names = aliases | {f'"{node}"'}
    found: dict[str, None] = {}
    for match in _OP_AT.finditer(printed):
        if match.group(2) in names:
            found[match.group(1)] = None
    return list(found)


def left_in(errors: str) -> list[tuple[str, str]]:
    """Each ONNX op (name, node) that diagnostics' text says a pass could not legalize, in the
    order named: what ``harness timeline`` says of a failed pass."""
    found: dict[tuple[str, str], None] = {}
    for line in errors.splitlines():
        if ": error: " in line and "failed to legalize" in line:
            op = _GENERIC_NAME.search(line)
            if op:
                found[(op.group(1), node_of(line.split("failed to legalize")[0]))] = None
    return list(found)


def onnx_opset(path: str | Path) -> int | None:
    """The ONNX opset an imported file records on its functions, from its text or, for a
    bytecode file, from its parsed module; None when it records none or cannot be read."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return None
    if not is_bytecode(head):
        found = _OPSET.search(head.decode("utf-8", errors="replace"))
        return int(found.group(1)) if found else None
    parsed = read_module(path)
    if parsed is None:
        return None
    context, module = parsed
    with context:
        for op in children(module):
            if OPSET_ATTR in op.attributes:
                return int(str(op.attributes[OPSET_ATTR]).split(":")[0])
    return None


def no_pattern(name: str, opset: int | None, node: str = "", line: str = "") -> str:
    """Why an ONNX op stayed generic, and where its lowering goes: one wording for the port,
    explain, bisect, report and timeline. ``line``: the model's Python line behind the node
    (the dynamo exporter's stack in the .onnx file), when known."""
    at = f"node {node}, " if node else ""
    version = f"opset {opset}" if opset else "its opset"
    source = f", exported from {line}" if line else ""
    return (f"ONNX op {name} ({at}{version}{source}) has no TorchOnnxToTorch pattern: "
            f"convert-torch-onnx-to-torch left it as the generic torch.operator \"onnx.{name}\"; "
            f"the lowering to write is onnx.{name} at {version} in "
            "lib/Conversion/TorchOnnxToTorch/ (or the exporter may emit it as ops that have one).")
