"""The tiny preset's rules for single families (forecasters, multimodal rotary sections, timm
towers, video tubelets, codec ladders), and the size predicates every rule reads: kept apart
from :mod:`hf_config`'s general rules so that each stays readable on its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

#: The channel multiplier of a timm-built tower (transformers' TimmWrapperConfig: a timm
#: ``architecture`` and its ``model_args``), where timm's builder takes one: the config's sizes do
#: not reach timm, so Gemma 3n's MobileNetV5 stayed at 294 M parameters (a 1.2 GB module, minutes
#: to execute); at 1/8 it has 16 M.
TINY_TIMM_CHANNELS = 0.125


def is_size(value: object) -> TypeGuard[int]:
    """A positive int that is not a bool: the only values the tiny preset replaces."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def is_int(value: object) -> TypeGuard[int]:
    """An int that is not a bool (a TypeGuard, not a TypeIs: a bool fails it yet is an int)."""
    return isinstance(value, int) and not isinstance(value, bool)


def series(base: Mapping[str, Any], horizon_default: int, kwargs: dict[str, Any]) -> None:
    """Forecasters with no default horizon (Autoformer, Informer, TimeSeriesTransformer:
    ``prediction_length=None``, which their model refuses to build on; ``context_length``
    follows it) get :data:`TINY`'s; Autoformer's decoder starts from the context's last
    ``label_length`` steps (10 by default), so that is at most the context. No time features
    (their default) would trace a zero-width input: one, as a calendar feature would be."""
    if "prediction_length" not in base:
        return
    horizon = base["prediction_length"]
    if horizon is None:
        kwargs["prediction_length"] = horizon = horizon_default
    context = base.get("context_length") or horizon
    if is_size(base.get("label_length")) and is_size(context):
        kwargs["label_length"] = min(base["label_length"], context)
    if base.get("num_time_features") == 0:
        kwargs["num_time_features"] = 1


def mrope(config_class: type, base: Mapping[str, Any], head_dim: int,
           kwargs: dict[str, Any]) -> None:
    """Multimodal rotary sections (Qwen2-VL's default [16, 24, 24], for time, height and width)
    must sum to half the rotated size: the same shares of the tiny head's half (GLM-4V rotates
    half of each head, ``partial_rotary_factor`` 0.5). An empty default (Cohere Compass's, whose
    parameters are per layer type) gets none: a section alone is no valid rope dict there."""
    rope = base.get("rope_parameters")
    if ("mrope_section" not in getattr(config_class, "ignore_keys_at_rope_validation", ())
            or not isinstance(rope, dict) or not rope):
        return
    share = rope.get("partial_rotary_factor", base.get("partial_rotary_factor"))
    share = share if isinstance(share, float) and 0 < share <= 1 else 1.0
    half = max(3, int(head_dim * share) // 2)
    time = max(1, half // 4)
    height = (half - time) // 2
    kwargs["rope_parameters"] = {**rope, "mrope_section": [time, height, half - time - height]}


def timm_tower(base: Mapping[str, Any], kwargs: dict[str, Any]) -> None:
    """A timm-built tower takes timm's channel multiplier (:data:`TINY_TIMM_CHANNELS`) when its
    builder accepts one (MobileNet and EfficientNet families), checked by building it on the meta
    device (no memory, no weights); other architectures, or no timm, keep their model_args."""
    architecture, args = base.get("architecture"), base.get("model_args")
    if not isinstance(architecture, str) or "model_args" not in base or not isinstance(args, dict | None):
        return
    tiny = {**(args or {}), "channel_multiplier": TINY_TIMM_CHANNELS}
    try:
        import importlib

        import torch

        timm = importlib.import_module("timm")  # the [vision] extra: no stubs in CI's venv
        with torch.device("meta"):
            timm.create_model(architecture, pretrained=False, num_classes=0, **tiny)
    except Exception:  # any refusal (an unknown argument, no timm) keeps the default
        return
    kwargs["model_args"] = tiny


def video_clip(base: Mapping[str, Any], kwargs: dict[str, Any]) -> None:
    """A video tower with [frames, h, w] tubelets and a position table fixed by ``image_size`` and
    ``num_frames`` (VideoPrism: 16 of 288 px) is two tubelets long and wide (it ran past 900 s)."""
    tubelet = base.get("tubelet_size")
    if not (isinstance(tubelet, list | tuple) and len(tubelet) == 3 and all(is_size(t) for t in tubelet)
            and is_size(base.get("image_size")) and is_size(base.get("num_frames"))):
        return
    frames, height, width = tubelet
    if height == width:
        kwargs["image_size"] = 2 * height
        kwargs["num_frames"] = 2 * frames


def codec_ladder(base: Mapping[str, Any], hidden: int, kwargs: dict[str, Any]) -> None:
    """A codec whose encoder doubles its width at each of its ``downsampling_ratios`` and whose
    decoder halves it at each upsampling reaches the tiny hidden width at the encoder's end: DAC
    (``encoder_hidden_size`` 64 -> 1024, 300 MB of weights), EnCodec, Mimi and VibeVoice
    (``num_filters``; VibeVoice's 32 -> 2048 channels, 172 M parameters, 30 s to execute)."""
    down = base.get("downsampling_ratios")
    up = base.get("upsampling_ratios") or down  # DAC's is no field: it reverses downsampling's
    filters, ratios = base.get("num_filters"), down or up  # at least 4 in the first stage
    if is_size(filters) and isinstance(ratios, list | tuple) and ratios and "num_filters" not in kwargs:
        kwargs["num_filters"] = min(filters, max(4, hidden // 2 ** len(ratios)))
    encoder, decoder = base.get("encoder_hidden_size"), base.get("decoder_hidden_size")
    if not (isinstance(down, list | tuple) and down and isinstance(up, list | tuple) and up
            and is_size(encoder) and is_size(decoder)) \
            or {"encoder_hidden_size", "decoder_hidden_size"} & kwargs.keys():  # sized already
        return
    kwargs["encoder_hidden_size"] = min(encoder, max(1, hidden // 2 ** len(down)))
    kwargs["decoder_hidden_size"] = min(decoder, max(hidden, 2 ** len(up)))


def layer_pattern(config_class: type, base: Mapping[str, Any], old: int | None,
                  depth: Mapping[str, int], layers: int, kwargs: dict[str, Any]) -> None:
    """GPT-Neo's ``attention_types`` is ``[[pattern, repeats]]`` and must cover every layer.
    A per-layer kind list given in full (Zamba's ``layers_block_type``, one per default layer)
    must be as long as the tiny depth: each kind once, in order of first use, then the first.
    So must ``mlp_layer_types`` where the config does not derive it from the depth (Dots3's
    vision tower derives it, and the experts per layer, from a 42-entry list whatever its
    depth): the config at the tiny depth alone tells."""
    for name in ("layers_block_type", "mlp_layer_types"):  # layer_types: the config derives it
        kinds = base.get(name)
        if (isinstance(kinds, (list, tuple)) and old and len(kinds) == old > layers
                and all(isinstance(k, str) for k in kinds)
                and (name != "mlp_layer_types" or not _derives(config_class, name, layers, depth))):
            distinct = list(dict.fromkeys(kinds))
            kwargs[name] = (distinct + list(kinds))[:layers]
    types = base.get("attention_types")
    if isinstance(types, list) and types and isinstance(types[0], list) and len(types[0]) == 2:
        pattern = list(types[0][0])
        kwargs["attention_types"] = [[pattern[:layers], max(1, layers // len(pattern))]]


def feature_layers(base: Mapping[str, Any], layers: int, kwargs: dict[str, Any]) -> None:
    """Layers a projector reads the vision tower's features from, by index (Molmo2's adapter:
    [24, 18] of 25, which its validator checks against the tower's depth): the tiny tower's
    last layers, deepest first as in the default ([1, 0])."""
    chosen = base.get("vision_feature_layer")
    if (isinstance(chosen, list) and chosen and all(is_int(v) and v >= 0 for v in chosen)
            and max(chosen) >= layers):
        order = sorted(set(chosen), reverse=True)
        kwargs["vision_feature_layer"] = [max(0, layers - 1 - order.index(v)) for v in chosen]


def _derives(config_class: type, name: str, layers: int, depth: Mapping[str, int]) -> bool:
    """Whether the config, given the tiny depth alone, makes its list ``name`` that long."""
    try:
        return len(getattr(config_class(**depth), name)) == layers
    except Exception:
        return False
