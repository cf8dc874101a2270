"""Token inputs for any text model: the traced set, and a second set to catch frozen values.

The traced forward takes plain tensors, positionally, in :data:`INPUT_ORDER` (the names its
model's forward accepts, of those). The second set has other token ids and a padded attention
mask: a value the tracer froze (a mask shortcut taken because the traced mask was all ones, a
size read as a Python int) makes the trace disagree with eager there.

- Decoder-only models pad on the left (their tokenizers do, so generation continues the real
  tokens); encoders and encoder-decoders pad on the right.
- Token ids avoid the special ids (RoBERTa derives positions from ``input_ids != pad``); padded
  places hold the pad id, as a tokenizer writes them.
- ``token_type_ids`` only where the config has a ``type_vocab_size`` (BERT-like): zeros in the
  first set, a second segment in the second (GPT-2 also accepts the name but reads the word
  embedding with it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from harness.enums import ParsableEnum
from harness.errors import ModelOptionError, UnsupportedModelError

#: The inputs a traced forward takes, in this order, when the model's forward accepts them.
INPUT_ORDER = ("input_ids", "attention_mask", "token_type_ids", "decoder_input_ids")


class PadSide(ParsableEnum):
    LEFT = "left"
    RIGHT = "right"


@dataclass(frozen=True)
class InputSet:
    """Named tensors, in the order the traced forward takes them."""

    names: tuple[str, ...]
    tensors: tuple[torch.Tensor, ...]
    description: str  # one line for the settings: what makes this set what it is
    # [batch, positions] True at output positions computed from padding alone when they are not
    # the attention mask's own (raw audio: frames of padded samples); None: the mask decides
    padded: torch.Tensor | None = None

    def as_kwargs(self) -> dict[str, torch.Tensor]:
        return dict(zip(self.names, self.tensors, strict=True))

    def shapes(self) -> str:
        """``input_ids int64[1, 8], attention_mask int64[1, 8]``."""
        return ", ".join(f"{n} {str(t.dtype).removeprefix('torch.')}[{', '.join(map(str, t.shape))}]"
                         for n, t in zip(self.names, self.tensors, strict=True))


@dataclass(frozen=True)
class InputPlan:
    """What a family needs, decided once from its forward signature and config."""

    names: tuple[str, ...]
    pad_side: PadSide
    vocab: int
    token_low: int  # regular ids are drawn from [token_low, token_high)
    token_high: int
    pad_id: int
    bos_id: int | None  # written at the first real position (decoder-only)
    decoder_start_id: int
    type_vocab: int  # 0: no token_type_ids


def plan_inputs(model: str, params: Sequence[str], config: Any, *, decoder_only: bool) -> InputPlan:
    """Decide the input names and token ranges; :class:`UnsupportedModelError` without token ids."""
    if "input_ids" not in params and not (
            "decoder_input_ids" in params and getattr(config, "is_encoder_decoder", False)):
        shown = ", ".join(p for p in params if p not in ("self", "kwargs"))[:200]
        raise UnsupportedModelError(
            model, f"its base model takes ({shown}), not token ids",
            "Give its inputs by hand with --input NAME=SHAPE[:DTYPE] (repeatable).")
    type_vocab = getattr(config, "type_vocab_size", 0)
    type_vocab = type_vocab if isinstance(type_vocab, int) and not isinstance(type_vocab, bool) else 0
    names = tuple(n for n in INPUT_ORDER if n in params and (
        n != "token_type_ids" or type_vocab > 0) and (
        n != "decoder_input_ids" or getattr(config, "is_encoder_decoder", False)) and (
        n not in ("attention_mask", "token_type_ids") or "input_ids" in params))
    vocab = _vocab(model, config)
    special = sorted({i for i in _special_ids(config) if 0 <= i < vocab})
    low = max([i + 1 for i in special if i < vocab // 2], default=0)
    high = min([i for i in special if i >= vocab // 2], default=vocab)
    pad = _token_id(_config_value(config, "pad_token_id"), vocab)
    bos = _token_id(_config_value(config, "bos_token_id"), vocab)
    start = _token_id(getattr(config, "decoder_start_token_id", None), vocab)
    return InputPlan(
        names=names,
        pad_side=PadSide.LEFT if decoder_only else PadSide.RIGHT,
        vocab=vocab,
        token_low=low if low < high else 0,
        token_high=high if low < high else vocab,
        pad_id=pad if pad is not None else 0,
        bos_id=bos if decoder_only else None,
        decoder_start_id=start if start is not None else pad if pad is not None else 0,
        type_vocab=type_vocab,
    )


def _text(config: Any) -> Any:
    """The token tower's config: a composite's ``text_config`` (CLIP, LLaVA), else itself."""
    text = getattr(config, "text_config", None)
    return text if text is not None and hasattr(text, "to_dict") else config


def _vocab(model: str, config: Any) -> int:
    vocab = getattr(config, "vocab_size", None)
    if not isinstance(vocab, int) or vocab < 2:
        vocab = getattr(_text(config), "vocab_size", None)
    if not isinstance(vocab, int) or vocab < 2:
        # CANINE reads Unicode code points, hashed into buckets: every id is a character; the
        # planner draws them below the bucket count
        vocab = getattr(config, "num_hash_buckets", None)
    if not isinstance(vocab, int) or vocab < 2:
        raise UnsupportedModelError(model, f"its config has no usable vocab_size ({vocab!r})")
    return vocab


def _config_value(config: Any, name: str) -> object:
    """The config's own ``name`` when set, else its token tower's."""
    value = getattr(config, name, None)
    return value if value is not None else getattr(_text(config), name, None)


def _token_id(value: object, vocab: int) -> int | None:
    """``value`` when it is a row of the vocabulary, else None."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < vocab:
        return value
    return None


def _special_ids(config: Any) -> list[int]:
    """Every ``*_token_id`` / ``*_token_index`` (placeholders too) of the config and its text
    tower."""
    ids: list[int] = []
    for name, owner in [(n, c) for c in {id(config): config, id(_text(config)): _text(config)
                                         }.values() for n in dir(c)]:
        if name.endswith(("_token_id", "_token_index")) and not name.startswith("_"):
            value = getattr(owner, name, None)
            ids += [v for v in (value if isinstance(value, list) else [value])
                    if isinstance(v, int) and not isinstance(v, bool)]
    return ids


def check_shape(batch: object, seq: object, positions: int | None) -> None:
    """Reject shapes before an index error deep inside an embedding. ``batch`` and ``seq`` come
    from :class:`ModelOptions`, which a library caller may fill with anything: checked here."""
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        raise ModelOptionError(f"batch must be an integer >= 1, got {batch!r}.")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise ModelOptionError(f"sequence length must be an integer >= 1, got {seq!r}.")
    if positions is not None and seq > positions:
        raise ModelOptionError(
            f"sequence length {seq} is longer than the model's {positions} positions: its "
            "position table has no row for the later tokens. Use a shorter --seq or raise the "
            "positions field (e.g. --set max_position_embeddings=...).")


def make_inputs(plan: InputPlan, batch: int, seq: int, *, seed: int, padded: bool) -> InputSet:
    """Deterministic inputs; ``padded`` pads row 0 by a quarter of the sequence (at least one
    token, and never the whole row) on the family's side, and sets a second segment."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(plan.token_low, plan.token_high, (batch, seq), generator=generator)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    # padding shows only through a mask: without one (Whisper's decoder) the ids just differ
    pad = min(max(1, seq // 4), seq - 1) if padded and "attention_mask" in plan.names else 0
    if plan.bos_id is not None:
        ids[:, 0] = plan.bos_id
    if pad:
        where = slice(0, pad) if plan.pad_side is PadSide.LEFT else slice(seq - pad, seq)
        ids[0, where] = plan.pad_id
        mask[0, where] = 0
        if plan.bos_id is not None and plan.pad_side is PadSide.LEFT:
            ids[0, pad] = plan.bos_id
    values: dict[str, torch.Tensor] = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in plan.names:
        types = torch.zeros(batch, seq, dtype=torch.int64)
        if padded and plan.type_vocab > 1:
            types[:, seq // 2:] = 1
        values["token_type_ids"] = types
    if "decoder_input_ids" in plan.names:
        decoder = torch.randint(plan.token_low, plan.token_high, (batch, seq), generator=generator)
        decoder[:, 0] = plan.decoder_start_id
        values["decoder_input_ids"] = decoder
    what = (f"padded: row 0 has {pad} pad token(s) on the {plan.pad_side.value} (mask 0 there)"
            if pad else "unpadded: attention mask all ones" if "attention_mask" in plan.names
            else "no attention mask")
    if padded and "token_type_ids" in plan.names and plan.type_vocab > 1:
        what += ", second segment from the middle"
    return InputSet(plan.names, tuple(values[n] for n in plan.names),
                    f"token ids from seed {seed}, {what}")

