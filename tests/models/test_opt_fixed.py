"""The harness's fixed OPT against HF eager, plus its trace and FX lowering.

References are HF's own forward: ``attn_implementation="eager"`` for every position, and HF's
default ``sdpa`` on the unpadded positions (the two HF backends disagree on fully-masked query
rows, which are padding and carry no meaning).
"""

from __future__ import annotations

import pytest
import torch

from harness.errors import HarnessError
from harness.models import opt
from harness.models.opt_fixed import (
    POSITION_OFFSET,
    FixedOPT,
    UnsupportedOPTConfigError,
    trace_fixed,
)

ATOL = 1e-5
RTOL = 1e-5

VARIANTS = {
    "plain": {},
    "project_in_out": {"word_embed_proj_dim": 32},  # the opt-350m embedding projection
    "no_bias_no_affine_no_final_norm": {
        "enable_bias": False,
        "layer_norm_elementwise_affine": False,
        "_remove_final_layer_norm": True,
    },
}


def _hf_reference(model, ids, mask, attn: str) -> torch.Tensor:
    """HF's last hidden state with the given attention implementation, restoring the old one."""
    previous = model.config._attn_implementation
    model.set_attn_implementation(attn)
    try:
        with torch.no_grad():
            return model(ids, attention_mask=mask, use_cache=False).last_hidden_state
    finally:
        model.set_attn_implementation(previous)


def _assert_matches_hf(model, fixed, ids, mask, atol=ATOL, rtol=RTOL) -> None:
    with torch.no_grad():
        got = fixed(ids, mask)
    torch.testing.assert_close(got, _hf_reference(model, ids, mask, "eager"), atol=atol, rtol=rtol)
    real = mask.bool()
    sdpa = _hf_reference(model, ids, mask, "sdpa")
    torch.testing.assert_close(got[real], sdpa[real], atol=atol, rtol=rtol)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("left_pad", [(), (0, 3)], ids=["ones", "left_padded"])
def test_matches_hf_tiny(variant, left_pad):
    model = opt.build_opt("tiny", VARIANTS[variant], seed=1)
    fixed = FixedOPT.from_hf(model)
    ids, mask = opt.example_inputs(model.config, batch=2, left_pad=left_pad)
    _assert_matches_hf(model, fixed, ids, mask)
    assert fixed(ids, mask).shape == (2, 7, model.config.word_embed_proj_dim)


def test_shares_weights_with_hf():
    model = opt.build_opt("tiny")
    fixed = FixedOPT.from_hf(model)
    shared = {p.data_ptr() for p in model.parameters()}
    assert {p.data_ptr() for p in fixed.parameters()} <= shared
    ids, mask = opt.example_inputs(model.config)
    with torch.no_grad():
        model.decoder.layers[1].fc2.bias.add_(1.0)
    _assert_matches_hf(model, fixed, ids, mask)


def test_right_padding_and_holes_match_hf():
    model = opt.build_opt("tiny", seed=2)
    fixed = FixedOPT.from_hf(model)
    ids, _ = opt.example_inputs(model.config, batch=2)
    mask = torch.tensor([[1, 1, 1, 1, 1, 0, 0], [1, 1, 0, 1, 1, 1, 0]])
    _assert_matches_hf(model, fixed, ids, mask)


def test_positions_follow_the_mask_with_offset_two():
    fixed = FixedOPT.from_hf(opt.build_opt("tiny"))
    mask = torch.tensor([[1, 1, 1, 1], [0, 0, 1, 1], [1, 1, 0, 0]])
    # Real tokens count from 0, padding is position -1; the table is read at position + 2.
    expected = torch.tensor([[0, 1, 2, 3], [-1, -1, 0, 1], [0, 1, -1, -1]]) + 2
    assert POSITION_OFFSET == 2
    assert torch.equal(fixed.positions(mask), expected)


def test_causal_padding_bias_blocks_future_and_padding():
    fixed = FixedOPT.from_hf(opt.build_opt("tiny"))
    mask = torch.tensor([[1, 1, 1], [0, 1, 1]])
    bias = fixed.causal_padding_bias(mask)
    assert bias.shape == (2, 1, 3, 3) and bias.dtype == torch.float32
    blocked = bias[:, 0] != 0
    causal_blocked = torch.tensor([[False, True, True], [False, False, True], [False, False, False]])
    assert torch.equal(blocked[0], causal_blocked)
    assert torch.equal(blocked[1], causal_blocked | torch.tensor([True, False, False]))
    assert torch.all(bias[:, 0][blocked] == torch.finfo(torch.float32).min)


@pytest.mark.parametrize(
    "overrides, field",
    [({"do_layer_norm_before": False}, "do_layer_norm_before"),
     ({"activation_function": "gelu"}, "activation_function")],
)
def test_unsupported_config_names_the_field(overrides, field):
    model = opt.build_opt("tiny", overrides)
    with pytest.raises(UnsupportedOPTConfigError) as info:
        FixedOPT.from_hf(model)
    assert isinstance(info.value, HarnessError)
    assert info.value.field == field
    assert f"OPTConfig.{field}" in str(info.value) and "\n" not in str(info.value)


def test_rejects_non_opt_model():
    with pytest.raises(UnsupportedOPTConfigError, match="OPTModel"):
        FixedOPT.from_hf(torch.nn.Linear(2, 2))


def test_rejects_a_replaced_part_by_name():
    model = opt.build_opt("tiny")
    model.decoder.layers[1] = torch.nn.Identity()  # a part FixedOPT would not find its fields in
    with pytest.raises(UnsupportedOPTConfigError) as info:
        FixedOPT.from_hf(model)
    assert info.value.field == "(module decoder.layers[1])"
    assert info.value.value == "Identity"
    assert "an OPTDecoderLayer there" in str(info.value) and "\n" not in str(info.value)


def test_trace_is_clean_and_generalizes_over_shapes():
    model = opt.build_opt("tiny")
    fixed = FixedOPT.from_hf(model)
    traced = trace_fixed(fixed, opt.example_inputs(model.config))
    assert traced.tracer_warnings == ()
    assert traced.settings.output_type == "Tensor"
    counts = opt.count_node_kinds(traced.module)
    for kind in ("aten::size", "aten::Int", "prim::NumToTensor", "aten::to",
                 "prim::TupleConstruct", "prim::DictConstruct", "prim::If", "prim::Loop"):
        assert counts[kind] == 0, kind
    assert counts["aten::linear"] == 6 * model.config.num_hidden_layers
    # No size was baked in: a trace at [1, 7] must serve a left-padded [3, 5] batch.
    ids, mask = opt.example_inputs(model.config, batch=3, seq=5, left_pad=(0, 2, 4))
    with torch.no_grad():
        got = traced.module(ids, mask)
    torch.testing.assert_close(got, _hf_reference(model, ids, mask, "eager"), atol=ATOL, rtol=RTOL)


def test_lowers_to_linalg_through_fx_tiny():
    fx = pytest.importorskip("torch_mlir.fx")
    model = opt.build_opt("tiny")
    fixed = FixedOPT.from_hf(model)
    ids, mask = opt.example_inputs(model.config)
    module = fx.export_and_import(fixed, ids, mask, output_type="linalg-on-tensors")
    text = module.operation.get_asm(large_elements_limit=4)
    signature = next(line for line in text.splitlines() if "func.func @main" in line)
    assert "(%arg0: tensor<1x7xi64>, %arg1: tensor<1x7xi64>) -> tensor<1x7x64xf32>" in signature
    assert "linalg.matmul" in text or "linalg.batch_matmul" in text
    # Fully lowered: no torch dialect op or type left (resource blob names say "torch_tensor").
    assert "torch.aten." not in text and "!torch." not in text


def test_125m_matches_hf_and_stock_trace_is_as_measured():
    """The one OPT-125m test: fixed vs HF eager, and the stock trace facts pinned at 5.24."""
    model = opt.build_opt("125m")
    fixed = FixedOPT.from_hf(model)
    ids, mask = opt.example_inputs(model.config, batch=2, left_pad=(0, 3))
    _assert_matches_hf(model, fixed, ids, mask, atol=1e-4, rtol=1e-4)

    stock = opt.trace_opt(model, opt.example_inputs(model.config), opt.TraceOptions(mode="direct"))
    counts = opt.count_node_kinds(stock.module)
    assert counts["aten::linear"] == 72 and counts["aten::layer_norm"] == 25  # 12 layers
    assert not counts.has_control_flow
    # Measured at transformers 5.24.0 / torch 2.13.0 (torch's inlined graph, sdpa attention):
    assert (counts.total, counts.num_kinds) == (958, 28)
