"""Sizes of a model's non-text inputs, read from its config: pixels, spectrogram frames, raw
audio samples; and ``--input NAME=SHAPE[:DTYPE]``, the inputs a user gives by hand.

A size the model fixes (ViT's ``image_size`` without position interpolation, Whisper's frames =
2 x ``max_source_positions``) is a candidate among smaller ones; the driver tries them smallest
first and keeps the first the model's own forward accepts (a wrong size fails at once, on tiny
weights, in milliseconds). Measured at transformers 5.24.0:

- ViT and CLIP's vision tower raise on any size but the config's; ConvNeXt, Swin, DETR take
  any size their strides divide (32 x 32 is the smallest candidate).
- Whisper's encoder raises unless frames == max_source_positions x conv1 stride x conv2 stride.
- Wav2Vec2-like models read ``conv_kernel`` / ``conv_stride``: the smallest sample count that
  leaves :data:`AUDIO_FRAMES` frames is computed, not guessed.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from harness import defaults
from harness.errors import ModelOptionError, UnsupportedModelError

#: Square image sides tried below the config's own (the config's own is tried last): 96 and 128
#: are the smallest that take an InceptionV3 stem (at least 75 px), a text-line recognizer's
#: (PP-OCRv5's) and a halo attention of blocks of 8 at stride 16; without them those ran at 224.
IMAGE_SIDES = (32, 64, 96, 128)
#: Spectrogram frame counts tried when the config fixes none.
FRAME_COUNTS = (16, 32, 64, 128)
#: Frames a raw-audio model's conv stack should leave: more than one, so the padded set leaves
#: some out and keeps others.
AUDIO_FRAMES = 4
#: Sample counts tried for raw audio when the config has no conv stack to compute from.
SAMPLE_COUNTS = (400, 800, 1600, 3200)
DEFAULT_IMAGE = 224

#: ``--input`` dtype spellings.
DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "f32": torch.float32, "float16": torch.float16,
    "f16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
    "float64": torch.float64, "f64": torch.float64, "int64": torch.int64, "i64": torch.int64,
    "int32": torch.int32, "i32": torch.int32, "bool": torch.bool,
}
USAGE = ("Write it as NAME=SHAPE[:DTYPE], e.g. --input pixel_values=1x3x32x32 or "
         "--input image_grid_thw=1x3:int64 (SHAPE: sizes joined by 'x'; DTYPE one of "
         + ", ".join(sorted({str(d).removeprefix("torch.") for d in DTYPES.values()}))
         + "; default float32).")


# ---------------------------------------------------------------------------------------------
# Inputs given by hand


@dataclass(frozen=True)
class GivenInput:
    """``--input NAME=SHAPE[:DTYPE]``: floats are drawn from a normal distribution (the seed's),
    integers and bools are ones (an all-valid mask, a grid of ones)."""

    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32

    def make(self, generator: torch.Generator) -> torch.Tensor:
        if self.dtype.is_floating_point:
            return torch.randn(self.shape, generator=generator).to(self.dtype)
        return torch.ones(self.shape, dtype=self.dtype)


def parse_given(text: str) -> GivenInput:
    """One ``--input`` value; each kind of mistake has its own message (exit 2)."""
    name, sep, rest = text.partition("=")
    name = name.strip()
    if not sep:
        raise ModelOptionError(f"--input {text!r} has no '=': it needs a name and a shape. {USAGE}")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ModelOptionError(
            f"--input {text!r}: {name!r} is not an input name (a forward argument such as "
            f"pixel_values: letters, digits and '_'). {USAGE}")
    shape_text, colon, dtype_text = rest.partition(":")
    dims = shape_text.strip().lower().split("x")
    if not shape_text.strip() or not all(re.fullmatch(r"\d+", d.strip()) for d in dims):
        raise ModelOptionError(
            f"--input {text!r}: shape {shape_text.strip()!r} is not sizes joined by 'x' (e.g. "
            f"1x3x32x32). {USAGE}")
    shape = tuple(int(d) for d in dims)
    if any(d < 1 for d in shape):
        raise ModelOptionError(
            f"--input {text!r}: every size must be at least 1, got {shape_text.strip()!r}; an "
            f"empty tensor has nothing to compare. {USAGE}")
    dtype = torch.float32
    if colon:
        key = dtype_text.strip().lower()
        if key not in DTYPES:
            raise ModelOptionError(f"--input {text!r}: unknown dtype {dtype_text.strip()!r}. {USAGE}")
        dtype = DTYPES[key]
    numel = math.prod(shape)
    mib = numel * dtype.itemsize / 2**20
    if mib > defaults.MAX_GIVEN_INPUT_MB:
        raise ModelOptionError(
            f"--input {text!r}: {numel:,} elements of {str(dtype).removeprefix('torch.')} are "
            f"{mib:,.0f} MiB, over the {defaults.MAX_GIVEN_INPUT_MB} MiB one input may take (the "
            f"port makes two sets of inputs and keeps each backend's outputs); give the shape the "
            f"model is meant to run at. {USAGE}")
    return GivenInput(name, shape, dtype)


def parse_givens(texts: Iterable[str]) -> tuple[GivenInput, ...]:
    """Every ``--input``; a name given twice is refused (which one would win?)."""
    found: dict[str, GivenInput] = {}
    for text in texts:
        given = parse_given(text)
        if given.name in found:
            raise ModelOptionError(
                f"--input gives {given.name!r} twice ({found[given.name].shape} and "
                f"{given.shape}); give each input once.")
        found[given.name] = given
    return tuple(found.values())


# ---------------------------------------------------------------------------------------------
# Reading the config


def sub_config(config: Any, *names: str) -> Any:
    """The first of ``names`` that is a sub-config (``vision_config``), else the config."""
    for name in names:
        sub = getattr(config, name, None)
        if sub is not None and hasattr(sub, "to_dict"):
            return sub
    return config


def positive_int(value: object) -> int | None:
    """``value`` when it is an int above 0 (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _pair(value: object) -> tuple[int, int] | None:
    if (side := positive_int(value)) is not None:
        return (side, side)
    if isinstance(value, (list, tuple)) and len(value) == 2:
        height, width = positive_int(value[0]), positive_int(value[1])
        if height is not None and width is not None:
            return (height, width)
    return None


def image_candidates(config: Any) -> tuple[int, list[tuple[int, int]]]:
    """Channels, and the (height, width) to try, smallest first: the config's own last (a vision
    tower's, the config's, or the tower's own backbone's: SAM2's Hiera, 1024 px, which its
    feature sizes are fixed to)."""
    vision = sub_config(config, "vision_config", "backbone_config")
    channels = positive_int(getattr(vision, "num_channels", None)) or positive_int(
        getattr(config, "num_channels", None)) or 3
    own = (_pair(getattr(vision, "image_size", None)) or _pair(getattr(config, "image_size", None))
           or _pair(getattr(vision, "img_size", None)) or _pair(getattr(vision, "crop_size", None))
           or _pair(getattr(sub_config(vision, "backbone_config"), "image_size", None)))
    sides = [(s, s) for s in IMAGE_SIDES if own is None or s * s < own[0] * own[1]]
    return channels, [*sides, own or (DEFAULT_IMAGE, DEFAULT_IMAGE)]


def frame_candidates(config: Any) -> list[int]:
    """Video frame counts, fewest first: two temporal tubelets (patches that span frames), then
    the clip's own ``num_frames`` / ``frames_per_clip``."""
    vision = sub_config(config, "vision_config")
    tubelet = getattr(vision, "tubelet_size", None)
    first = tubelet[0] if isinstance(tubelet, (list, tuple)) and tubelet else None
    step = positive_int(tubelet) or positive_int(first) or 1
    own = next((v for v in (positive_int(getattr(c, n, None)) for c in (vision, config)
                            for n in ("num_frames", "frames_per_clip")) if v), None)
    return sorted({2 * step, *([own] if own else [])})


def feature_candidates(config: Any) -> tuple[int, list[int]]:
    """Mel bins, and the frame counts to try: Whisper's fixed count (source positions x its two
    convs' stride product, 2) when the config has one, else small counts. Features of stacked
    frames are wider: Wav2Vec2-BERT's ``feature_projection_input_dim`` (2 x 80), FunASR's
    ``num_stacked_frames`` x mel bins."""
    audio = sub_config(config, "audio_config", "encoder_config")
    mels = next((v for v in (positive_int(getattr(c, n, None)) for c in (audio, config)
                             for n in ("feature_projection_input_dim", "num_mel_bins",
                                       "feature_size", "input_feat_per_channel", "n_mels"))
                 if v), 80)
    stacked = positive_int(getattr(audio, "num_stacked_frames", None))
    mels *= stacked or 1
    source = positive_int(getattr(audio, "max_source_positions", None)) or positive_int(
        getattr(config, "max_source_positions", None))
    fixed = [2 * source] if source and getattr(config, "model_type", "").startswith("whisper") else []
    return mels, fixed + [f for f in FRAME_COUNTS if f not in fixed]


def sample_candidates(config: Any) -> list[int]:
    """Raw-audio sample counts: the fewest that leave :data:`AUDIO_FRAMES` frames through the
    config's conv stack (kernel k, stride s: n frames need (n - 1) * s + k inputs), or through
    its nested patches (``patch_sizes``: a multiple of their product), else small counts to
    try."""
    audio = sub_config(config, "audio_config")
    kernels = getattr(audio, "conv_kernel", None)
    strides = getattr(audio, "conv_stride", None)
    if (isinstance(kernels, (list, tuple)) and isinstance(strides, (list, tuple)) and kernels
            and len(kernels) == len(strides) and all(positive_int(v) for v in [*kernels, *strides])):
        length = AUDIO_FRAMES
        for kernel, stride in reversed(list(zip(kernels, strides, strict=True))):
            length = (length - 1) * stride + kernel
        return [length]
    patches = getattr(audio, "patch_sizes", None)  # MuseSpark: patch of patches, per layer
    if isinstance(patches, (list, tuple)) and patches and all(positive_int(v) for v in patches):
        return [AUDIO_FRAMES * math.prod(patches)]
    return list(SAMPLE_COUNTS)


def missing_input(model_name: str, model: Any, forward_doc: str | None, arg: str
                  ) -> UnsupportedModelError:
    """The refusal of a required argument the planner cannot make: the shape its docstring gives
    and ``--input``, or, for an object that is no tensor (a video tracker's inference session),
    a part of the model to port instead."""
    forward = f"{type(model).__name__}.forward needs '{arg}'"
    kind = _not_a_tensor(model, arg)
    if kind:
        return UnsupportedModelError(
            model_name, f"{forward}, a {kind}, not a tensor", "No --input can give an object: port "
            "a part of the model whose forward takes tensors (a video tracker's image model: "
            "sam2, sam3_tracker).")
    expected = expected_shape(forward_doc, arg)
    return UnsupportedModelError(
        model_name, forward + (f" of shape {expected}" if expected else "")
        + ", which the input planner cannot make",
        f"Give it by hand with --input {arg}=SHAPE[:DTYPE] (SHAPE: sizes joined by 'x'; "
        "repeatable); floats are drawn at random, integers are ones.")


def _not_a_tensor(model: Any, name: str) -> str:
    """The class a forward's argument is annotated with when it is a class and not a tensor
    (SAM2 video's ``inference_session``: a ``Sam2VideoInferenceSession``), else ""."""
    try:
        annotation = inspect.signature(model.forward).parameters[name].annotation
    except (KeyError, TypeError, ValueError):
        return ""
    if not isinstance(annotation, type) or annotation is inspect.Parameter.empty \
            or issubclass(annotation, torch.Tensor):
        return ""
    return annotation.__name__


def expected_shape(forward_doc: str | None, name: str) -> str:
    """The shape the model's own docstring gives an input (transformers writes ``NAME
    (`torch.FloatTensor` of shape `(batch_size, ...)`)``), or ""."""
    match = re.search(rf"\b{re.escape(name)}\s*\([^)]*?of shape\s*`?(\([^`]*\))`?", forward_doc or "")
    return match.group(1) if match else ""


#: Axis names of transformers' docstring shapes that the planner can size: the batch, the text
#: length, the model width.
SEQ_AXES = ("sequence_length", "seq_length", "frames", "num_frames", "time_steps")
WIDTH_AXES = ("hidden_size", "d_model")


def documented_shape(forward_doc: str | None, name: str, config: Any, seq: int
                     ) -> tuple[int, ...] | None:
    """A float input's per-row shape from its docstring, ``(batch_size, hidden_size, frames)``
    -> (config.hidden_size, seq), where every axis after the batch is the text length or the
    model width (the latents of Mimi's decoder); else None."""
    match = re.search(rf"\b{re.escape(name)}\s*\(`?torch\.(?:Float)?Tensor`?\s+of shape\s*`?\(([^)`]*)\)",
                      forward_doc or "")
    if match is None:
        return None
    axes = [a.strip() for a in match.group(1).split(",") if a.strip()]
    if len(axes) < 2 or axes[0] not in ("batch_size", "bs"):
        return None
    width = (positive_int(getattr(config, "hidden_size", None))
             or positive_int(getattr(config, "d_model", None)))
    # a text length the config fixes: OneFormer's task_inputs are its text encoder's context (77)
    seq = positive_int(getattr(config, "text_encoder_context_length", None)) or seq
    shape: list[int] = []
    for axis in axes[1:]:
        size = seq if axis in SEQ_AXES else width if axis in WIDTH_AXES else None
        if not size:
            return None
        shape.append(size)
    return tuple(shape)


def frame_padding(model: Any, mask: torch.Tensor, frames: int) -> torch.Tensor | None:
    """[batch, frames] True at the frames a raw-audio model computes from padded samples only
    (its own ``_get_feat_extract_output_lengths`` on each row's real sample count), or None when
    the model has no such rule or nothing is padded."""
    lengths_of = getattr(model, "_get_feat_extract_output_lengths", None)
    if lengths_of is None or bool(mask.all()):
        return None
    try:
        lengths = torch.as_tensor(lengths_of(mask.sum(-1))).long()
    except Exception:  # a model whose rule needs more than the lengths: compare every frame
        return None
    padded = torch.arange(frames)[None, :] >= lengths[:, None]
    return padded if bool(padded.any()) else None


def placeholder_ids(config: Any, names: Sequence[str] = ("image_token_id", "image_token_index")
                    ) -> int | None:
    """The model's placeholder token (image by default), where its config names one."""
    for name in names:
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None
