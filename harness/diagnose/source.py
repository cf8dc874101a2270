"""Python source lines for a location: what a diagnostic's file:line means to the model author."""

from __future__ import annotations

import sysconfig
from collections.abc import Sequence
from pathlib import Path

_LIBRARY_ROOTS = tuple(
    str(Path(p).resolve()) for p in {sysconfig.get_paths().get("purelib", ""),
                                     sysconfig.get_paths().get("platlib", ""),
                                     sysconfig.get_paths().get("stdlib", "")} if p
)


def excerpt(file: str, line: int, context: int = 2) -> list[str]:
    """``> LINE | text`` for the line and ``context`` lines around it; [] when unreadable."""
    path = Path(file)
    if not file or line <= 0 or not path.is_file():
        return []
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    if line > len(lines):
        return []
    lo, hi = max(1, line - context), min(len(lines), line + context)
    return [f"{'>' if n == line else ' '} {n:5d} | {lines[n - 1]}" for n in range(lo, hi + 1)]


#: The installed harness package: its wrappers (the traced forward of ``harness port``) and its
#: own models sit in a model's call chain, but they are not the user's code.
_HARNESS_ROOT = str(Path(__file__).resolve().parents[1])


def is_harness(file: str) -> bool:
    """A file of the installed harness package (an editable install included)."""
    try:
        resolved = str(Path(file).resolve())
    except OSError:
        return False
    return resolved.startswith(_HARNESS_ROOT + "/")


def is_library(file: str) -> bool:
    """Installed code (site-packages, the standard library), as opposed to the user's model."""
    if "site-packages" in file or "dist-packages" in file:
        return True
    try:
        resolved = str(Path(file).resolve())
    except OSError:
        return False
    return any(resolved.startswith(root + "/") for root in _LIBRARY_ROOTS)


#: Where a model library keeps its models' own code (a transformers modeling file, a
#: torchvision or timm model module): inside an installed package, and still the model's line.
_MODEL_DIRS = ("/transformers/models/", "/torchvision/models/", "/timm/models/")


def is_model_code(file: str) -> bool:
    """The model's own code: the user's file (not installed, not the harness), or a model
    library's model definition (``transformers/models/NAME/modeling_NAME.py``, a torchvision or
    timm model module); ``torch/nn/...`` and ``transformers/activations.py`` are library code."""
    if not file:
        return False
    posix = file.replace("\\", "/")
    if any(d in posix for d in _MODEL_DIRS) or Path(posix).name.startswith("modeling_"):
        return True
    return not is_library(file) and not is_harness(file)


def model_frame(files: list[str]) -> int | None:
    """The index of the deepest frame (innermost first) in the model's own code, or None."""
    return next((i for i, f in enumerate(files) if is_model_code(f)), None)


def torch_ops_at(torch_ir: Path, frames: Sequence[str]) -> list[str]:
    """The torch ops of ``torch_ir`` (a stage's torch-dialect input) whose location's stack
    (``FILE:LINE`` innermost first) starts with ``frames``, in order, each once: what the
    model's line became before the lowering. A whole stack tells apart the many ops that share
    an inner line (every Tensor operator passes ``torch/_tensor.py:39``); one frame matches on
    the innermost alone."""
    from harness.compiler.locations import file_locations
    from harness.compiler.mlir import children, read_module

    wanted = list(frames)
    parsed = read_module(torch_ir) if wanted and torch_ir.is_file() else None
    if parsed is None:
        return []
    _, module = parsed
    found: dict[str, None] = {}
    stack = list(children(module))
    while stack:
        op = stack.pop(0)
        stack[:0] = list(children(op))
        name = op.name
        if not name.startswith("torch.aten.") and not name.startswith("torch.prims."):
            continue
        if [f.file_line for f in file_locations(str(op.location))][:len(wanted)] == wanted:
            found[name] = None
    return list(found)

