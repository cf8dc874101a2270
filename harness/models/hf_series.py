"""Time-series inputs: a window of past values, its time features and observed mask, and the
future window an encoder-decoder forecaster's decoder reads.

Read from the config and the forward's docstring (transformers 5.24.0):

- Autoformer, Informer, TimeSeriesTransformer: ``past_values`` [B, T] (or [B, T, input_size])
  with T = ``context_length`` + the largest of ``lags_sequence`` (the lags look back before the
  context); ``past_time_features`` [B, T, ``num_time_features`` + ``num_dynamic_real_features``];
  ``past_observed_mask``; the decoder's ``future_values`` [B, ``prediction_length``] and
  ``future_time_features``.
- PatchTST, PatchTSMixer: ``past_values`` [B, ``context_length``, ``num_input_channels``] (their
  patchifier raises on any other length), and an optional observed mask.
- TimesFM: ``past_values`` [B, T] cut into patches of ``patch_length`` (T a multiple of it, at
  most ``context_length``), ``past_values_padding`` (1 at padded steps) and ``freq`` [B, 1].

The second set marks row 0's first quarter of the past as unobserved (mask 0) or padded
(padding 1): a frozen mask shortcut shows there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import torch

from .hf_config import is_size

#: Every input this module makes.
SERIES_INPUTS = ("past_values", "past_time_features", "past_observed_mask", "observed_mask",
                 "past_values_padding", "freq", "future_values", "future_time_features")
#: Masks of observed steps: 1 where a value was observed.
OBSERVED = ("past_observed_mask", "observed_mask")
#: Lengths tried where the config fixes none (no context length, no patch).
LENGTHS = (8, 16, 32)


@dataclass(frozen=True)
class SeriesPlan:
    """The sizes of one candidate set of time-series inputs."""

    length: int  # past steps
    channels: int  # values per step: 0 for [B, T], else [B, T, channels]
    horizon: int  # future steps the decoder reads (0: no future inputs)
    features: int  # time features per step
    dtypes: tuple[tuple[str, torch.dtype], ...] = ()  # per input, from its docstring

    def dtype(self, name: str) -> torch.dtype:
        return dict(self.dtypes).get(name, torch.float32)


def plans(config: Any, params: tuple[str, ...], doc: str | None) -> list[SeriesPlan]:
    """Candidate sizes, smallest first."""
    context = getattr(config, "context_length", None)
    lags = getattr(config, "lags_sequence", None)
    patch = getattr(config, "patch_length", None)
    if is_size(context) and isinstance(lags, (list, tuple)) and lags and all(is_size(v) for v in lags):
        lengths = [context + max(lags)]
    elif is_size(patch) and is_size(context) and "past_values_padding" in params:
        lengths = sorted({n for n in (patch, 2 * patch, context) if n <= context})
    elif is_size(context):
        lengths = [context]
    else:
        lengths = list(LENGTHS)
    channels = next((int(v) for v in (getattr(config, n, None)
                                      for n in ("num_input_channels", "input_size"))
                     if is_size(v)), 1)
    three = channels > 1 or len(_axes(doc, "past_values")) >= 3
    own = getattr(config, "prediction_length", None)
    horizon = own if ("future_values" in params and getattr(config, "is_encoder_decoder", False)
                      and is_size(own)) else 0
    features = sum(v for v in (getattr(config, n, 0) for n in ("num_time_features",
                                                               "num_dynamic_real_features"))
                   if is_size(v)) if "past_time_features" in params else 0
    dtypes = tuple((n, d) for n in SERIES_INPUTS if n in params and (d := _dtype(doc, n)) is not None)
    return [SeriesPlan(n, channels if three else 0, horizon, features, dtypes) for n in lengths]


def names(plan: SeriesPlan, params: tuple[str, ...]) -> set[str]:
    """The inputs of ``params`` this plan makes: the future ones only with a horizon."""
    made = {"past_values", "past_time_features", *OBSERVED, "past_values_padding", "freq"}
    if plan.horizon:
        made |= {"future_values", "future_time_features"}
    return {p for p in params if p in made}


def make(plan: SeriesPlan, batch: int, generator: torch.Generator, *, padded: bool
         ) -> tuple[dict[str, torch.Tensor], str]:
    """The tensors of every input this module makes (the caller keeps the forward's), and one
    line saying what they are."""
    def steps(count: int) -> tuple[int, ...]:
        return (batch, count, plan.channels) if plan.channels else (batch, count)

    length = plan.length
    values = {"past_values": torch.randn(steps(length), generator=generator),
              "past_time_features": torch.randn(batch, length, plan.features, generator=generator)}
    observed = torch.ones(steps(length))
    padding = torch.zeros(batch, length)
    said = f"{length} past steps" + (f" of {plan.channels} channels" if plan.channels else "")
    if padded:
        quarter = max(1, length // 4)
        observed[0, :quarter] = 0
        padding[0, :quarter] = 1
        said += f"; row 0's first {quarter} steps unobserved (mask 0) or padded (padding 1)"
    for name in OBSERVED:
        values[name] = observed.to(plan.dtype(name))
    values["past_values_padding"] = padding.to(plan.dtype("past_values_padding"))
    values["freq"] = torch.zeros(batch, 1, dtype=torch.int64)  # the first frequency class
    if plan.horizon:
        values["future_values"] = torch.randn(steps(plan.horizon), generator=generator)
        values["future_time_features"] = torch.randn(batch, plan.horizon, plan.features,
                                                     generator=generator)
        said += f", {plan.horizon} future steps"
    return values, said + (f", {plan.features} time feature(s) per step" if plan.features else "")


def _axes(doc: str | None, name: str) -> list[str]:
    match = re.search(rf"\b{re.escape(name)}\s*\([^)]*?of shape\s*`?\(([^)`]*)\)", doc or "")
    return [a.strip() for a in match.group(1).split(",")] if match else []


def _dtype(doc: str | None, name: str) -> torch.dtype | None:
    """``torch.BoolTensor`` -> bool, ``torch.LongTensor`` -> int64 in the input's docstring."""
    match = re.search(rf"\b{re.escape(name)}\s*\(`?torch\.(\w*)Tensor", doc or "")
    kinds = {"Bool": torch.bool, "Long": torch.int64, "Float": torch.float32, "": torch.float32}
    return kinds.get(match.group(1)) if match else None
