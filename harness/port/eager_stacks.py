"""A blocker's own Python line, from the eager call of its op, where the program's stack stops
short of it.

torch.export records each node's stack, but not always to the op's own line: in transformers'
MoE layers the experts' forward is reached through a dispatcher (``integrations/moe.py:634``,
``experts_forward(self, ...)``), and every node the grouped-GEMM path makes (``aten.histc`` at
line 449, ``transformers.grouped_mm_fallback``) carries the dispatcher's line as its innermost
frame. The eager model calls the same ops: one eager forward under a dispatch mode records the
whole Python stack of the first call of each blocker's op, and where the program's frame is an
outer frame of that stack, the blocker moves to the innermost one. A blocker whose frame is
already the innermost, or whose op the eager forward never calls, stays as it is.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .record import Blocker

#: Frames of these are the machinery between the model's line and the op, never the op's line.
_MACHINERY = ("/torch/", "/torch_mlir/", "/harness/", "/contextlib.py", "/functools.py")
#: The op a blocker names: ``torch.operator "torch.aten.histc"`` or ``torch.aten.histc``.
_OP = re.compile(r'"?torch\.([A-Za-z_][\w]*\.[\w.]+)"?')


def op_key(op: str) -> str:
    """``aten.histc`` (no overload) for a blocker's op, or "" when it names no torch op."""
    found = _OP.search(op)
    if not found:
        return ""
    namespace, _, rest = found.group(1).partition(".")
    return f"{namespace}.{rest.split('.')[0]}"


def eager_stacks(forward: Callable[[], Any], ops: Iterable[str]) -> dict[str, list[str]]:
    """op key -> the stack (``FILE:LINE``, innermost first, machinery dropped) of its first call
    in ``forward()``; an op never called, or a forward that raises, gives what was seen."""
    wanted = {k for k in ops if k}
    found: dict[str, list[str]] = {}

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Sequence[Any] = (),
                               kwargs: dict[str, Any] | None = None) -> Any:
            key = func._schema.name.replace("::", ".")
            if key in wanted and key not in found:
                found[key] = [f"{f.filename}:{f.lineno}" for f in reversed(traceback.extract_stack())
                              if not any(part in f.filename for part in _MACHINERY)]
            return func(*args, **(kwargs or {}))

    if not wanted:
        return found
    try:
        with torch.no_grad(), Recorder():
            forward()
    except Exception:  # a forward the mode disturbs: the blockers keep the program's lines
        return found
    return found


def with_eager_stacks(found: list[Blocker], stacks: dict[str, list[str]]) -> list[Blocker]:
    """Each blocker whose location is an outer frame of its op's eager stack, at the innermost
    frame instead, with that stack; the others as they are."""
    out = []
    for blocker in found:
        stack = stacks.get(op_key(blocker.op), [])
        if not blocker.location or blocker.location not in stack[1:]:
            out.append(blocker)
            continue
        note = (f"The program's stack of this op stops at {blocker.location}; its eager call "
                f"goes on to {stack[0]}, its own line.")
        out.append(replace(blocker, location=stack[0], frames=stack[:12],
                           explanation=" ".join(filter(None, (blocker.explanation, note)))))
    return out
