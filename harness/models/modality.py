"""What a model reads, as a porting engineer groups models: text, vision, audio, a time series,
or several.

Read from the names of the inputs the port traced (:mod:`hf_plan` makes them), so it says what
was ported, not what the config could take: a multimodal type that fell back to its text-only
set is ported as text."""

from __future__ import annotations

from collections.abc import Iterable

from harness.enums import ParsableEnum

#: Input names by what they carry (the planner's names, and the patch towers' flat inputs).
TEXT_INPUTS = frozenset({"input_ids", "decoder_input_ids", "inputs_embeds"})
VISION_INPUTS = frozenset({"pixel_values", "pixel_mask", "pixel_values_videos", "grid_thw",
                           "image_grid_thw"})
AUDIO_INPUTS = frozenset({"input_features", "input_values"})
SERIES_INPUTS = frozenset({"past_values", "future_values"})
#: Outputs that say what a model with none of the inputs above makes: an audio codec's decoder
#: (Mimi's, Pocket-TTS's) reads latents and writes audio_values.
AUDIO_OUTPUTS = frozenset({"audio_values", "waveform", "waveforms"})


class Modality(ParsableEnum):
    """A model's modality, the board's row groups in this order."""

    TEXT = "text"
    VISION = "vision"
    AUDIO = "audio"
    MULTIMODAL = "multimodal"
    TIME_SERIES = "time-series"  # forecasters: past values (and the future window)
    UNKNOWN = "unknown"  # no inputs known (a port that left no record, an old record)


def modality_of(names: Iterable[str], outputs: Iterable[str] = ()) -> Modality:
    """The modality of a forward that takes ``names``: one kind is that kind, more than one is
    multimodal (token ids with pixels, pixels with audio); with none, what its ``outputs`` are
    (a decoder of latents into audio is audio)."""
    given = set(names)
    kinds = [m for m, inputs in ((Modality.TEXT, TEXT_INPUTS), (Modality.VISION, VISION_INPUTS),
                                 (Modality.AUDIO, AUDIO_INPUTS),
                                 (Modality.TIME_SERIES, SERIES_INPUTS)) if given & inputs]
    if not kinds:
        return Modality.AUDIO if set(outputs) & AUDIO_OUTPUTS else Modality.UNKNOWN
    return kinds[0] if len(kinds) == 1 else Modality.MULTIMODAL
