"""Stock HF OPT driver: configs, inputs, tracing settings and node statistics (tiny preset only).

Expected values come from OPT's architecture (6 linears and 2 layer norms per layer, ...), from
HF eager runs, or from transformers' own behaviour checked here directly, never from the driver.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from harness.errors import HarnessError
from harness.models import opt

from support import harness


@pytest.fixture(scope="module")
def tiny() -> opt.OPTModel:
    return opt.build_opt("tiny", seed=0)


@pytest.fixture(scope="module")
def tiny_inputs(tiny) -> tuple[torch.Tensor, torch.Tensor]:
    return opt.example_inputs(tiny.config)


# --- configs and inputs ----------------------------------------------------------------------


def test_125m_preset_is_default_config_with_opt_125m_shape():
    config = opt.make_config("125m")
    shape = (config.hidden_size, config.num_hidden_layers, config.num_attention_heads,
             config.ffn_dim, config.vocab_size)
    assert shape == (768, 12, 12, 3072, 50272)  # OPT-125m, from the OPT paper / model card
    assert config.to_dict() == opt.OPTConfig().to_dict()


@pytest.mark.parametrize("preset, params", [("125m", 125_239_296), ("350m", 331_196_416),
                                             ("1.3b", 1_315_758_080)])
def test_size_presets_have_the_published_parameter_counts(preset, params):
    """125M, 331M and 1.3B, as the model cards of facebook/opt-125m, -350m and -1.3b count them
    (a wrong field, e.g. 350m's 512-wide projection, changes the count); built on the meta
    device, so no weights are allocated."""
    with torch.device("meta"):
        model = opt.OPTModel(opt.make_config(preset))
    assert sum(t.numel() for t in model.parameters()) == params


def test_overrides_reach_the_built_model():
    model = opt.build_opt("tiny", {"num_hidden_layers": 3, "ffn_dim": 96})
    assert len(model.decoder.layers) == 3
    assert model.decoder.layers[0].fc1.out_features == 96
    assert not model.training


def test_build_is_seeded_and_leaves_caller_rng_alone():
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    a = opt.build_opt("tiny", seed=7)
    assert torch.equal(torch.rand(3), expected_next)
    b = opt.build_opt("tiny", seed=7)
    c = opt.build_opt("tiny", seed=8)
    wa, wb, wc = (m.decoder.layers[0].fc1.weight for m in (a, b, c))
    assert torch.equal(wa, wb)
    assert not torch.equal(wa, wc)


def test_example_inputs_are_deterministic_int64_with_bos(tiny):
    ids, mask = opt.example_inputs(tiny.config, batch=2, seq=5)
    again, _ = opt.example_inputs(tiny.config, batch=2, seq=5)
    assert ids.dtype == mask.dtype == torch.int64
    assert ids.shape == mask.shape == (2, 5)
    assert torch.equal(ids, again)
    assert ids[:, 0].tolist() == [tiny.config.bos_token_id] * 2
    assert bool((ids[:, 1:] >= 3).all()) and bool((ids < tiny.config.vocab_size).all())
    assert mask.sum().item() == 10


def test_example_inputs_left_pad(tiny):
    ids, mask = opt.example_inputs(tiny.config, batch=2, seq=6, left_pad=(0, 2))
    assert mask.tolist() == [[1] * 6, [0, 0, 1, 1, 1, 1]]
    assert ids[1, :2].tolist() == [tiny.config.pad_token_id] * 2
    assert ids[1, 2].item() == tiny.config.bos_token_id


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: opt.make_config("2.7b"), ["unknown OPT preset '2.7b'", "tiny", "125m", "1.3b"]),
        (lambda: opt.make_config("tiny", {"num_layers": 3}),
         ["unknown OPTConfig field 'num_layers'", "num_hidden_layers"]),
        (lambda: opt.make_config("tiny", {"hidden_size": "64"}), ["hidden_size"]),
        (lambda: opt.make_config("tiny", {"num_attention_heads": 5}),
         ["divisible", "num_attention_heads (5)"]),
        (lambda: opt.build_opt("tiny", attn_implementation="flash"), ["'flash'", "sdpa"]),
        (lambda: opt.example_inputs(opt.make_config("tiny"), seq=65),
         ["65", "max_position_embeddings (64)"]),
        (lambda: opt.example_inputs(opt.make_config("tiny"), batch=0), ["batch", ">= 1"]),
        (lambda: opt.example_inputs(opt.make_config("tiny"), seq=4, left_pad=(4,)),
         ["left_pad[0]", "[0, 3]"]),
        (lambda: opt.example_inputs(opt.make_config("tiny"), batch=1, left_pad=(0, 1)),
         ["2 entries", "1 rows"]),
    ],
)
def test_bad_input_raises_one_paragraph_model_config_error(call, words):
    with pytest.raises(opt.ModelConfigError) as info:
        call()
    assert isinstance(info.value, HarnessError)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


# --- transformers 5.24 facts, checked against HF directly ------------------------------------


def test_default_config_output_holds_dynamic_cache_and_trace_fails(tiny, tiny_inputs):
    assert tiny.config.use_cache is True
    out = tiny(*tiny_inputs)
    assert type(out.cache).__name__ == "DynamicCache"
    for strict in (True, False):
        with pytest.raises(RuntimeError, match="DynamicCache"):
            torch.jit.trace(tiny, tiny_inputs, strict=strict, check_trace=False)
    with pytest.raises(opt.TraceError, match="DynamicCache") as info:
        opt.trace_opt(tiny, tiny_inputs, opt.TraceOptions(mode="direct", disable_cache=False))
    assert info.value.settings.use_cache is True
    assert any(w.category == "TracerWarning" for w in info.value.warnings)  # kept on failure
    assert tiny.config.use_cache is True  # trace_opt restored the config


def test_config_return_dict_false_breaks_eager_but_argument_works(tiny_inputs):
    model = opt.build_opt("tiny")
    expected = model(*tiny_inputs).last_hidden_state
    as_tuple = model(*tiny_inputs, return_dict=False, use_cache=False)
    assert isinstance(as_tuple, tuple) and len(as_tuple) == 1
    torch.testing.assert_close(as_tuple[0], expected)
    model.config.return_dict = False
    with pytest.raises(AttributeError, match="last_hidden_state"):
        model(*tiny_inputs)


def test_direct_trace_needs_strict_false_and_returns_dict(tiny, tiny_inputs):
    with pytest.raises(opt.TraceError, match="strict=False"):
        opt.trace_opt(tiny, tiny_inputs, opt.TraceOptions(mode="direct", strict=True))
    traced = opt.trace_opt(tiny, tiny_inputs, opt.TraceOptions(mode="direct"))
    assert traced.settings.output_type == "Dict[str, Tensor]"
    out = traced.module(*tiny_inputs)
    torch.testing.assert_close(out["last_hidden_state"], tiny(*tiny_inputs).last_hidden_state)


# --- the default (wrapper) trace -------------------------------------------------------------


def test_wrapper_trace_returns_tensor_matching_eager_also_for_padding(tiny):
    ids, ones = opt.example_inputs(tiny.config, batch=2)
    traced = opt.trace_opt(tiny, (ids, ones))
    assert traced.settings.strict is True
    assert traced.settings.output_type == "Tensor"
    # Traced on an all-ones mask, run on a left-padded one: HF materializes the mask while
    # tracing instead of taking sdpa's is_causal shortcut, so the trace must still be right.
    padded_ids, padded = opt.example_inputs(tiny.config, batch=2, left_pad=(0, 3))
    with torch.no_grad():
        got = traced.module(padded_ids, padded)
        want = tiny(padded_ids, attention_mask=padded).last_hidden_state
    real = padded.bool()
    torch.testing.assert_close(got[real], want[real])


def test_settings_print_as_sentences(tiny, tiny_inputs):
    settings = opt.trace_opt(tiny, tiny_inputs).settings
    text = str(settings)
    assert len(settings.sentences()) == len(text.splitlines())
    for fragment in ("use_cache=False", "return_dict=False", "strict=True", "DynamicCache",
                     "returns Tensor", "[1, 7]", "sdpa"):
        assert fragment in text
    for sentence in settings.sentences():
        assert sentence[0].isupper() and sentence.endswith(".")


def test_warnings_are_collected_not_emitted(tiny, tiny_inputs):
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        traced = opt.trace_opt(tiny, tiny_inputs)
    assert escaped == []
    counts = traced.warning_counts()
    assert counts.get("TracerWarning", 0) == len(traced.tracer_warnings) > 0
    assert sum(counts.values()) == len(traced.warnings)
    # HF's own mask code converts traced tensors to Python bools (measured at 5.24).
    assert any(w.where.startswith("masking_utils.py:") for w in traced.tracer_warnings)


# --- node statistics -------------------------------------------------------------------------


def test_node_kinds_follow_the_architecture(tiny, tiny_inputs):
    layers = tiny.config.num_hidden_layers
    counts = opt.count_node_kinds(opt.trace_opt(tiny, tiny_inputs).module)
    assert counts["aten::linear"] == 6 * layers  # q, k, v, out, fc1, fc2
    assert counts["aten::layer_norm"] == 2 * layers + 1
    assert counts["aten::scaled_dot_product_attention"] == layers
    assert counts["aten::relu"] == layers
    assert counts["aten::embedding"] == 2
    assert counts["prim::CallMethod"] == 0
    assert not counts.has_control_flow
    assert counts.total == sum(counts.kinds.values())

    eager = opt.build_opt("tiny", attn_implementation="eager")
    eager_counts = opt.count_node_kinds(opt.trace_opt(eager, tiny_inputs).module)
    assert eager_counts["aten::matmul"] == 2 * layers
    assert eager_counts["aten::softmax"] == layers
    assert eager_counts["aten::scaled_dot_product_attention"] == 0


class _Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(3, 3)

    def forward(self, x):
        return self.inner(torch.relu(self.inner(x)))


class _Branchy(nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            y = torch.relu(x)
        else:
            y = torch.neg(x)
        return y


def test_count_node_kinds_follows_method_calls_and_blocks():
    traced = torch.jit.trace(_Twice(), torch.ones(2, 3))
    raw = opt.count_node_kinds(traced, inline=False)
    assert raw["prim::CallMethod"] == 2  # the same submodule called twice
    assert raw["aten::linear"] == 2  # its body counted once per call
    inlined = opt.count_node_kinds(traced)
    assert inlined["aten::linear"] == 2 and inlined["prim::CallMethod"] == 0

    scripted = torch.jit.script(_Branchy())
    for inline in (True, False):
        counts = opt.count_node_kinds(scripted, inline=inline)
        assert counts["prim::If"] == 1 and counts.has_control_flow
        assert counts["aten::relu"] == 1 and counts["aten::neg"] == 1  # inside the If's blocks


def test_cli_presets_are_the_drivers():
    from harness.commands.models import OPT_PRESETS

    assert sorted(OPT_PRESETS) == sorted(opt.PRESETS)


def test_opt_config_350m_reaches_the_model_and_set_still_wins(tmp_path):
    """Issue 16: ``harness opt --config 1.3b`` (here 350m, cut to one layer by --set so the test
    stays small) builds the published shape; --set applies after the preset."""
    import json
    from pathlib import Path

    record = tmp_path / "record.json"
    proc = harness("opt", "--config", "350m", "--model", "stock", "--set", "num_hidden_layers=1",
                   "--torch-only", "--out", tmp_path, "--json", record)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(record.read_text())
    assert Path(data["folder"]).name.startswith("opt-350m-")  # named for the shape, not 125m
    config = data["variants"][0]["config"]  # the built model's config
    assert config["hidden_size"] == 1024 and config["word_embed_proj_dim"] == 512
    assert config["do_layer_norm_before"] is False and config["num_hidden_layers"] == 1
