"""The seed catalog: the six idioms that broke OPT's 2022 port through torch-mlir, and their fixes.

Each idiom is a module small enough to read in one glance, written the way HF's 2022 OPT code
wrote that step (sizes read from tensors while tracing, ``torch.tensor`` fill values, ``.to``
round trips, per-layer cache tuples of views), next to the surgical fix the walkthrough applied.
The lit tests in ``lit_tests/seed/`` import both through the project's TorchScript importer
(traced, as in 2022) and through FX (``torch.export``), run the pipelines, and pin down what
torch-mlir does with them today. What is known about each (the 2022 diagnostic, the fix as a
hint, the ops and messages that point at it) lives in the torch-free ``harness.knowledge.idioms``, which
``harness explain`` matches failures against.

The line of each idiom that the diagnostic should point at ends in a "seed-idiom" marker
comment; ``harness.models.markers.marker_lines`` reads them without importing torch, and
``lit_tests/lit.cfg.py`` defines from it ``%{seed-line:NAME}`` so a test can check that a
location names exactly that line. An idiom spread over two lines marks its other line
``NAME-PART`` (``mask-to-dtype-device-dtype``).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import torch
from torch import nn

from harness.knowledge.idioms import KNOWN, KnownIdiom

from .markers import marker_lines

HEADS = 2
HEAD_DIM = 4
SEQ = 5


# --- 1. arange over a size read while tracing ---------------------------------------------
class ArangeOfTracedSize(nn.Module):
    """OPT's causal mask: ``torch.arange(mask.size(-1))``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = torch.zeros(x.size(-1), x.size(-1))
        cond = torch.arange(mask.size(-1))  # seed-idiom: arange-traced-size
        return (cond < (cond + 1).view(mask.size(-1), 1)).to(x.dtype) + x


class ArangeOfTracedSizeFixed(nn.Module):
    """The walkthrough's fix, on that line only: ``torch.arange(int(mask.size(-1)))``; ``int``
    makes the end a Python int, a constant of the trace."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = torch.zeros(x.size(-1), x.size(-1))
        cond = torch.arange(int(mask.size(-1)))
        return (cond < (cond + 1).view(mask.size(-1), 1)).to(x.dtype) + x


# --- 2. full with a tensor fill value ---------------------------------------------------------
class FullWithTensorFill(nn.Module):
    """``torch.full((t, t), torch.tensor(float("-inf")))``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.size(-1)
        # The idiom under test: torch accepts a 0-d tensor fill, its .pyi only a number.
        mask = torch.full((t, t), torch.tensor(float("-inf")))  # type: ignore[call-overload]  # seed-idiom: full-tensor-fill
        return mask.triu(1) + x


class FullWithTensorFillFixed(nn.Module):
    """The fix: a plain Python float fill value."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.size(-1)
        mask = torch.full((t, t), float("-inf"))
        return mask.triu(1) + x


# --- 3. .to(dtype) / .to(device) round trips of the causal mask --------------------------------
def _make_causal_mask(t: int, dtype: torch.dtype) -> torch.Tensor:
    """OPT's helper, ending in a ``.to(dtype)`` to the dtype the mask already has."""
    mask = torch.full((t, t), float("-inf")).triu(1)
    return mask.to(dtype)  # seed-idiom: mask-to-dtype-device-dtype


class MaskToDtypeAndDevice(nn.Module):
    """``_make_causal_mask(...)`` (its ``mask.to(dtype)``), then the caller's
    ``.to(inputs_embeds.device)``, on separate lines as in OPT: traced as ``aten::to`` overloads."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = _make_causal_mask(x.size(-1), x.dtype).to(x.device)  # seed-idiom: mask-to-dtype-device
        return mask + x


class MaskToDtypeAndDeviceFixed(nn.Module):
    """The fix: build the mask in the right dtype on the right device; no ``.to`` at all."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = x.size(-1)
        mask = torch.full((t, t), float("-inf"), dtype=x.dtype).triu(1)
        return mask + x


# --- 4. float mask turned into bool ------------------------------------------------------------
class MaskToBool(nn.Module):
    """OPT's ``_expand_mask``: the [bsz, src] mask expanded to [bsz, 1, tgt, src] and cast to
    the float dtype, inverted, then ``inverted.masked_fill(inverted.to(torch.bool), min)``."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        bsz, src_len = mask.size()
        expanded = mask[:, None, None, :].expand(bsz, 1, x.size(-2), src_len).to(x.dtype)
        inverted, lowest = 1.0 - expanded, torch.finfo(x.dtype).min
        bias = inverted.masked_fill(inverted.to(torch.bool), lowest)  # seed-idiom: mask-to-bool
        return x + bias


class MaskToBoolFixed(nn.Module):
    """The fix: compare instead of casting (``mask == 0`` is already bool)."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        padded = (mask == 0)[:, None, None, :]
        bias = torch.zeros_like(x).masked_fill(padded, torch.finfo(x.dtype).min)
        return x + bias


# --- 5. view with sizes read from a tensor ------------------------------------------------------
class ViewOfTracedSizes(nn.Module):
    """OPT attention's ``_shape``: ``tensor.view(bsz, seq_len, heads, head_dim)``."""

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        bsz, seq_len, _ = hidden.size()
        split = hidden.view(bsz, seq_len, HEADS, HEAD_DIM)  # seed-idiom: view-traced-sizes
        return split.transpose(1, 2).contiguous()


class ViewOfTracedSizesFixed(nn.Module):
    """The walkthrough's fix: ``map(int, hidden.size())`` makes the sizes trace constants."""

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        bsz, seq_len, _ = map(int, hidden.size())
        split = hidden.view(bsz, seq_len, HEADS, HEAD_DIM)
        return split.transpose(1, 2).contiguous()


# --- 6. per-layer cache tuples of contiguous views ----------------------------------------------
class _CachingLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k = nn.Linear(HEADS * HEAD_DIM, HEADS * HEAD_DIM)
        self.v = nn.Linear(HEADS * HEAD_DIM, HEADS * HEAD_DIM)

    def _shape(self, t: torch.Tensor, bsz: int, seq: int) -> torch.Tensor:
        return t.view(bsz, seq, HEADS, HEAD_DIM).transpose(1, 2).contiguous()  # seed-idiom: tuple-of-views

    def forward(self, hidden: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        bsz, seq_len, _ = hidden.size()
        key = self._shape(self.k(hidden), bsz, seq_len)
        value = self._shape(self.v(hidden), bsz, seq_len)
        out = hidden + (key + value).transpose(1, 2).reshape(hidden.shape)
        return out, (key, value)


class TupleOfViewsCache(nn.Module):
    """OPT's decoder returning ``(hidden, ((k, v), (k, v)))``: a cache of views per layer."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([_CachingLayer(), _CachingLayer()])

    def forward(self, hidden: torch.Tensor
                ) -> tuple[torch.Tensor, tuple[tuple[torch.Tensor, torch.Tensor], ...]]:
        cache: tuple[tuple[torch.Tensor, torch.Tensor], ...] = ()
        for layer in self.layers:
            hidden, present = layer(hidden)
            cache += (present,)
        return hidden, cache


class TupleOfViewsCacheFixed(nn.Module):
    """The fix (the walkthrough's way out): no cache output; one tensor, static structure."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([_CachingLayer(), _CachingLayer()])

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            hidden = layer(hidden)[0]
        return hidden


# --- The catalog --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Idiom:
    """A known idiom (``harness.knowledge.idioms``) with the modules that reproduce it and its fix."""

    known: KnownIdiom
    make: Callable[[], nn.Module]
    make_fixed: Callable[[], nn.Module]
    examples: Callable[[], tuple[torch.Tensor, ...]]

    name = property(lambda self: self.known.name)
    title = property(lambda self: self.known.title)
    seen_2022 = property(lambda self: self.known.seen_2022)
    hint = property(lambda self: self.known.hint)
    ops = property(lambda self: self.known.ops)
    messages = property(lambda self: self.known.messages)

    def source_line(self) -> tuple[str, int]:
        """The file and line of the idiom's marker comment."""
        return marker_lines()[self.name]


def _x() -> tuple[torch.Tensor, ...]:
    return (torch.randn(1, SEQ, SEQ, generator=torch.Generator().manual_seed(0)),)


def _x_mask() -> tuple[torch.Tensor, ...]:
    mask = torch.ones(2, SEQ, dtype=torch.int64)
    mask[1, :2] = 0
    return (torch.randn(2, 1, SEQ, SEQ, generator=torch.Generator().manual_seed(0)), mask)


def _hidden() -> tuple[torch.Tensor, ...]:
    return (torch.randn(2, SEQ, HEADS * HEAD_DIM, generator=torch.Generator().manual_seed(0)),)


IDIOMS: dict[str, Idiom] = {i.name: i for i in (
    Idiom(KNOWN["arange-traced-size"], ArangeOfTracedSize, ArangeOfTracedSizeFixed, _x),
    Idiom(KNOWN["full-tensor-fill"], FullWithTensorFill, FullWithTensorFillFixed, _x),
    Idiom(KNOWN["mask-to-dtype-device"], MaskToDtypeAndDevice, MaskToDtypeAndDeviceFixed, _x),
    Idiom(KNOWN["mask-to-bool"], MaskToBool, MaskToBoolFixed, _x_mask),
    Idiom(KNOWN["view-traced-sizes"], ViewOfTracedSizes, ViewOfTracedSizesFixed, _hidden),
    Idiom(KNOWN["tuple-of-views"], TupleOfViewsCache, TupleOfViewsCacheFixed, _hidden),
)}
