"""``opt`` through the generic driver's interface, on the project's own OPT drivers.

``harness port opt`` traces what ``harness opt`` traces (``harness opt`` is that port with the
walkthrough's defaults): the stock ``OPTModel`` behind ``OPTLastHiddenState`` (:mod:`opt`) and
the static-structure ``FixedOPT`` (:mod:`opt_fixed`), with OPT's token conventions (BOS first,
left padding) and eager attention.
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import OPTModel

from harness.errors import ModelError, ModelOptionError

from . import hf_config, opt, opt_fixed
from .dynamic import DimName, DynamicSpec, other_size, resized_batch, second_step
from .generic import (
    ModelOptions,
    ModelSettings,
    PreparedModel,
    TracedModel,
    Variant,
    flatten_outputs,
)
from .hf_config import Size
from .hf_inputs import InputSet
from .hf_resolve import ModelSpec

#: Size -> the OPT driver's preset.
PRESETS = {Size.TINY: "tiny", Size.DEFAULT: "125m"}
ATTN_IMPLEMENTATION = "eager"


def prepare_opt(spec: ModelSpec, options: ModelOptions) -> PreparedModel:
    size = options.size or Size.TINY
    overrides = hf_config.check_overrides(opt.OPTConfig, options.overrides, model=spec.name)
    preset = PRESETS[size]
    config = opt.make_config(preset, overrides.values)
    model = opt.build_opt(preset, overrides.values, seed=options.seed,
                          attn_implementation=ATTN_IMPLEMENTATION)
    first_ids = opt.example_inputs(config, options.batch, options.seq, seed=options.seed)
    dynamic = options.dynamic.capped(config.max_position_embeddings)
    batch2, seq2 = _second_sizes(options, dynamic)
    pad = min(max(1, seq2 // 4), seq2 - 1)
    second_ids = opt.example_inputs(config, batch2, seq2,
                                    left_pad=(pad,) if pad else (), seed=options.seed + 1)
    names = ("input_ids", "attention_mask")
    first = InputSet(names, first_ids, f"token ids from seed {options.seed}, unpadded: "
                     "attention mask all ones")
    second = InputSet(names, second_ids, f"token ids from seed {options.seed + 1}, "
                      + (f"padded: row 0 has {pad} pad token(s) on the left (mask 0 there)"
                         if pad else "unpadded (a sequence of 1 cannot be padded)")
                      + (f", at batch {batch2} and seq {seq2} (--dynamic {dynamic})"
                         if dynamic else ""))
    module: nn.Module
    if options.variant is Variant.FIXED:
        module = opt_fixed.FixedOPT.from_hf(model)
        call = ("is the project's FixedOPT (static structure, no size queries, float-fill "
                "mask) over the OPTModel's weights; it returns the last hidden state.")
    elif options.variant is Variant.STOCK:
        module = opt.OPTLastHiddenState(model).eval()
        call = ("is harness opt's wrapper: it calls OPTModel(input_ids, attention_mask="
                "attention_mask, use_cache=False, return_dict=False) and returns element 0, the "
                "last hidden state.")
    else:  # pragma: no cover - Variant is closed
        raise ModelOptionError(f"unknown OPT variant {options.variant!r}")
    with torch.no_grad():
        outputs = tuple(n for n, _ in flatten_outputs(module(*first.tensors)))
    settings = ModelSettings(
        model=spec.name, source=spec.kind, model_type=spec.model_type,
        model_class=type(module).__name__, config_class=type(config).__name__,
        part=spec.part, size=size, overrides=dict(options.overrides),
        sizes=hf_config.sizes(config), weights=f"random (seed {options.seed})",
        attn_implementation=str(model.config._attn_implementation),
        use_cache=False, call=call, inputs=first.shapes(), first_inputs=first.description,
        second_inputs=second.description,
        outputs=("last_hidden_state",) if outputs == ("output",) else outputs,
    )
    return PreparedModel(spec, options.variant, config, model, module, first, second, settings,
                         dynamic)


def _second_sizes(options: ModelOptions, dynamic: DynamicSpec) -> tuple[int, int]:
    """(batch, seq) of the second set: other along each dimension ``--dynamic`` names, so one
    compiled module runs at two shapes. OPT's inputs are token ids and their mask: a dimension
    they do not have (height, width, an INPUT.AXIS) is refused, not ignored."""
    other = [d.name for d in dynamic.dims if d.named not in (DimName.BATCH, DimName.SEQ)]
    if other:
        raise ModelOptionError(
            f"--dynamic {','.join(other)}: OPT's driver feeds input_ids and attention_mask "
            "[batch, seq], so only batch and seq can be dynamic: drop the other dimensions.")
    seq = dynamic.get(DimName.SEQ)
    seq2 = options.seq if seq is None else other_size(options.seq, seq, second_step(DimName.SEQ))
    return resized_batch(options.batch, dynamic), seq2


def trace_opt_variant(prepared: PreparedModel, *, check_trace: bool = False) -> TracedModel:
    """Trace with the OPT drivers' own functions, so the IR equals ``harness opt``'s."""
    input_ids, attention_mask = prepared.inputs.tensors  # prepare_opt's two names
    inputs = (input_ids, attention_mask)
    if prepared.variant is Variant.FIXED:
        if not isinstance(prepared.module, opt_fixed.FixedOPT):
            raise ModelError(_not_built_here(prepared, "module", "FixedOPT"))
        traced = opt_fixed.trace_fixed(prepared.module, inputs, check_trace=check_trace)
    else:
        if not isinstance(prepared.model, OPTModel):
            raise ModelError(_not_built_here(prepared, "model", "transformers.OPTModel"))
        traced = opt.trace_opt(prepared.model, inputs,
                               opt.TraceOptions(check_trace=check_trace))
    return TracedModel(traced.module, prepared, tuple(traced.settings.sentences()),
                       traced.warnings)


def _not_built_here(prepared: PreparedModel, part: str, expected: str) -> str:
    """The paragraph for a PreparedModel that prepare_opt did not build (its parts differ)."""
    found = type(getattr(prepared, part)).__name__
    return (
        f"the OPT driver traces a {expected} as the prepared {prepared.name}'s {part}, but it "
        f"holds a {found}: trace_opt_variant takes what prepare_opt built (as harness port opt does). "
        "Prepare the model with prepare_opt, or trace it with the generic HF driver."
    )
