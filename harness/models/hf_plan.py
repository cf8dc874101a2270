"""Inputs from the model: which tensors its forward gets, at which sizes, for every modality.

The planner reads the base model's forward signature, ``main_input_name`` and config, and makes
the traced set and a second set of each kind:

- token ids (:mod:`hf_inputs`), with the model's image placeholder token repeated as many times
  as its vision tower yields (counted on the model itself, at the chosen image size);
- ``pixel_values`` [B, C, H, W], and ``pixel_mask`` (second set: a quarter of the columns of
  row 0 marked padding);
- ``input_features`` [B, mels, frames];
- ``input_values`` [B, samples] with an ``attention_mask`` where the forward takes one (second
  set: row 0's last quarter zeroed and masked; the frames computed from those samples alone are
  left out of the comparison, as padded tokens are);
- ``decoder_input_ids`` for encoder-decoders;
- ``--input NAME=SHAPE[:DTYPE]`` for what the planner cannot make.

Optional inputs it does not make (``bool_masked_pos``, noise, cached states) are left out. Where
a size is free, :func:`candidates` lists the sizes smallest first; the driver keeps the first the
model's eager forward accepts.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NoReturn

import torch

from harness.errors import UnsupportedModelError

from . import hf_inputs, hf_media, hf_series
from .choice import Choice
from .hf_inputs import InputPlan, InputSet
from .hf_media import GivenInput, positive_int
from .hf_series import SERIES_INPUTS, SeriesPlan

#: A spectrogram's own masks: ones, one per frame.
FEATURE_MASKS = ("input_features_mask", "feature_attention_mask")
AUDIO_TOKENS = ("audio_token_id", "audio_token_index")
#: Inputs made from a plan; any other forward argument is left out when optional.
MADE = ("input_ids", "attention_mask", "token_type_ids", "decoder_input_ids", "pixel_values",
        "pixel_mask", "pixel_values_videos", "input_features", "input_values", *FEATURE_MASKS,
        *SERIES_INPUTS)


#: Which of a plan's sizes an input's axis is made at (a field of :class:`MediaPlan`).
PlanSizes = Literal["seq", "pixels", "video", "features", "wave"]


class InputKind(Choice):
    """What the model reads: token ids, pixels, a spectrogram, raw audio."""

    TOKENS = "tokens"
    PIXELS = "pixels"
    FEATURES = "features"
    WAVE = "wave"
    VIDEO = "video"  # pixel_values_videos [B, frames, C, H, W]
    SERIES = "series"  # a time series' past window (and a forecaster's future one)


@dataclass(frozen=True)
class MediaPlan:
    """One candidate input set: what to make and at which sizes."""

    names: tuple[str, ...]  # in the forward's order
    text: InputPlan | None = None
    seq: int = 0
    pixels: tuple[int, ...] | None = None  # (channels, height, width), or frames first (video)
    features: tuple[int, int] | None = None  # (mel bins, frames), or (frames, mel bins)
    frames_first: bool = False  # features are (frames, mel bins)
    wave: tuple[int, ...] | None = None  # per row: (samples,) or (channels, samples)
    video: tuple[int, int, int, int] | None = None  # (frames, channels, height, width)
    series: SeriesPlan | None = None  # time series: past (and future) steps
    placeholder: int | None = None  # the image token id, inserted after each row's first token
    placeholders: int = 0  # how many
    # flattened patches (Qwen-VL-like towers): (patch input, grid input, merge size, patch width)
    patches: tuple[str, str, int, int] | None = None
    patch_layout: tuple[int, ...] = ()  # each patch's shape when not flat (C, P, P)
    given: tuple[GivenInput, ...] = ()
    # required float inputs sized from their docstring (per row: the shape after the batch)
    documented: tuple[tuple[str, tuple[int, ...]], ...] = ()
    model: Any = field(default=None, compare=False, repr=False)  # for raw audio's frame rule
    note: str = ""  # why this set, when it is a fallback


def planned_axis(plan: MediaPlan, name: str, axis: int) -> tuple[PlanSizes, int] | None:
    """Which of ``plan``'s sizes input ``name``'s ``axis`` is made at: (``seq``, 0), (``pixels``,
    i), (``features``, i) or (``wave``, i); None when the planner does not size that axis (a
    given input, a patch grid), so resizing the plan would not change it."""
    if axis == 1 and plan.text is not None and name in plan.text.names:
        return "seq", 0
    if (found := _image_axis(plan, name, axis)) is not None:
        return found
    if plan.features is not None:
        if name == "input_features" and axis in (1, 2):
            return "features", axis - 1
        if name in FEATURE_MASKS and axis == 1:
            return "features", 0 if plan.frames_first else 1
    if plan.wave is not None:
        if name == "input_values" and 1 <= axis <= len(plan.wave):
            return "wave", axis - 1
        if name == "attention_mask" and plan.text is None and axis == 1:
            return "wave", len(plan.wave) - 1
    return None


def _image_axis(plan: MediaPlan, name: str, axis: int) -> tuple[PlanSizes, int] | None:
    """:func:`planned_axis` for the images: pixels, their mask, a video's frames."""
    if plan.pixels is not None:
        if name == "pixel_values" and 1 <= axis <= len(plan.pixels):
            return "pixels", axis - 1
        if name == "pixel_mask" and axis in (1, 2):
            return "pixels", len(plan.pixels) - 3 + axis
    if plan.video is not None and name == "pixel_values_videos" and 1 <= axis <= 4:
        return "video", axis - 1
    return None


def _sizes(plan: MediaPlan, name: PlanSizes) -> tuple[int, ...]:
    sizes = {"seq": (plan.seq,), "pixels": plan.pixels, "video": plan.video,
             "features": plan.features, "wave": plan.wave}[name]
    if sizes is None:
        raise ValueError(f"this plan makes no {name} input")
    return sizes


def axis_size(plan: MediaPlan, where: tuple[PlanSizes, int]) -> int:
    """The size :func:`planned_axis` found."""
    name, index = where
    return _sizes(plan, name)[index]


def resized_axis(plan: MediaPlan, where: tuple[PlanSizes, int], size: int) -> MediaPlan:
    """``plan`` with the size :func:`planned_axis` found set to ``size``."""
    name, index = where
    sizes = list(_sizes(plan, name))
    sizes[index] = size
    if name == "seq":
        return replace(plan, seq=size)
    if name == "pixels":
        return replace(plan, pixels=tuple(sizes))
    if name == "features":
        return replace(plan, features=(sizes[0], sizes[1]))
    if name == "video":
        return replace(plan, video=(sizes[0], sizes[1], sizes[2], sizes[3]))
    return replace(plan, wave=tuple(sizes))


def forward_params(model: torch.nn.Module) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The forward's argument names, and the ones without a default."""
    params = inspect.signature(model.forward).parameters
    plain = [p for p in params.values() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    return (tuple(p.name for p in plain),
            tuple(p.name for p in plain if p.default is inspect.Parameter.empty))


def candidates(name: str, model: torch.nn.Module, config: Any, *, seq: int, decoder_only: bool,
               given: Sequence[GivenInput] = ()) -> list[MediaPlan]:
    """Input plans to try, smallest sizes first (a text-only one last where the model also reads
    token ids alone); :class:`UnsupportedModelError` naming an input nobody can make."""
    params, required = forward_params(model)
    _check_given(name, model, params, given)
    given_names = {g.name for g in given}
    doc = inspect.getdoc(model.forward)
    patches = _patches(required, config, given_names)
    documented = tuple(
        (arg, shape) for arg in required
        if arg not in MADE and arg not in given_names and arg not in (patches or ())[:2]
        and (shape := hf_media.documented_shape(doc, arg, config, seq)) is not None)
    for arg in required:
        if (arg not in MADE and arg not in given_names and arg not in (patches or ())[:2]
                and arg not in dict(documented)):
            raise hf_media.missing_input(name, model, doc, arg)
    main = getattr(model, "main_input_name", "input_ids")
    want = _wanted(params, required, main, config)
    text = _text_plan(name, params, config, decoder_only, given_names)
    base = MediaPlan(names=(), text=text, seq=seq, given=tuple(given), model=model, patches=patches,
                     documented=documented)
    if patches is not None:  # Qwen-VL-like vision towers: flat patches and their grid
        flat = replace(base, names=tuple(p for p in params if p in patches[:2] or p in given_names))
        # or each patch as an image [C, P, P], which the tower's conv reads (Kimi-K2.5)
        vision = hf_media.sub_config(config, "vision_config")
        side, channels = getattr(vision, "patch_size", None), patches[3] // max(
            1, getattr(vision, "patch_size", 1) ** 2)
        images = ([replace(flat, patch_layout=(channels, side, side))]
                  if isinstance(side, int) and channels * side * side == patches[3] else [])
        return [flat, *images]
    media = [k for k, on in want.items() if on and _input_of(k) not in given_names]
    if text is None and not media and not given and not documented:
        if main in ("input_ids", "decoder_input_ids"):  # the token planner says why (a vocabulary)
            hf_inputs.plan_inputs(name, params, config, decoder_only=decoder_only)
        expected = hf_media.expected_shape(doc, main)
        raise UnsupportedModelError(
            name, f"its base model reads '{main}'" + (f" of shape {expected}" if expected else "")
            + f", which the input planner cannot make (it makes {', '.join(MADE)})",
            f"Give it by hand with --input {main}=SHAPE[:DTYPE] (repeatable).")
    plans = [base]
    for kind in media:
        plans = [p for plan in plans for p in _sized(kind, plan, config)]
    plans = [replace(p, names=_names(p, params, given_names), placeholder=_placeholder(p, config))
             for p in plans]
    if media and text is not None and "input_ids" in text.names:
        kinds = " or ".join(k.value for k in media)
        plans.append(replace(base, names=_names(base, params, given_names),
                             note=f"text only: no {kinds} size tried ran the model"))
    return plans


def _check_given(name: str, model: torch.nn.Module, params: Sequence[str],
                 given: Sequence[GivenInput]) -> None:
    """Refuse a forward that names no inputs, and an --input that names none of them."""
    if not params:  # Bark: nn.Module's forward(*input), generation goes through sub-models
        raise UnsupportedModelError(
            name, f"{type(model).__name__}.forward names no inputs (it is not a model to call "
            "as a whole)", "Port one of its parts whose forward takes tensors, if transformers "
            "lists one as a model type.")
    unknown = [g.name for g in given if g.name not in params]
    if unknown:
        raise UnsupportedModelError(
            name, f"--input {unknown[0]} names no argument of {type(model).__name__}.forward; it "
            f"takes ({', '.join(params)})", "Give --input for one of those names.")


def _wanted(params: Sequence[str], required: Sequence[str], main: str, config: Any
            ) -> dict[InputKind, bool]:
    """Which media the planner makes: those the forward takes and the model reads (its main
    input, a required one, or a tower of that kind)."""
    vision = ("vision_config" in _sub_names(config) or hf_media.placeholder_ids(config) is not None
              or getattr(config, "image_size", None) is not None)  # ViLT: one tower, both kinds
    audio = ("audio_config" in _sub_names(config)
             or hf_media.placeholder_ids(config, AUDIO_TOKENS) is not None)
    return {
        InputKind.PIXELS: "pixel_values" in params and (
            main == "pixel_values" or "pixel_values" in required or vision),
        InputKind.FEATURES: "input_features" in params and (
            main == "input_features" or "input_features" in required or audio),
        InputKind.WAVE: "input_values" in params and (
            main == "input_values" or "input_values" in required or audio),
        InputKind.VIDEO: "pixel_values_videos" in params and (
            main == "pixel_values_videos" or "pixel_values_videos" in required),
        InputKind.SERIES: "past_values" in params,
    }


def _patches(required: Sequence[str], config: Any, given: set[str]
             ) -> tuple[str, str, int, int] | None:
    """A vision tower that takes patches already flattened, [t*h*w, C*T*P*P], with their grid
    [images, 3] (Qwen2-VL and the towers copied from it): planned at one 1 x 2m x 2m grid per
    row, m the spatial merge size, the fewest patches its merger takes."""
    patch = next((n for n in ("hidden_states", "pixel_values") if n in required), None)
    grid = next((n for n in ("grid_thw", "image_grid_thw") if n in required), None)
    vision = hf_media.sub_config(config, "vision_config")
    # towers of single images have no temporal patch (one frame each); some spell it
    # ``patch_temporal`` and the merge ``merge_size`` (MuseSpark), or a kernel (Kimi-K2.5:
    # ``merge_kernel_size`` [2, 2])
    side = positive_int(getattr(vision, "patch_size", None))
    temporal = positive_int(getattr(vision, "temporal_patch_size", None)
                            or getattr(vision, "patch_temporal", None) or 1)
    channels = positive_int(getattr(vision, "in_channels", None)
                            or getattr(vision, "num_channels", None) or 3)
    kernel = getattr(vision, "merge_kernel_size", None)
    merge = positive_int(getattr(vision, "spatial_merge_size", None)
                         or getattr(vision, "merge_size", None)
                         or (kernel[0] if isinstance(kernel, (list, tuple)) and kernel else None)
                         or 1)
    if (patch is None or grid is None or {patch, grid} & given
            or side is None or temporal is None or channels is None or merge is None):
        return None
    return (patch, grid, merge, channels * temporal * side**2)


def _sub_names(config: Any) -> tuple[str, ...]:
    return tuple(getattr(config, "sub_configs", None) or ())


def _input_of(kind: InputKind) -> str:
    return {InputKind.PIXELS: "pixel_values", InputKind.FEATURES: "input_features",
            InputKind.WAVE: "input_values", InputKind.VIDEO: "pixel_values_videos",
            InputKind.SERIES: "past_values"}[kind]


def _text_plan(name: str, params: Sequence[str], config: Any, decoder_only: bool,
               given: set[str]) -> InputPlan | None:
    """Token ids where the forward takes them (``decoder_input_ids`` alone for Whisper-like
    encoder-decoders); None without a usable vocabulary when the model reads something else."""
    takes = [p for p in ("input_ids", "decoder_input_ids") if p in params and p not in given]
    if not takes or ("input_ids" not in takes and not getattr(config, "is_encoder_decoder", False)):
        return None
    kept = [p for p in params if p not in given
            and (p != "attention_mask" or "input_ids" in takes)]
    try:
        return hf_inputs.plan_inputs(name, kept, config, decoder_only=decoder_only)
    except UnsupportedModelError:
        if getattr(config, "model_type", "") and _media_main(params):
            return None
        raise


def _media_main(params: Sequence[str]) -> bool:
    return any(p in params for p in ("pixel_values", "pixel_values_videos", "input_features",
                                     "input_values"))


def _sized(kind: InputKind, plan: MediaPlan, config: Any) -> list[MediaPlan]:
    if kind is InputKind.PIXELS:
        channels, sizes = hf_media.image_candidates(config)
        frames = getattr(hf_media.sub_config(config, "vision_config"), "num_frames", None)
        if isinstance(frames, int) and not isinstance(frames, bool) and frames > 0:  # video
            return [replace(plan, pixels=(frames, channels, h, w)) for h, w in sizes]
        return [replace(plan, pixels=(channels, h, w)) for h, w in sizes]
    if kind is InputKind.VIDEO:  # fewest frames first, then the clip's own
        channels, sizes = hf_media.image_candidates(config)
        return [replace(plan, video=(frames, channels, h, w))
                for frames in hf_media.frame_candidates(config) for h, w in sizes]
    if kind is InputKind.SERIES:
        params, _ = forward_params(plan.model)
        return [replace(plan, series=s)
                for s in hf_series.plans(config, params, inspect.getdoc(plan.model.forward))]
    if kind is InputKind.FEATURES:  # [B, mels, frames] (Whisper), else [B, frames, mels]
        mels, frames = hf_media.feature_candidates(config)
        return ([replace(plan, features=(mels, f)) for f in frames]
                + [replace(plan, features=(f, mels), frames_first=True) for f in frames])
    audio_channels = positive_int(
        getattr(hf_media.sub_config(config, "audio_config"), "audio_channels", None))
    samples = hf_media.sample_candidates(config)
    mono: list[tuple[int, ...]] = [(n,) for n in samples]
    if audio_channels is not None:  # codecs: [B, channels, samples]
        shapes = [(audio_channels, n) for n in samples] + mono
    else:  # codecs that read [B, 1, samples] without saying so (DAC, X-Codec)
        shapes = [*mono, *((1, n) for n in samples)]
    return [replace(plan, wave=s) for s in shapes]


def _names(plan: MediaPlan, params: Sequence[str], given: set[str]) -> tuple[str, ...]:
    made = set(plan.text.names if plan.text else ())
    made |= {"pixel_values"} if plan.pixels else set()
    made |= {"pixel_values_videos"} if plan.video else set()
    made |= {"pixel_mask"} if plan.pixels and "pixel_mask" in params else set()
    made |= {"input_features", *FEATURE_MASKS} if plan.features else set()
    made |= {"input_values"} if plan.wave else set()
    if plan.wave and "attention_mask" in params and plan.text is None:
        made.add("attention_mask")
    made |= hf_series.names(plan.series, tuple(params)) if plan.series else set()
    made |= {n for n, _ in plan.documented}
    return tuple(p for p in params if p in made or p in given)


def _placeholder(plan: MediaPlan, config: Any) -> int | None:
    """The image token beside pixels, else the audio token beside a spectrogram."""
    if plan.text is None or "input_ids" not in plan.text.names:
        return None
    if plan.pixels is not None:
        return hf_media.placeholder_ids(config)
    return hf_media.placeholder_ids(config, AUDIO_TOKENS) if plan.features is not None else None


# ---------------------------------------------------------------------------------------------
# Making the sets


@dataclass(frozen=True)
class _Part:
    """The tensors one kind of input adds to a set, and what the set's description says of them."""

    values: dict[str, torch.Tensor]
    said: tuple[str, ...]
    excluded: torch.Tensor | None = None  # see InputSet.padded


def make_set(plan: MediaPlan, batch: int, *, seed: int, padded: bool) -> InputSet:
    """Deterministic tensors for ``plan``; ``padded`` is the second set (see the module doc).
    The parts draw from one generator in this order, so a set is the same on every run."""
    generator = torch.Generator().manual_seed(seed)
    parts = [
        _text_part(plan, plan.text, batch, seed=seed, padded=padded)
        if plan.text is not None else None,
        _pixel_part(plan, plan.pixels, batch, generator, seed=seed, padded=padded)
        if plan.pixels is not None else None,
        _video_part(plan.video, batch, generator, seed=seed) if plan.video is not None else None,
        _feature_part(plan, plan.features, batch, generator, seed=seed)
        if plan.features is not None else None,
        _wave_part(plan, plan.wave, batch, generator, seed=seed, padded=padded)
        if plan.wave is not None else None,
        _series_part(plan.series, batch, generator, seed=seed, padded=padded)
        if plan.series is not None else None,
        _patch_part(plan.patches, plan.patch_layout, batch, generator, seed=seed)
        if plan.patches is not None else None,
        *(_Part({name: torch.randn(batch, *shape, generator=generator)},
                (f"{name} {'x'.join(map(str, shape))} per row from seed {seed} (its docstring's "
                 "shape)",))
          for name, shape in plan.documented),
        *(_Part({given.name: given.make(generator)},
                (f"{given.name} given ({'x'.join(map(str, given.shape))})",))
          for given in plan.given),
        _Part({}, (plan.note,)) if plan.note else None,
    ]
    values: dict[str, torch.Tensor] = {}
    said: list[str] = []
    excluded: torch.Tensor | None = None
    for part in parts:
        if part is not None:
            values.update(part.values)
            said += part.said
            excluded = part.excluded if part.excluded is not None else excluded
    return InputSet(plan.names, tuple(values[n] for n in plan.names), "; ".join(said),
                    padded=excluded)


def _text_part(plan: MediaPlan, text: InputPlan, batch: int, *, seed: int, padded: bool) -> _Part:
    made = hf_inputs.make_inputs(text, batch, plan.seq, seed=seed, padded=padded)
    values = made.as_kwargs()
    if plan.placeholder is None or not plan.placeholders:
        return _Part(values, (made.description,))
    _splice(values, plan.placeholder, plan.placeholders)
    kind = "image" if plan.pixels is not None else "audio"
    return _Part(values, (made.description, f"{plan.placeholders} {kind} token(s) "
                          f"{plan.placeholder} after each row's first token"))


def _pixel_part(plan: MediaPlan, pixels: tuple[int, ...], batch: int, generator: torch.Generator,
                *, seed: int, padded: bool) -> _Part:
    height, width = pixels[-2:]
    frames = f", {pixels[0]} frames" if len(pixels) == 4 else ""
    said = [f"pixels {height}x{width}{frames} from seed {seed}"]
    values = torch.randn(batch, *pixels, generator=generator)
    mask = torch.ones(batch, height, width, dtype=torch.int64)
    if padded and "pixel_mask" in plan.names:
        mask[0, :, width - max(1, width // 4):] = 0
        said.append("pixel_mask 0 on row 0's right quarter")
    return _Part({"pixel_values": values, "pixel_mask": mask}, tuple(said))


def _feature_part(plan: MediaPlan, features: tuple[int, int], batch: int,
                  generator: torch.Generator, *, seed: int) -> _Part:
    values = {"input_features": torch.randn(batch, *features, generator=generator)}
    frames = features[0 if plan.frames_first else 1]
    for name in FEATURE_MASKS:  # every frame is real
        values[name] = torch.ones(batch, frames, dtype=torch.int64)
    return _Part(values, (f"spectrogram {'x'.join(map(str, features))} from seed {seed}",))


def _wave_part(plan: MediaPlan, shape: tuple[int, ...], batch: int, generator: torch.Generator,
               *, seed: int, padded: bool) -> _Part:
    wave = torch.randn(batch, *shape, generator=generator)
    samples = shape[-1]
    mask = torch.ones(batch, samples, dtype=torch.int64)
    said = [f"{samples} audio samples from seed {seed}"]
    excluded = None
    if padded and "attention_mask" in plan.names and plan.text is None:
        pad = min(max(1, samples // 4), samples - 1)
        wave[0, ..., samples - pad:] = 0
        mask[0, samples - pad:] = 0
        said.append(f"row 0's last {pad} samples zero (mask 0)")
        excluded = _padded_frames(plan.model, mask)
    values = {"input_values": wave} if plan.text is not None else {
        "input_values": wave, "attention_mask": mask}
    return _Part(values, tuple(said), excluded)


def _patch_part(patches: tuple[str, str, int, int], layout: tuple[int, ...], batch: int,
                generator: torch.Generator, *, seed: int) -> _Part:
    """Flat patches and their grid; each patch shaped ``layout`` (C, P, P) when the tower's
    conv reads it as an image, else ``width`` values."""
    patch, grid, merge, width = patches
    side = 2 * merge
    values = {grid: torch.tensor([[1, side, side]] * batch, dtype=torch.int64),
              patch: torch.randn(batch * side * side, *(layout or (width,)), generator=generator)}
    shape = "x".join(map(str, layout)) if layout else f"{width} values"
    return _Part(values, (f"{batch} grid(s) of 1x{side}x{side} patches of {shape} from "
                          f"seed {seed}",))


def _video_part(video: tuple[int, int, int, int], batch: int, generator: torch.Generator, *,
                seed: int) -> _Part:
    frames, _, height, width = video
    return _Part({"pixel_values_videos": torch.randn(batch, *video, generator=generator)},
                 (f"video of {frames} frames {height}x{width} from seed {seed}",))


def _series_part(series: SeriesPlan, batch: int, generator: torch.Generator, *, seed: int,
                 padded: bool) -> _Part:
    values, line = hf_series.make(series, batch, generator, padded=padded)
    return _Part(values, (f"time series from seed {seed}: {line}",))


def _splice(values: dict[str, torch.Tensor], token: int, count: int) -> None:
    """Insert ``count`` placeholder tokens after each row's first real token (mask 1 there)."""
    ids, mask = values["input_ids"], values.get("attention_mask")
    rows, masks = [], []
    for row in range(ids.shape[0]):
        real = (mask[row] != 0).nonzero() if mask is not None else torch.zeros(1, 1, dtype=torch.long)
        at = int(real[0, 0]) + 1 if len(real) else 0
        block = torch.full((count,), token, dtype=ids.dtype)
        rows.append(torch.cat([ids[row, :at], block, ids[row, at:]]))
        if mask is not None:
            masks.append(torch.cat([mask[row, :at], torch.ones(count, dtype=mask.dtype),
                                    mask[row, at:]]))
    values["input_ids"] = torch.stack(rows)
    if mask is not None:
        values["attention_mask"] = torch.stack(masks)
    if "token_type_ids" in values:
        values["token_type_ids"] = torch.zeros_like(values["input_ids"])


def _padded_frames(model: Any, mask: torch.Tensor) -> torch.Tensor | None:
    """The frames of raw audio computed from padding alone: the model's own length rule, at the
    frame count an unpadded row yields."""
    lengths_of = getattr(model, "_get_feat_extract_output_lengths", None)
    if lengths_of is None:
        return None
    try:
        frames = int(torch.as_tensor(lengths_of(torch.tensor(mask.shape[-1]))))
    except Exception:  # a rule that needs more than a length: every frame is compared
        return None
    return hf_media.frame_padding(model, mask, frames)


# ---------------------------------------------------------------------------------------------
# Counting the placeholders


class _Counted(Exception):
    def __init__(self, count: int):
        self.count = count


def count_placeholders(model: torch.nn.Module, call: Callable[[InputSet], Any],
                       plan: MediaPlan, batch: int, seed: int) -> MediaPlan:
    """How many image tokens the vision tower yields at this plan's size, counted on the model:
    its ``get_placeholder_mask`` sees the image features (rows x text width); else the config's
    ``image_seq_length``. A plan without a placeholder comes back unchanged."""
    if plan.placeholder is None:
        return plan
    owner = next((m for m in model.modules() if hasattr(type(m), "get_placeholder_mask")), None)
    counted: int | None = None
    if owner is not None:
        def spy(input_ids: object = None, inputs_embeds: torch.Tensor | None = None,
                image_features: torch.Tensor | None = None, **kwargs: object) -> NoReturn:
            features = image_features if image_features is not None else next(
                (v for k, v in kwargs.items() if isinstance(v, torch.Tensor)
                 and k in ("audio_features", "image_features", "video_features")), None)
            if features is None or inputs_embeds is None:
                raise _Counted(0)
            raise _Counted(int(features.numel() // inputs_embeds.shape[-1]) // batch)

        # an instance attribute shadows the class's method for one call, then is removed
        vars(owner)["get_placeholder_mask"] = spy
        try:
            counted = _spied(call, plan, batch, seed)
        finally:
            del vars(owner)["get_placeholder_mask"]
    if not counted:
        counted = (getattr(model.config, "image_seq_length", None)
                   or _projected(model, call, plan, batch, seed))
    return replace(plan, placeholders=int(counted or 1))


def _projected(model: torch.nn.Module, call: Callable[[InputSet], Any], plan: MediaPlan, batch: int,
               seed: int) -> int | None:
    """The rows per sample that the model's ``multi_modal_projector`` yields, for a model that
    merges media features without ``get_placeholder_mask`` (Qwen2-Audio: one placeholder takes
    its "legacy" merge, which rejects a padded set; as many as the projector yields take the
    model's own path). None when it has no projector, or the call does not reach it."""
    projector = next((m for name, m in model.named_modules()
                      if name.rsplit(".", 1)[-1] == "multi_modal_projector"), None)
    if projector is None:
        return None

    def hook(_module: torch.nn.Module, _args: object, output: object) -> NoReturn:
        if not isinstance(output, torch.Tensor) or output.dim() < 2:
            raise _Counted(0)
        raise _Counted(int(output.numel() // output.shape[-1]) // batch)

    handle = projector.register_forward_hook(hook)
    try:
        return _spied(call, plan, batch, seed)
    finally:
        handle.remove()


def _spied(call: Callable[[InputSet], Any], plan: MediaPlan, batch: int, seed: int) -> int | None:
    """The count a spy raised (:class:`_Counted`) while the model ran on one placeholder; None
    when it was not reached, or the size does not run (the caller's eager run will say why)."""
    try:
        call(make_set(replace(plan, placeholders=1), batch, seed=seed, padded=False))
    except _Counted as found:
        return found.count or None
    except Exception:
        return None
    return None
