"""``--dynamic`` in a port: export with ``Dim``s, the blocker when export refuses, and which
dimensions stayed dynamic down to the linalg signature.

- FX: ``torch.export`` with one ``torch.export.Dim`` per named dimension
  (:func:`harness.models.dynamic.export_shapes`). When export refuses a dimension (torch's
  "Constraints violated ... specialized it to be a constant"), the blocker is that sentence and
  the Python line whose guard made the size a constant (:class:`SpecializationLog`), not a
  traceback.
- The record (:class:`DynamicDims`) lists, per asked dimension, the input axes the import left
  dynamic, those still ``?`` in the linalg function's signature, and those that became static.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.compiler.stages import FunctionSignature
from harness.models.dynamic import DynamicDim, SpecializationLog

from .diagnose import drop_ssa_names, exception_blocker
from .record import Blocker, DynamicDims, PortStage
from .subject import Subject

if TYPE_CHECKING:
    import torch

#: torch.export's sentence for a dimension it had to make a constant.
_SPECIALISED = re.compile(r"You marked (\w+) as dynamic but your code specialized it to be a "
                          r"constant \((-?\d+)\)")
_RANGE = re.compile(r"Not all values of (\w+) = (\S+) in the specified range .*? satisfy the "
                    r"generated guard (.+?)\.?$", re.M)
_SUGGESTED = re.compile(r"^\s*(\w+ = Dim\(.*\))\s*$", re.M)


def export_blocker(error: BaseException, log: SpecializationLog | None) -> Blocker | None:
    """The export blocker of a dynamic port: torch's own sentence for each dimension it refused,
    located at the Python line whose guard fixed its size. None for an error of another kind (the
    port's usual exception blocker)."""
    text = str(error)
    refused = [f"{m[1]} specialised to {m[2]}" for m in _SPECIALISED.finditer(text)]
    refused = list(dict.fromkeys(refused))
    refused += [f"{m[1]}: the code needs {m[3].strip().replace(m[2], m[1])}"
                for m in _RANGE.finditer(text)]
    if not refused:
        return None
    guards = log.culprits() if log is not None else []
    base = exception_blocker(PortStage.EXPORT, error)
    where = guards[0].location if guards else base.location
    said = "; ".join(refused)
    explanation = " ".join(filter(None,
        [f"torch.export refused the dynamic dimension{'s' if len(refused) > 1 else ''}: {said}."]
        + [f"The guard {g.expression} was added at {g.location}." for g in guards[:3]]
        + [f"torch.export suggests: {'; '.join(_SUGGESTED.findall(text))}."
           if _SUGGESTED.search(text) else ""]
        + ["Narrow the range (--dynamic NAME=MIN..MAX), export at another size, or leave that "
           "dimension out of --dynamic; on the model's side, keep the size symbolic (x.shape[1] "
           "in tensor ops, not int(...) or a Python branch on it)."]))
    return Blocker(rank=1, stage=PortStage.EXPORT,
                   signature=f"{PortStage.EXPORT}: dynamic shape: "
                             + drop_ssa_names(re.sub(r"\d+", "N", said))[:200],
                   location=where, frames=list(guards[0].frames) if guards else base.frames,
                   message=f"dynamic shape refused by torch.export: {said}",
                   explanation=explanation, hint="")


def axis_label(name: str, axis: int, dim: DynamicDim) -> str:
    return f"{name}.{axis} ({dim.name})"


def dynamic_dims(subject: Subject, contract: Sequence[FunctionSignature],
                 linalg: Sequence[FunctionSignature], frozen: Sequence[str] = ()) -> DynamicDims:
    """Which asked axes are ``?`` at the torch backend contract and in the linalg function's arguments
    (the model's inputs are its first arguments, in order), and the asked ones static at the
    furthest of the two reached (``linalg`` empty: not reached), with their size; none static
    when neither signature was read (the pipeline stopped before the contract)."""
    asked = {str(d): None for axes in subject.dynamic_axes for d in axes.values()}
    record = DynamicDims(asked=list(asked), frozen=list(frozen))
    names, tensors = subject.inputs.names, subject.inputs.tensors

    def dynamic_in(functions: Sequence[FunctionSignature]) -> set[tuple[int, int]]:
        return set(functions[0].dynamic) if functions else set()

    at_import, at_linalg = dynamic_in(contract), dynamic_in(linalg)
    furthest = at_linalg if linalg else at_import  # static: at the furthest level reached
    for i, axes in enumerate(subject.dynamic_axes):
        for axis, dim in sorted(axes.items()):
            label = axis_label(names[i], axis, dim)
            if (i, axis) in at_import:
                record.contract.append(label)
            if (i, axis) in at_linalg:
                record.linalg.append(label)
            if (contract or linalg) and (i, axis) not in furthest:
                record.static.append(f"{label} = {int(tensors[i].shape[axis])}")
    return record


def trace_frozen(script: torch.jit.ScriptModule, subject: Subject) -> list[str]:
    """Where a TorchScript trace froze a size it should have kept dynamic: the trace, run on the
    second set (other sizes along the dynamic dimensions), fails or returns other shapes than
    eager. Then each TracerWarning's line (a size read as a Python int), or the trace itself
    when none warned; [] when the trace follows the new shapes."""
    import torch

    from harness.models.generic import as_tuple

    expected = subject.expected(subject.second_inputs)
    try:
        with torch.no_grad():
            got = as_tuple(script(*subject.second_inputs.tensors))
        same = len(got) == len(expected) and all(
            a.shape == b.shape for a, b in zip(got, expected, strict=True))
    except Exception:  # a frozen view or expand refuses the new size
        same = False
    if same:
        return []
    return list(subject.tracer_warnings) or ["the trace (no TracerWarning named a line)"]


#: The wheel's fx_importer on a graph node it has no import for (``torch.sym_max`` of a
#: symbolic size, which torch.export writes only when a size is dynamic).
_UNIMPLEMENTED = re.compile(r"Unimplemented call_function: target=<?(?:function |built-in function )?"
                            r"([\w.]+)")
_FRAME = re.compile(r'File \\?"([^"\\]+)\\?", line (\d+)')


def import_blocker(error: BaseException) -> Blocker | None:
    """The import blocker of a dynamic port when the FX importer meets a node it does not
    import: the node's target and the model's line that made it (the innermost frame of the
    node's stack trace, which the importer's message carries); None for another error."""
    text = str(error.__cause__ or error)
    found = _UNIMPLEMENTED.search(text)
    if found is None:
        return None
    frames = [f"{path}:{line}" for path, line in reversed(_FRAME.findall(text))]
    target = found[1]
    return Blocker(rank=1, stage=PortStage.IMPORT, signature=f"{PortStage.IMPORT}: fx_importer: "
                   f"unimplemented call_function {target}", op=target,
                   location=frames[0] if frames else "", frames=frames[:8],
                   message=f"the FX importer has no import for {target} (NotImplementedError: "
                           "Unimplemented call_function)",
                   explanation=f"torch.export wrote {target} on a symbolic size because a "
                               "dimension is dynamic; the fx_importer of the pinned torch-mlir "
                               "does not import it. Leave that dimension static, or compute the "
                               "size the model's line needs without max/min of sizes.")
