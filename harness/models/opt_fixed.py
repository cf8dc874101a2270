"""The harness's own "surgically fixed" OPT: HF OPTModel's inference forward with static structure.

The 2022 walkthrough ends by concluding that HF's OPT has to be rewritten so that its branches
become structure: variable-length output tuples, tensor-valued sizes, ``.to`` round trips and a
causal mask built with ``torch.tensor(float("-inf"))`` each broke a torch-mlir lowering. This is
that rewrite, written from OPT's math rather than copied from HF:

- one path only: decoder-only, pre-layer-norm (``do_layer_norm_before=True``), no KV cache, no
  attention weights out, no dropout (inference); it returns the last hidden state tensor;
- no size queries at all: heads are split with ``unflatten``/``flatten`` and the causal mask is
  derived from the attention mask, so the trace has no ``aten::size``/``aten::Int`` and one trace
  serves every batch and sequence length;
- the additive mask is a plain float fill (``masked_fill`` with ``finfo(float32).min``), the same
  values HF's eager attention uses; its bool parts are combined with ``torch.logical_or``, never
  with Python's ``&``/``|``. That is what makes it lower today: stock OPT's only blocker at the
  pinned versions is transformers' ``masking_utils`` ``result & mask(...)``, traced as
  ``aten.__and__.Tensor``, which no torch-mlir conversion lowers. MLIR's error names the
  ``dense<true>`` literal next to it, but that literal lowers alone and stays only because its
  user was not converted: the bool literal mask is not the cause (``harness explain``; the fix
  ``bitwise-and-or`` makes stock OPT lower without this rewrite);
- attention is spelled out (``matmul``, ``softmax``, ``matmul``), not
  ``F.scaled_dot_product_attention``. Stock OPT calls the latter with ``scale=1.0`` (it scales the
  query itself), and torch-mlir 20261001 lowers that call with the default scale
  ``1/sqrt(head_dim)``: once ``__and__`` is fixed stock OPT lowers with wrong numbers, until the
  fix ``sdpa-explicit-scale`` folds the scale into the query
  (``lit_tests/upstream/sdpa-explicit-scale-miscompile.mlir``). FixedOPT meets neither gap;
- optional parts (``project_in``/``project_out`` when ``word_embed_proj_dim != hidden_size``, the
  final layer norm) are chosen at construction, as ``nn.Identity`` when absent.

The module shares its parameters with the HF model it was built from (no copy): it reuses HF's
``nn.Linear``/``nn.LayerNorm``/``nn.Embedding`` instances, which are plain torch modules, and
never calls an HF forward. The embedding tables are used through ``F.embedding`` directly.
"""

from __future__ import annotations

from typing import TypeVar

import torch
import torch.nn.functional as F
from torch import nn
from transformers import OPTConfig, OPTModel
from transformers.models.opt.modeling_opt import OPTAttention, OPTDecoderLayer

from harness.errors import UnsupportedOPTConfigError
from harness.models.opt import (
    CollectedWarning,
    TracedOPT,
    TraceSettings,
    collecting_warnings,
    graph_output_type,
)

#: OPT's learned positional embedding has 2 extra rows: position p reads row p + 2, and padded
#: tokens (position -1) read row 1.
POSITION_OFFSET = 2


def check_supported(config: OPTConfig) -> None:
    """Raise :class:`UnsupportedOPTConfigError` for the first config field outside our path."""
    if not config.do_layer_norm_before:
        raise UnsupportedOPTConfigError(
            "do_layer_norm_before", config.do_layer_norm_before,
            "only True (layer norm before attention and FFN, as in OPT-125m and 1.3b+)",
        )
    if config.activation_function != "relu":
        raise UnsupportedOPTConfigError(
            "activation_function", config.activation_function, "only 'relu' (every OPT release)"
        )


class FixedAttention(nn.Module):
    """Multi-head self-attention with an additive mask; sizes come from the config, not tensors."""

    def __init__(self, q_proj: nn.Linear, k_proj: nn.Linear, v_proj: nn.Linear,
                 out_proj: nn.Linear, num_heads: int):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = q_proj, k_proj, v_proj, out_proj
        self.num_heads = num_heads
        self.head_dim = q_proj.out_features // num_heads
        # OPT scales the query projection before the product (not the scores after); keeping that
        # order keeps results bit-close to HF.
        self.scaling = float(self.head_dim) ** -0.5

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """[batch, seq, hidden] -> [batch, heads, seq, head_dim] without reading batch or seq."""
        return x.unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)

    def forward(self, hidden: torch.Tensor, mask_bias: torch.Tensor) -> torch.Tensor:
        query = self._split_heads(self.q_proj(hidden) * self.scaling)
        key = self._split_heads(self.k_proj(hidden))
        value = self._split_heads(self.v_proj(hidden))
        scores = torch.matmul(query, key.transpose(-1, -2)) + mask_bias
        weights = torch.softmax(scores, dim=-1)
        context = torch.matmul(weights, value).transpose(1, 2).flatten(2)
        return self.out_proj(context)


class FixedDecoderLayer(nn.Module):
    """Pre-layer-norm decoder block: x + attn(ln(x)), then x + fc2(relu(fc1(ln(x))))."""

    def __init__(self, attention: FixedAttention, attention_norm: nn.LayerNorm,
                 fc1: nn.Linear, fc2: nn.Linear, ffn_norm: nn.LayerNorm):
        super().__init__()
        self.attention = attention
        self.attention_norm = attention_norm
        self.fc1 = fc1
        self.fc2 = fc2
        self.ffn_norm = ffn_norm

    def forward(self, hidden: torch.Tensor, mask_bias: torch.Tensor) -> torch.Tensor:
        hidden = hidden + self.attention(self.attention_norm(hidden), mask_bias)
        return hidden + self.fc2(torch.relu(self.fc1(self.ffn_norm(hidden))))


class FixedOPT(nn.Module):
    """OPTModel's forward for ``(input_ids, attention_mask) -> last_hidden_state``, traceable.

    Build it with :meth:`from_hf`. ``attention_mask`` is int64 with 1 for real tokens and 0 for
    padding, as HF tokenizers produce it. Rows of padded query positions are don't-care values:
    they match HF's eager attention (uniform weights), while HF's default ``sdpa`` attention
    zeroes them, so compare padded batches on the unpadded positions.
    """

    def __init__(self, token_weight: nn.Parameter, position_weight: nn.Parameter,
                 project_in: nn.Module, layers: list[FixedDecoderLayer],
                 final_norm: nn.Module, project_out: nn.Module):
        super().__init__()
        self.token_weight = token_weight
        self.position_weight = position_weight
        self.project_in = project_in
        self.layers = nn.ModuleList(layers)
        self.final_norm = final_norm
        self.project_out = project_out
        # A Python float, so the trace holds a scalar constant rather than a tensor constant.
        self.mask_fill = float(torch.finfo(token_weight.dtype).min)

    @classmethod
    def from_hf(cls, model: OPTModel) -> FixedOPT:
        """Build from an HF OPTModel, sharing its parameters; raises on unsupported configs."""
        if not isinstance(model, OPTModel):
            raise UnsupportedOPTConfigError(
                "(model class)", type(model).__name__, "transformers.OPTModel instances "
                "(for OPTForCausalLM pass its .model)"
            )
        check_supported(model.config)
        decoder = model.decoder
        layers = []
        for index, module in enumerate(decoder.layers):
            layer = _part(module, OPTDecoderLayer, f"decoder.layers[{index}]")
            attention = _part(layer.self_attn, OPTAttention, f"decoder.layers[{index}].self_attn")
            layers.append(FixedDecoderLayer(
                attention=FixedAttention(
                    attention.q_proj, attention.k_proj, attention.v_proj,
                    attention.out_proj, model.config.num_attention_heads,
                ),
                attention_norm=layer.self_attn_layer_norm,
                fc1=layer.fc1,
                fc2=layer.fc2,
                ffn_norm=layer.final_layer_norm,
            ))
        fixed = cls(
            token_weight=_part(decoder.embed_tokens.weight, nn.Parameter, "embed_tokens.weight"),
            position_weight=_part(
                decoder.embed_positions.weight, nn.Parameter, "embed_positions.weight"
            ),
            project_in=_or_identity(decoder.project_in),
            layers=layers,
            final_norm=_or_identity(decoder.final_layer_norm),
            project_out=_or_identity(decoder.project_out),
        )
        return fixed.eval()

    def causal_padding_bias(self, attention_mask: torch.Tensor) -> torch.Tensor:
        """Additive mask [batch, 1, seq, seq]: 0 where a query may attend, float min elsewhere.

        A key is blocked if it comes after the query or is padding. Token order ``1..seq`` is a
        cumsum of ones shaped like one mask row, so no Python int (and no ``aten::size``) is needed.
        The two conditions are joined by ``logical_or``: a ``|`` or ``&`` on the bool tensors
        would trace as ``aten.__or__``/``aten.__and__.Tensor`` (the latter has no lowering).
        """
        order = torch.ones_like(attention_mask[0]).cumsum(0)
        future = order.unsqueeze(0) > order.unsqueeze(1)  # [query, key]
        padding = attention_mask.eq(0).unsqueeze(1).unsqueeze(2)  # [batch, 1, 1, key]
        blocked = torch.logical_or(future, padding)
        bias = torch.zeros_like(blocked, dtype=self.position_weight.dtype)
        return bias.masked_fill(blocked, self.mask_fill)

    def positions(self, attention_mask: torch.Tensor) -> torch.Tensor:
        """Rows of the positional table: count of real tokens so far, minus 1, plus the offset.

        Same semantics as HF for any mask: left padding shifts the first real token to position 0
        and padded tokens get position -1 (row 1).
        """
        return torch.cumsum(attention_mask, dim=1) * attention_mask - 1 + POSITION_OFFSET

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        # F.embedding without padding_idx: padding_idx only masks the pad row's gradient, and
        # torch's bounds check on it compares against a traced size (a TracerWarning).
        hidden = self.project_in(F.embedding(input_ids, self.token_weight))
        hidden = hidden + F.embedding(self.positions(attention_mask), self.position_weight)
        mask_bias = self.causal_padding_bias(attention_mask)
        for layer in self.layers:
            hidden = layer(hidden, mask_bias)
        return self.project_out(self.final_norm(hidden))


_Part = TypeVar("_Part")


def _part(value: object, kind: type[_Part], where: str) -> _Part:
    """``value`` as ``kind``: an OPTModel whose part was replaced by another class is refused.

    ``nn.Module`` attributes are typed ``Tensor | Module`` and ``ModuleList`` items ``Module``;
    this narrows them to the classes HF's OPT builds, with an error that names the part.
    """
    if not isinstance(value, kind):
        raise UnsupportedOPTConfigError(
            f"(module {where})", type(value).__name__, f"an {kind.__name__} there, as HF's OPT builds it"
        )
    return value


def _or_identity(module: nn.Module | None) -> nn.Module:
    """Absent optional parts become ``nn.Identity`` so forward has no branch on them."""
    return module if module is not None else nn.Identity()


def trace_fixed(
    model: FixedOPT, inputs: tuple[torch.Tensor, torch.Tensor], *, check_trace: bool = False
) -> TracedOPT:
    """``torch.jit.trace`` the fixed model (strict: it returns one tensor), collecting warnings.

    Returns the same :class:`TracedOPT` record as the stock driver so the CLI and benchmarks
    treat both alike.
    """
    caught: list[CollectedWarning] = []
    with collecting_warnings(caught):
        module = torch.jit.trace(model, tuple(inputs), strict=True, check_trace=check_trace)
    settings = TraceSettings(
        mode="fixed",
        strict=True,
        check_trace=check_trace,
        use_cache=False,
        return_dict_argument=False,
        attn_implementation="matmul + softmax written out (the math of HF's eager attention)",
        input_shapes=tuple(tuple(t.shape) for t in inputs),
        output_type=graph_output_type(module),
    )
    return TracedOPT(module=module, settings=settings, warnings=tuple(caught))
