"""Configs for any Hugging Face model type: the tiny preset, ``--set`` overrides, checks.

One table of field aliases serves every family: the same concept is ``num_hidden_layers`` in
Llama, ``n_layer`` in GPT-2, ``num_layers`` in T5, ``n_layers`` in MPT and DistilBERT,
``encoder_layers``/``decoder_layers`` in BART. The tiny preset sets each concept in every field
that spells it and derives the fields that depend on it (head_dim = hidden / heads, T5's d_kv,
GPT-J's rotary_dim, key/value heads, windows, GPT-Neo's layer pattern, special token ids inside
the small vocabulary).

The config class is then constructed from these keyword arguments, not patched after the fact:
transformers 5.x configs are strict dataclasses whose ``__post_init__`` derives per-layer lists
(``layer_types``, ``attention_layers``) from the layer count, and validates types, which is
where a wrong ``--set`` value is caught.

Measured at transformers 5.24.0: configs that are strict dataclasses reject an int for a float
field (``rms_norm_eps=1``), so ints are widened to floats here, where the default is a float.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import ConfigOverrideError

from .choice import Choice
from .hf_families import (
    codec_ladder,
    feature_layers,
    is_int,
    is_size,
    layer_pattern,
    mrope,
    series,
    timm_tower,
    video_clip,
)

# ---------------------------------------------------------------------------------------------
# Sizes


class Size(Choice):
    """Model size: tiny for seconds-long ports, default for the config class's own sizes."""

    TINY = "tiny"  # 2 layers, hidden 64, 4 heads: seconds to trace and lower
    DEFAULT = "default"  # the config class's own defaults (often a multi-GB model)


#: The tiny preset, per concept. Big enough to keep each structural feature (more than one layer
#: and head, grouped key/value heads, an FFN wider than hidden), small enough for seconds.
TINY: Mapping[str, int] = {
    "layers": 2,
    "hidden": 64,
    "heads": 4,
    "intermediate": 128,
    "moe_intermediate": 64,
    "experts": 4,
    "experts_per_token": 2,
    "vocab": 1024,
    "positions": 128,
    "lora_rank": 32,
    "source_positions": 64,  # Whisper's encoder: 128 spectrogram frames instead of 3000
    "horizon": 4,  # time-series forecasters without a default prediction_length
}

#: A backbone in place of timm's (DETR-like configs default to ``timm_backbone``, which needs
#: timm, and timm needs a torchvision that fits the torch build): transformers' own ResNet, one
#: block per stage, narrow.
TINY_BACKBONE: Mapping[str, Any] = {
    "model_type": "resnet", "depths": [1, 1, 1, 1], "hidden_sizes": [16, 32, 64, 128],
    "embedding_size": 16, "layer_type": "basic", "out_features": ["stage1", "stage2", "stage3",
                                                                    "stage4"],
}

#: Stage lists of hierarchical vision models (ConvNeXt, ResNet, Swin): one block per stage and
#: narrow stages keep every stage (and each downsampling) at a fraction of the weights.
TINY_STAGES: Mapping[str, Any] = {"depths": 1, "hidden_sizes": 16, "conv_dim": 64}

#: Groups of the tiny preset's concepts that a config may tie to other sizes in ways the preset
#: does not know (LayoutLMv3 concatenates 4 coordinate and 2 shape embeddings, 128 wide each, to
#: its 768 hidden; a tower's position table is sized for the other tower's patches). When the tiny
#: model's eager forward fails, the port tries again with one group at a time at the config's
#: defaults, in this order (the widths cost the most memory, so they come first only because a
#: width is the commonest tie), then with all of them: only the depth tiny.
#: Every retry also builds each sub-config from the composite config's own default for it
#: (:data:`COMPOSITE`), and the first retry does only that.
KEEPABLE: tuple[tuple[str, frozenset[str]], ...] = (
    ("sub-configs' settings", frozenset({"composite"})),
    ("widths", frozenset({"hidden", "heads", "kv_heads", "head_dim", "intermediate",
                          "moe_intermediate", "rotary_dim", "lora_rank", "composite"})),
    ("positions", frozenset({"positions", "source_positions", "window", "composite"})),
    ("vocabulary", frozenset({"vocab", "composite"})),
    ("experts", frozenset({"experts", "experts_per_token", "composite"})),
)
#: Not a size: kept, a sub-config's tiny kwargs start from the composite's default sub-config (its
#: ``sub_configs_defaults`` settings: Mask2Former's Swin backbone with 4 output stages, FunASR's
#: adaptor sized to its text tower) rather than from the sub-config class's own defaults, which a
#: sub-config given as a dict is built from. Only the retry asks for it: the preset's kwargs of the
#: types that build are as they were.
COMPOSITE = "composite"

#: Concept -> the config fields that spell it, across families.
ALIASES: Mapping[str, tuple[str, ...]] = {
    "layers": ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "num_decoder_layers", "depth",
               "num_encoder_layers", "encoder_layers", "decoder_layers"),
    "hidden": ("hidden_size", "n_embd", "n_embed", "d_model", "dim", "embed_dim", "emb_dim", "model_dim",
               "word_embed_proj_dim", "embedding_size", "projection_dim"),
    "heads": ("num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
              "decoder_attention_heads"),
    "kv_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"),
    "head_dim": ("head_dim", "d_kv", "kv_channels", "qk_rope_head_dim", "qk_nope_head_dim",
                 "v_head_dim"),
    "intermediate": ("intermediate_size", "n_inner", "ffn_dim", "d_ff", "encoder_ffn_dim",
                     "decoder_ffn_dim", "ffn_hidden_size", "projection_intermediate_size"),
    "moe_intermediate": ("moe_intermediate_size", "shared_expert_intermediate_size"),
    "experts": ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"),
    "experts_per_token": ("num_experts_per_tok", "moe_topk"),
    # BLT: its hashed n-gram table; Gemma 3n and 4: the per-layer embeddings (262,144 rows)
    "vocab": ("vocab_size", "encoder_hash_byte_group_vocab", "vocab_size_per_layer_input"),
    "positions": ("max_position_embeddings", "n_positions", "max_seq_len", "n_ctx",
                  "max_sequence_length", "original_max_position_embeddings"),
    "window": ("sliding_window", "window_size"),
    "rotary_dim": ("rotary_dim",),
    "window_layers": ("max_window_layers",),
    # Gemma 3n: its last layers reuse the key/values of earlier ones (15 of 35)
    "shared_layers": ("num_kv_shared_layers",),
    "lora_rank": ("kv_lora_rank", "q_lora_rank"),
    "source_positions": ("max_source_positions",),
}

#: Fields never overridden: set by the driver itself (and said so in the settings).
DRIVER_FIELDS = ("use_cache", "return_dict")


# ---------------------------------------------------------------------------------------------
# Reading a config class


def field_names(config_class: type) -> tuple[str, ...]:
    """Public fields of a config class: its dataclass fields, else its default instance's keys."""
    if dataclasses.is_dataclass(config_class):
        names = [f.name for f in dataclasses.fields(config_class)]
    else:
        names = list(config_class().to_dict())
    return tuple(n for n in names if not n.startswith("_"))


def defaults(config_class: type, config: Any = None) -> dict[str, Any]:
    """The default instance's values for every field (after ``__post_init__``'s derivations), or
    ``config``'s (a composite's default sub-config)."""
    config = config_class() if config is None else config
    return {name: _read(config, name) for name in field_names(config_class)}


def _read(config: Any, name: str) -> Any:
    """A field's value; None where reading it raises (a few configs guard per-layer fields)."""
    try:
        return getattr(config, name, None)
    except Exception:
        return None


def concept_of(name: str, values: Mapping[str, Any]) -> str | None:
    """The concept a field spells, or None. DistilBERT's ``hidden_dim`` is its FFN width (it
    sits beside ``dim``, the hidden size); elsewhere ``hidden_dim`` is the hidden size."""
    if name == "hidden_dim":
        return "intermediate" if is_size(values.get("dim")) else "hidden"
    return next((c for c, names in ALIASES.items() if name in names), None)


# ---------------------------------------------------------------------------------------------
# Overrides


@dataclass(frozen=True)
class Overrides:
    """``--set`` values checked against one config class, keyed by canonical field name."""

    values: Mapping[str, Any]

    def concept(self, concept: str, fields: Mapping[str, Any]) -> int | None:
        """The value the user gave for a concept, through any field that spells it."""
        for name, value in self.values.items():
            if concept_of(name, fields) == concept and is_size(value):
                return value
        return None


def check_overrides(config_class: type, raw: Mapping[str, object] | None, *,
                    model: str) -> Overrides:
    """Validate ``--set`` names and coerce values to the field's type; typed errors otherwise.

    Needed because configs accept any unknown keyword silently (``num_layer=2`` would build the
    preset's depth), and strict dataclass errors name neither the option nor the remedy.
    """
    known = field_names(config_class)
    aliases = dict(getattr(config_class, "attribute_map", {}))
    base = defaults(config_class)
    out: dict[str, Any] = {}
    for name, value in (raw or {}).items():
        if name in DRIVER_FIELDS:
            raise ConfigOverrideError(
                model, name, value, "the driver sets use_cache=False and leaves return_dict "
                "alone so that the model traces; neither can be overridden")
        field = aliases.get(name, name)
        if field not in known:
            choices = sorted(set(known) | set(aliases))
            close = difflib.get_close_matches(name, choices, n=3)
            raise ConfigOverrideError(
                model, name, value,
                f"{config_class.__name__} has no field '{name}'"
                + (f" (did you mean {', '.join(close)}?)" if close else "")
                + f"; its fields are: {', '.join(choices)}")
        out[field] = _coerce(model, name, value, base.get(field))
    return Overrides(out)


def _coerce(model: str, name: str, value: object, default: object) -> object:
    """``"2"`` -> 2 where the default is an int, 1 -> 1.0 where it is a float; else as given."""
    if isinstance(value, str) and isinstance(default, bool) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if isinstance(value, str) and default is not None and not isinstance(default, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ConfigOverrideError(
                model, name, value, f"expected {type(default).__name__} (the default is "
                f"{default!r}), got the string {value!r}") from None
    if isinstance(default, float) and is_int(value):
        return float(value)
    if default is None or value is None:
        return value
    expected = bool if isinstance(default, bool) else int if is_int(default) else type(default)
    ok = (isinstance(value, bool) if expected is bool
          else is_int(value) if expected is int
          else isinstance(value, (list, tuple)) if expected in (list, tuple)
          else isinstance(value, expected))
    if not ok:
        raise ConfigOverrideError(
            model, name, value, f"expected {expected.__name__} (the default is {default!r}), "
            f"got {type(value).__name__}")
    return value


# ---------------------------------------------------------------------------------------------
# The tiny preset


def tiny_kwargs(config_class: type, overrides: Overrides | None = None,
                keep: frozenset[str] = frozenset(), default: Any = None) -> dict[str, Any]:
    """Keyword arguments that make ``config_class`` tiny, consistent with ``overrides``.

    A concept the user set (through any field spelling it) is taken from the overrides, so
    ``--set hidden_size=128`` also moves head_dim. Fields whose default is not a positive int
    (``n_inner=None``: derived from hidden) are left for the config to derive. The concepts in
    ``keep`` (a group of :data:`KEEPABLE`) stay at the config's defaults, with every size the
    preset derives from them: the port's retry when a config ties other sizes to them in ways
    the preset does not know. ``default``: the instance whose values are the defaults (a
    composite's default sub-config) instead of the class's own.
    """
    overrides = overrides or Overrides({})
    base = defaults(config_class, default)
    want = {c: overrides.concept(c, base) or v for c, v in TINY.items()}
    kwargs: dict[str, Any] = {}
    for name, value in base.items():
        concept = concept_of(name, base)
        if concept in want and concept not in keep and is_size(value):
            kwargs[name] = min(value, want[concept]) if concept == "experts_per_token" else want[concept]
    widths = _Widths.of(base, want, keep)
    _derived(base, want, keep, widths, kwargs)
    hidden, heads = widths.hidden, widths.heads
    if widths.tiny:  # stage widths and their heads: kept with the widths
        _stages(base, kwargs)
    _stage_per_layer(base, want["layers"], kwargs)
    if widths.tiny:
        _stage_widths(base, widths.old_hidden, hidden, kwargs)
        _follow_widths(base, hidden_sizes(base), hidden, kwargs)
        _state_heads(base, hidden, heads, kwargs)
        mrope(config_class, base, widths.head_dim, kwargs)
        codec_ladder(base, hidden, kwargs)
    series(base, TINY["horizon"], kwargs)
    _default_language(base, kwargs)
    old = next((base[n] for n in ALIASES["layers"] if is_size(base.get(n))), None)
    layer_pattern(config_class, base, old, {k: v for k, v in kwargs.items() if k in ALIASES["layers"]},
                  want["layers"], kwargs)
    feature_layers(base, want["layers"], kwargs)
    if "vocab" not in keep:
        _special_tokens(base, want["vocab"], kwargs)
    timm_tower(base, kwargs)
    video_clip(base, kwargs)
    _sub_configs(config_class, kwargs, keep)
    return {**kwargs, **overrides.values}


@dataclass(frozen=True)
class _Widths:
    """The hidden size and head count the preset makes (or keeps), and the config's own."""

    hidden: int
    heads: int
    old_hidden: int | None
    old_heads: int | None
    tiny: bool  # False: the widths stay at the config's defaults, and all that follows them

    @classmethod
    def of(cls, base: Mapping[str, Any], want: Mapping[str, int], keep: frozenset[str]) -> _Widths:
        old_heads = next((base[n] for n in ALIASES["heads"] if is_size(base.get(n))), None)
        old_hidden = next((base[n] for n in ALIASES["hidden"] if is_size(base.get(n))), None)
        tiny = "hidden" not in keep
        return cls(want["hidden"] if tiny else old_hidden or want["hidden"],
                   want["heads"] if tiny else old_heads or want["heads"], old_hidden, old_heads, tiny)

    @property
    def head_dim(self) -> int:
        return max(1, self.hidden // self.heads)


def _derived(base: Mapping[str, Any], want: Mapping[str, int], keep: frozenset[str],
             widths: _Widths, kwargs: dict[str, Any]) -> None:
    """The fields the preset derives from its sizes: head sizes, key/value heads, rotary and
    window sizes, and the defaults some configs lack (a None head_dim or vocab_size)."""
    old_hidden, old_heads, heads, head_dim = (widths.old_hidden, widths.old_heads, widths.heads,
                                              widths.head_dim)
    for name, value in base.items():
        concept = concept_of(name, base)
        if concept in keep:
            continue
        if name == "head_dim" and value is None and old_heads and old_hidden:
            # Ministral, HunYuan: None by default and read as a number by the attention
            # (``head_dim ** -0.5``); the other configs derive it as hidden / heads
            kwargs[name] = head_dim
        if name == "vocab_size" and value is None:  # ESM: no default, its table needs one
            kwargs[name] = want["vocab"]
            # and no special ids either, which its forward compares the ids with: the first ids
            # (its position table pads at pad_token_id too, so they stay below the positions)
            unset = [n for n, v in base.items() if n.endswith("_token_id") and v is None]
            kwargs.update({n: i for i, n in enumerate(sorted(unset))})
        if not is_size(value):
            continue
        if name.endswith("_groups") and value == old_hidden:  # Mimi's depthwise upsampling
            kwargs[name] = widths.hidden
        if concept == "head_dim":
            kwargs[name] = head_dim
        elif concept == "kv_heads":
            # keep the kind of attention: multi-head (kv == heads), multi-query (1), grouped
            kwargs[name] = heads if value == old_heads else 1 if value == 1 else max(1, heads // 2)
        elif concept == "rotary_dim" and old_heads and old_hidden:
            share = value / (old_hidden // old_heads)
            kwargs[name] = max(2, int(head_dim * share) // 2 * 2)
        elif concept == "window":
            kwargs[name] = min(value, want["positions"])
        elif concept == "window_layers":
            kwargs[name] = min(value, want["layers"])
        elif concept == "shared_layers":  # at least one layer makes the key/values shared
            kwargs[name] = min(value, want["layers"] - 1)


def _stages(base: Mapping[str, Any], kwargs: dict[str, Any]) -> None:
    """``depths`` [3, 3, 9, 3] -> [1, 1, 1, 1]; ``hidden_sizes`` [96, ..., 768] -> [16, 32, 64,
    128] (each stage doubles, as the originals do); ``conv_dim`` at most 64 each; lists of
    another length or type are kept."""
    conv = base.get("conv_dim")  # raw-audio feature encoders: 7 convs of 512 channels
    if isinstance(conv, (list, tuple)) and conv and all(is_size(v) for v in conv):
        kwargs["conv_dim"] = [min(v, TINY_STAGES["conv_dim"]) for v in conv]
    # CvT: blocks per stage [1, 2, 10] and widths [64, 192, 384] (19.6 M parameters). Its stage
    # i reads the i-th of its own blocks' drop rates, so it keeps i + 1 blocks; a quarter of
    # each width still splits into that stage's heads.
    depth, width = base.get("depth"), base.get("embed_dim")
    if isinstance(depth, (list, tuple)) and depth and all(is_size(v) for v in depth):
        kwargs["depth"] = [min(d, max(TINY_STAGES["depths"], i + 1)) for i, d in enumerate(depth)]
        if isinstance(width, (list, tuple)) and len(width) == len(depth) and all(is_size(w) for w in width):
            kwargs["embed_dim"] = [max(1, w // 4) if w % 4 == 0 else w for w in width]
    depths, widths = base.get("depths"), base.get("hidden_sizes")
    if not (isinstance(depths, (list, tuple)) and depths and all(is_size(v) for v in depths)):
        return
    kwargs["depths"] = [min(d, TINY_STAGES["depths"]) for d in depths]
    heads = base.get("num_heads")  # Swin: a head count per stage, 3 of which 64 does not split
    if isinstance(heads, (list, tuple)) and len(heads) == len(depths) and all(is_size(h) for h in heads):
        kwargs["num_heads"] = [TINY["heads"]] * len(heads)
    if (isinstance(widths, (list, tuple)) and len(widths) == len(depths)
            and all(is_size(v) for v in widths)):
        kwargs["hidden_sizes"] = [min(w, TINY_STAGES["hidden_sizes"] << i)
                                  for i, w in enumerate(widths)]
        # BiT's group norms (32 groups) split every channel count, down to a bottleneck's
        # quarter of the narrowest stage
        groups = base.get("num_groups")
        if is_size(groups) and groups > TINY_STAGES["hidden_sizes"] // 4:
            kwargs["num_groups"] = TINY_STAGES["hidden_sizes"] // 4
        # PVT, SegFormer, GLPN: a head count per stage that must divide that stage's width
        # ([1, 2, 5, 8] over [64, 128, 320, 512]): the most heads up to the original that
        # divide the narrow width
        stage_heads = base.get("num_attention_heads")
        if (isinstance(stage_heads, (list, tuple)) and len(stage_heads) == len(depths)
                and all(is_size(h) for h in stage_heads)):
            kwargs["num_attention_heads"] = [
                max(d for d in range(1, h + 1) if w % d == 0)
                for h, w in zip(stage_heads, kwargs["hidden_sizes"], strict=True)]


def _default_language(base: Mapping[str, Any], kwargs: dict[str, Any]) -> None:
    """X-MOD's adapters: one per language, none chosen by default (its forward refuses): the first."""
    languages = base.get("languages")
    if base.get("default_language", "") is None and isinstance(languages, (list, tuple)) and languages:
        kwargs["default_language"] = languages[0]


def _stage_per_layer(base: Mapping[str, Any], layers: int, kwargs: dict[str, Any]) -> None:
    """Stage lists that are one entry per layer (MuseSpark's audio and vision towers: as many
    ``depths``, ``hidden_sizes`` and ``patch_sizes`` as ``num_hidden_layers``, its validator
    checks) keep their first entries, one per tiny layer."""
    depths = base.get("depths")
    old = next((base[n] for n in ALIASES["layers"] if is_size(base.get(n))), None)
    if not (isinstance(depths, (list, tuple)) and old == len(depths) > layers):
        return
    for name in ("depths", "hidden_sizes", "patch_sizes", "num_heads"):
        value = kwargs.get(name, base.get(name))
        if isinstance(value, (list, tuple)) and len(value) == old:
            kwargs[name] = list(value)[:layers]


def _stage_widths(base: Mapping[str, Any], old: int | None, hidden: int,
                  kwargs: dict[str, Any]) -> None:
    """Widths per stage that start at the hidden size (Hiera's ``embed_dim_per_stage`` [96, 192,
    384, 768] under SAM2), or that add up to it (Reformer's ``axial_pos_embds_dim`` (64, 192),
    concatenated to its 256 hidden), scale with it: [64, 128, 256, 512], [16, 48]."""
    for name, value in base.items():
        if (old and name not in kwargs and ("dim" in name or "hidden" in name)
                and isinstance(value, (list, tuple)) and len(value) > 1
                and all(is_size(v) for v in value) and old in (value[0], sum(value))
                and all(v * hidden % old == 0 for v in value)):
            kwargs[name] = [v * hidden // old for v in value]


def hidden_sizes(fields: Mapping[str, Any]) -> set[int]:
    """Every hidden width a config's defaults spell."""
    return {v for n, v in fields.items() if concept_of(n, fields) == "hidden" and is_size(v)}


def _follow_widths(fields: Mapping[str, Any], widths: set[int], hidden: int,
                   kwargs: dict[str, Any]) -> None:
    """A width no concept names (WavTokenizer's ``codebook_dim``, a projector's
    ``out_hidden_size``, a flow head's ``condition_dim``, SAM's ``output_channels``) whose
    default is one of ``widths`` (the config's hidden sizes, or a sibling tower's) takes the tiny
    hidden size: the configs' validators require them equal, as their defaults are (Dots3's audio
    ``adapter_input_size`` too)."""
    for name, value in fields.items():
        if (name not in kwargs and concept_of(name, fields) is None and is_size(value)
                and value in widths and value > hidden and not name.startswith(("num_", "max_"))
                and ("hidden" in name or name.endswith(("_dim", "_channels", "_input_size")))):
            kwargs[name] = hidden


def _state_heads(base: Mapping[str, Any], hidden: int, heads: int, kwargs: dict[str, Any]) -> None:
    """Mamba2: its SSM heads span ``expand`` x hidden (heads x head_dim == expand x hidden, its
    validator checks): the tiny head_dim keeps that."""
    expand, old_heads, old_dim = base.get("expand"), base.get("num_heads"), base.get("head_dim")
    old_hidden = base.get("hidden_size")
    if (is_size(expand) and is_size(old_heads) and is_size(old_dim) and is_size(old_hidden)
            and old_heads * old_dim == expand * old_hidden and kwargs.get("num_heads") == heads):
        kwargs["head_dim"] = max(1, expand * hidden // heads)
        groups = base.get("n_groups")  # heads are shared by groups: as many groups as divide them
        if is_size(groups) and heads % groups:
            kwargs["n_groups"] = max(g for g in range(1, heads + 1) if heads % g == 0 and g <= groups)


def _special_tokens(base: Mapping[str, Any], vocab: int, kwargs: dict[str, Any]) -> None:
    """Move ``*_token_id`` values (and placeholders' ``*_token_index``: LLaVA's image token is
    32000) outside the small vocabulary to its last ids (an embedding's padding_idx must be a row
    of the table); equal ids stay equal."""
    ids = {n: v for n, v in base.items()
           if n.endswith(("_token_id", "_token_index")) and v is not None}
    outside = sorted({i for v in ids.values() for i in (v if isinstance(v, list) else [v])
                      if is_int(i) and i >= vocab})
    remap = {old: vocab - 1 - k for k, old in enumerate(outside)}
    for name, value in ids.items():
        if isinstance(value, list):
            new = [remap.get(i, i) for i in value]
        else:
            new = remap.get(value, value)
        if new != value:
            kwargs[name] = new


def _sub_configs(config_class: type, kwargs: dict[str, Any], keep: frozenset[str]) -> None:
    """Composite configs (a text and a vision tower) get each sub-config tiny too. A sub-config
    typed ``AutoConfig`` (LLaVA's text_config) is whatever the composite's default holds (a
    full-size Llama: 18 GB to build), so its default's class is made tiny, under its model_type."""
    defaults_of: list[Any] = []  # the composite's default instance, built once when needed
    built: dict[str, type] = {}  # sub-config name -> the class its tiny kwargs are for
    own_default: dict[str, Any] = {}  # sub-config name -> the composite's default sub-config
    owns: dict[str, dict[str, Any]] = {}  # ... and its settings, under the tiny sizes
    specs = getattr(config_class, "sub_configs_defaults", None) or {}
    for name, sub in (getattr(config_class, "sub_configs", None) or {}).items():
        if not isinstance(sub, type):
            continue
        try:
            own = getattr(specs.get(name), "init_kwargs", None) or {}
            if COMPOSITE in keep and own:
                defaults_of[:] = defaults_of or [config_class()]
                default = getattr(defaults_of[0], name)
                kwargs[name] = _own_sub_config(sub, default, keep)
                built[name], own_default[name], owns[name] = type(default), default, own
                continue
            if sub.__name__ != "AutoConfig":
                kwargs[name] = tiny_kwargs(sub, keep=keep)
                built[name] = sub
                continue
            if not defaults_of:
                defaults_of.append(config_class())
            default = getattr(defaults_of[0], name, None)
            model_type = getattr(default, "model_type", None)  # None when default is None
            if model_type == "timm_backbone":  # DETR: timm's ResNet-50
                kwargs[name] = dict(TINY_BACKBONE)
                continue
            if isinstance(model_type, str) and model_type:
                kwargs[name] = {"model_type": model_type, **tiny_kwargs(type(default), keep=keep)}
                built[name] = type(default)
        except Exception:  # a sub-config that cannot be built on its own keeps its default
            continue
    # widths that must agree across towers (a projector's output is the text tower's width)
    fields = {name: defaults(cls, own_default.get(name)) for name, cls in built.items()}
    widths = hidden_sizes(defaults(config_class)).union(*map(hidden_sizes, fields.values()))
    for name, values in fields.items():
        if "hidden" not in keep:
            _follow_widths(values, widths, TINY["hidden"], kwargs[name])
        kwargs[name] = {**owns.get(name, {}), **kwargs[name]}  # the composite's own, beneath
    # a neck's channel list read off the backbone's stage widths (SAM2's backbone_channel_list
    # [768, 384, 192, 96]): the same stages' tiny widths
    scaled = {old: new for name, values in fields.items() for field, value in values.items()
              if isinstance(value, (list, tuple)) and isinstance(kwargs[name].get(field), list)
              and len(value) == len(kwargs[name][field])
              for old, new in zip(value, kwargs[name][field], strict=True)
              if is_size(old) and old != new}
    for field, value in defaults(config_class).items():
        if (field not in kwargs and ("channel" in field or "dim" in field) and scaled
                and isinstance(value, (list, tuple)) and len(value) > 1
                and all(is_int(v) and v in scaled for v in value)):
            kwargs[field] = [scaled[v] for v in value]


def _own_sub_config(sub: type, default: Any, keep: frozenset[str]) -> dict[str, Any]:
    """A sub-config's tiny kwargs read off the composite's default for it (:data:`COMPOSITE`)."""
    model_type = {"model_type": default.model_type} if sub.__name__ == "AutoConfig" else {}
    return {**model_type, **tiny_kwargs(type(default), keep=keep, default=default)}


# ---------------------------------------------------------------------------------------------
# Consistency


def check_consistency(config: Any, *, model: str) -> None:
    """Reject head counts the model would fail on at its first forward, naming the fields."""
    values = {n: _read(config, n) for n in field_names(type(config))}
    heads = next(((n, values[n]) for n in ALIASES["heads"] if is_size(values.get(n))), None)
    kv = next(((n, values[n]) for n in ALIASES["kv_heads"] if is_size(values.get(n))), None)
    hidden = next(((n, values[n]) for n in ALIASES["hidden"] if is_size(values.get(n))), None)
    has_head_dim = any(is_size(values.get(n)) for n in ALIASES["head_dim"])
    if heads and kv and heads[1] % kv[1]:
        raise ConfigOverrideError(
            model, kv[0], kv[1], f"{heads[0]} ({heads[1]}) must be a multiple of {kv[0]} "
            f"({kv[1]}): each key/value head serves a whole group of query heads")
    if heads and hidden and not has_head_dim and hidden[1] % heads[1]:
        raise ConfigOverrideError(
            model, hidden[0], hidden[1], f"{hidden[0]} ({hidden[1]}) must be divisible by "
            f"{heads[0]} ({heads[1]}): each head gets {hidden[0]} / {heads[0]} channels")


def sizes(config: Any) -> dict[str, int]:
    """The concept sizes of a built config, for the settings line and for tests."""
    values = {n: _read(config, n) for n in field_names(type(config))}
    found: dict[str, int] = {}
    for name, value in values.items():
        concept = concept_of(name, values)
        if concept and is_size(value):
            found[concept] = max(found.get(concept, 0), value)
    return found
