"""``--dynamic``: which input dimensions a port leaves dynamic, and where each one is.

- A named dimension (``batch``, ``seq``, ``height``, ``width``) is found on the inputs the
  planner makes: batch is axis 0 of every input; seq axis 1 of the token inputs; height and width
  the last two axes of ``pixel_values`` (axes 1 and 2 of ``pixel_mask``).
- Any other dimension is ``INPUT.AXIS=MIN..MAX`` (``input_features.2=100..3000``).
- Ranges default to :data:`harness.defaults.DYNAMIC_RANGES`; seq's max is capped at the
  model's positions (a longer one is a guard torch.export would refuse).
- The second input set differs along every dynamic dimension: larger by
  :data:`harness.defaults.DYNAMIC_SECOND_STEP` along a named one, by
  :data:`harness.defaults.DYNAMIC_CUSTOM_STEP` along a custom one (smaller when larger would
  leave the range), so one compiled module runs at two shapes.
"""

from __future__ import annotations

import logging
import re
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from harness.defaults import DYNAMIC_CUSTOM_STEP, DYNAMIC_RANGES, DYNAMIC_SECOND_STEP
from harness.errors import ModelOptionError

from .choice import Choice

if TYPE_CHECKING:  # hf_plan loads torch; the spec is parsed without it (harness --help)
    from .hf_plan import MediaPlan


class DimName(Choice):
    """The dimensions ``--dynamic`` knows by name."""

    BATCH = "batch"
    SEQ = "seq"
    HEIGHT = "height"
    WIDTH = "width"


#: The inputs whose axis 1 is the sequence.
TOKEN_INPUTS = ("input_ids", "attention_mask", "token_type_ids", "decoder_input_ids",
                "position_ids")
#: input -> (height axis, width axis).
IMAGE_AXES = {"pixel_values": (-2, -1), "pixel_mask": (1, 2)}

_ITEM = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)(?:=(?P<low>-?\d+)\.\.(?P<high>-?\d+))?$")
_USAGE = ("Write --dynamic as a comma-separated list of batch, seq, height, width, each optionally "
          "with a range NAME=MIN..MAX (seq=2..128), or any input's axis as INPUT.AXIS=MIN..MAX "
          "(input_features.2=100..3000).")


@dataclass(frozen=True)
class DynamicDim:
    """One dynamic dimension: its name, its range, and for a custom one the input axis."""

    name: str                  # batch, seq, height, width, or INPUT.AXIS
    low: int
    high: int
    named: DimName | None      # None: a custom INPUT.AXIS

    @property
    def axis(self) -> tuple[str, int] | None:
        """(input, axis) of a custom dimension."""
        if self.named is not None:
            return None
        source, _, axis = self.name.rpartition(".")
        return source, int(axis)

    def __str__(self) -> str:
        return f"{self.name}={self.low}..{self.high}"


@dataclass(frozen=True)
class DynamicSpec:
    """What ``--dynamic`` asked for; empty: every port is static."""

    dims: tuple[DynamicDim, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.dims)

    def __str__(self) -> str:
        return ",".join(map(str, self.dims))

    def get(self, name: DimName) -> DynamicDim | None:
        return next((d for d in self.dims if d.named is name), None)

    def capped(self, positions: int | None) -> DynamicSpec:
        """seq's max below the model's ``positions``: a table of that many rows sliced at
        ``[:seq]`` (GPT-Neo's causal mask, MPT's position bias) makes torch.export guard
        ``seq != positions`` (the slice's end is clamped at the table's size), so the range
        stops one short of it."""
        seq = self.get(DimName.SEQ)
        if seq is None or positions is None or seq.high < positions:
            return self
        high = max(seq.low, positions - 1)
        return DynamicSpec(tuple(replace(d, high=high) if d is seq else d for d in self.dims))


def parse_dynamic(text: str) -> DynamicSpec:
    """``batch,seq`` / ``seq=2..128`` / ``input_features.2=100..3000`` -> :class:`DynamicSpec`;
    :class:`ModelOptionError` for a bad item, a bad range or a repeated name."""
    dims: list[DynamicDim] = []
    for item in (part.strip() for part in text.split(",")):
        found = _ITEM.match(item)
        if not found:
            raise ModelOptionError(f"--dynamic item {item!r} is not a dimension. {_USAGE}")
        name = found["name"]
        named = next((d for d in DimName if d.value == name.lower()), None)
        if named is None and not re.fullmatch(r"[A-Za-z_]\w*\.\d+", name):
            raise ModelOptionError(f"--dynamic names an unknown dimension {name!r}: the named ones "
                                   f"are {', '.join(d.value for d in DimName)}. {_USAGE}")
        if found["low"] is None:
            if named is None:
                raise ModelOptionError(f"--dynamic {name} needs a range ({name}=MIN..MAX): only the "
                                       "named dimensions have default ranges.")
            low, high = DYNAMIC_RANGES[named.value]
        else:
            low, high = int(found["low"]), int(found["high"])
        if low < 1 or high <= low:
            raise ModelOptionError(f"--dynamic {item}: the range must have 1 <= MIN < MAX (a size "
                                   "of 0 is not a tensor dimension torch.export can keep dynamic, "
                                   "and a range of one size is a static one: torch.export refuses "
                                   "MIN == MAX; leave the dimension out for a static port).")
        key = named.value if named is not None else name
        if any(d.name == key for d in dims):
            raise ModelOptionError(f"--dynamic names {key} twice; give each dimension once.")
        dims.append(DynamicDim(key, low, high, named))
    return DynamicSpec(tuple(dims))


def input_axes(spec: DynamicSpec, names: tuple[str, ...],
               ranks: tuple[int, ...]) -> tuple[dict[int, DynamicDim], ...]:
    """For each input (by name and rank), the axes ``spec`` makes dynamic."""
    found: list[dict[int, DynamicDim]] = []
    for name, rank in zip(names, ranks, strict=True):
        axes: dict[int, DynamicDim] = {}
        for dim in spec.dims:
            if dim.named is DimName.BATCH and rank >= 1:
                axes[0] = dim
            elif dim.named is DimName.SEQ and name in TOKEN_INPUTS and rank >= 2:
                axes[1] = dim
            elif dim.named in (DimName.HEIGHT, DimName.WIDTH) and name in IMAGE_AXES:
                axis = IMAGE_AXES[name][0 if dim.named is DimName.HEIGHT else 1]
                axes[axis % rank] = dim
            elif dim.axis is not None and dim.axis[0] == name and dim.axis[1] < rank:
                axes[dim.axis[1]] = dim
        found.append(axes)
    return tuple(found)


def unmatched(spec: DynamicSpec, axes: tuple[dict[int, DynamicDim], ...]) -> list[str]:
    """The dimensions of ``spec`` no input has (a model without pixels asked for height)."""
    used = {d.name for a in axes for d in a.values()}
    return [d.name for d in spec.dims if d.name not in used]


def second_step(dim: DimName) -> int:
    return DYNAMIC_SECOND_STEP[dim.value]


def export_shapes(axes: tuple[dict[int, DynamicDim], ...], module: object) -> tuple:
    """``torch.export``'s ``dynamic_shapes`` for ``module``: one ``Dim`` per dimension, shared by
    its inputs; nested once when its forward takes ``*tensors`` (the drivers' TupleForward)."""
    import inspect

    from torch.export import Dim

    params = list(inspect.signature(module.forward).parameters.values())  # type: ignore[attr-defined]
    starred = len(params) == 1 and params[0].kind is inspect.Parameter.VAR_POSITIONAL

    made: dict[str, object] = {}
    for input_axes_ in axes:
        for dim in input_axes_.values():
            if dim.name not in made:
                made[dim.name] = Dim(re.sub(r"\W", "_", dim.name), min=dim.low, max=dim.high)
    shapes = tuple({axis: made[d.name] for axis, d in a.items()} or None for a in axes)
    return (shapes,) if starred else shapes


@dataclass(frozen=True)
class Guard:
    """A guard torch's shape environment added while exporting, and the Python line that asked."""

    expression: str            # Eq(s27, 8), s27 <= 512
    location: str              # FILE:LINE of the innermost frame outside torch
    frames: tuple[str, ...]    # FILE:LINE, innermost first (outside torch)


@dataclass
class SpecializationLog:
    """Records the guards torch.export adds (``torch.fx.experimental.symbolic_shapes`` logs each
    at INFO while it is added, so the Python stack at that moment is the line that asked) and the
    symbols it replaced by a constant. A context manager; torch's own handlers print nothing."""

    guards: list[tuple[Guard, frozenset[str]]] = field(default_factory=list)
    specialised: dict[str, str] = field(default_factory=dict)  # symbol -> its constant

    _LOGGER = "torch.fx.experimental.symbolic_shapes"

    def __enter__(self) -> SpecializationLog:
        import torch

        torch_dir = str(Path(torch.__file__).parent)
        log = self

        class Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                try:
                    log._seen(record.getMessage(), torch_dir)
                except Exception:  # a log line we do not understand is not an export failure
                    pass

        self._handler = Handler(logging.INFO)
        logger = logging.getLogger(self._LOGGER)
        self._saved = (logger.level, logger.propagate, list(logger.handlers))
        for handler in self._saved[2]:  # torch's stderr handler: the port prints no INFO lines
            logger.removeHandler(handler)
        logger.addHandler(self._handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
        return self

    def __exit__(self, *exc: object) -> None:
        logger = logging.getLogger(self._LOGGER)
        logger.removeHandler(self._handler)
        level, logger.propagate, handlers = self._saved
        logger.setLevel(level)
        for handler in handlers:
            logger.addHandler(handler)

    def _seen(self, message: str, torch_dir: str) -> None:
        guard = re.match(r"eval (?:\[guard suppressed\] )?(.+?) \[guard added\]", message)
        if guard:
            frames = tuple(f"{f.filename}:{f.lineno}" for f in reversed(traceback.extract_stack())
                           if not f.filename.startswith(torch_dir)
                           and f.filename not in (__file__, logging.__file__))
            self.guards.append((Guard(guard[1], frames[0] if frames else "", frames[:8]),
                                frozenset(re.findall(r"\bs\d+\b", guard[1]))))
            return
        replaced = re.match(r"set_replacement (s\d+) = (-?\d+)\b", message)
        if replaced:
            self.specialised[replaced[1]] = replaced[2]

    def culprits(self) -> list[Guard]:
        """The guards that made a dynamic symbol a constant, first the one that made each; all
        the guards naming a symbol when none specialised (a range the code narrowed)."""
        out: list[Guard] = []
        for symbol in self.specialised:
            first = next((g for g, symbols in self.guards if symbol in symbols), None)
            if first is not None and first not in out:
                out.append(first)
        if not out:
            out = [g for g, symbols in self.guards if symbols and g.location][:3]
        return out


def other_size(size: int, dim: DynamicDim, step: int) -> int:
    """The second set's size along ``dim``: ``step`` larger, or smaller when that leaves the
    range (the first set already at MAX), so the two sets differ wherever the range allows."""
    larger = min(size + step, dim.high)
    return larger if larger != size else max(size - step, dim.low)


def resized_batch(batch: int, spec: DynamicSpec) -> int:
    """The second set's batch: other by the step when batch is dynamic, within its range."""
    dim = spec.get(DimName.BATCH)
    return batch if dim is None else other_size(batch, dim, second_step(DimName.BATCH))


def resized_plan(plan: MediaPlan, spec: DynamicSpec) -> MediaPlan:
    """The planner's sizes of the second set: seq, height and width other by their step where
    dynamic, and each custom ``INPUT.AXIS`` the planner sizes by :data:`DYNAMIC_CUSTOM_STEP`
    (each within its range). A custom axis the planner does not size is left to
    :func:`differ_along`."""
    from .hf_plan import axis_size, planned_axis, resized_axis

    seq = spec.get(DimName.SEQ)
    if seq is not None and plan.text is not None:
        plan = replace(plan, seq=other_size(plan.seq, seq, second_step(DimName.SEQ)))
    if plan.pixels is not None:
        pixels = list(plan.pixels)
        for named, axis in ((DimName.HEIGHT, -2), (DimName.WIDTH, -1)):
            dim = spec.get(named)
            if dim is not None:
                pixels[axis] = other_size(pixels[axis], dim, second_step(named))
        plan = replace(plan, pixels=tuple(pixels))
    for dim in spec.dims:
        if dim.axis is None:
            continue
        where = planned_axis(plan, *dim.axis)
        if where is not None:
            size = other_size(axis_size(plan, where), dim, DYNAMIC_CUSTOM_STEP)
            plan = resized_axis(plan, where, size)
    return plan


def differ_along(spec: DynamicSpec, names: tuple[str, ...], first: tuple, second: tuple
                 ) -> tuple[tuple, list[str]]:
    """The second set's tensors, each custom ``INPUT.AXIS`` the planner left at the first set's
    size made other (its slices repeated cyclically, or the first ones kept), and what was
    changed; the second set as it is when every dynamic axis already differs."""
    import torch

    tensors = list(second)
    said: list[str] = []
    for i, axes in enumerate(input_axes(spec, names, tuple(t.dim() for t in second))):
        for axis, dim in axes.items():
            size = int(second[i].shape[axis])
            if dim.named is not None or size != int(first[i].shape[axis]):
                continue
            new = other_size(size, dim, DYNAMIC_CUSTOM_STEP)
            if new == size:
                continue
            index = torch.arange(new, device=tensors[i].device) % size
            tensors[i] = tensors[i].index_select(axis, index)
            said.append(f"{names[i]} axis {axis}: {size} -> {new} ({dim.name}; slices repeated)"
                        if new > size else f"{names[i]} axis {axis}: first {new} of {size} ({dim.name})")
    return tuple(tensors), said
