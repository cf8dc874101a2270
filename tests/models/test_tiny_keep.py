"""The tiny preset's retry (issue 45, item 1): a config that ties other sizes to the ones the
preset shrinks (LayoutLMv3's 4 coordinate and 2 shape embeddings, 128 wide each, are
concatenated to its 768 hidden) made the tiny model's own forward fail, and the refusal blamed
the inputs. The port now tries the preset with one group of sizes at a time kept at the
config's defaults, and says which."""

from __future__ import annotations

import pytest

from harness.errors import UnsupportedModelError
from harness.models import generic, hf_config, hf_resolve
from harness.models.hf_config import KEEPABLE, tiny_kwargs

WIDTHS = dict(KEEPABLE)["widths"]


def test_keeping_the_widths_leaves_them_and_what_follows_them_at_the_defaults():
    cls = hf_resolve.config_class("layoutlmv3")
    tiny, kept = tiny_kwargs(cls), tiny_kwargs(cls, keep=WIDTHS)
    assert tiny["hidden_size"] == 64 and tiny["num_attention_heads"] == 4
    for name in ("hidden_size", "num_attention_heads", "intermediate_size"):
        assert name not in kept  # the config's own default
    assert kept["num_hidden_layers"] == 2 and kept["vocab_size"] == 1024  # the rest stays tiny


def test_keeping_the_widths_of_a_grouped_attention_model_keeps_its_heads_and_head_dim():
    cls = hf_resolve.config_class("qwen2")
    kept = tiny_kwargs(cls, keep=WIDTHS)
    assert not {"hidden_size", "num_key_value_heads", "num_attention_heads", "head_dim"} & kept.keys()
    positions = tiny_kwargs(cls, keep=dict(KEEPABLE)["positions"])
    assert "max_position_embeddings" not in positions and positions["hidden_size"] == 64


def test_a_config_whose_sizes_the_preset_breaks_is_ported_with_its_widths_kept():
    prepared = generic.prepare("layoutlmv3")
    settings = prepared.settings
    assert settings.sizes["hidden"] == 768 and settings.sizes["layers"] == 2
    assert settings.kept.startswith("its widths kept at the config's defaults (hidden 768")
    assert "size of tensor a (64) must match the size of tensor b (768)" in settings.kept
    text = " ".join(settings.sentences())
    assert "Tiny, but its widths kept" in text
    assert settings.to_json()["kept"] == settings.kept
    assert prepared.run_eager()  # the model it ports runs


def test_a_model_that_fails_whatever_the_preset_says_the_preset_was_ruled_out(monkeypatch):
    """Every trial refused: the refusal keeps the first one's words and the --input remedy, and
    names the groups tried, so the user knows the preset's sizes are not the cause."""
    calls: list[frozenset[str]] = []

    def refuse(spec, options, size, keep=frozenset()):
        calls.append(keep)
        raise UnsupportedModelError(spec.name, f"{generic.EAGER_FAILS}(x float32[1]): "
                                    "RuntimeError: boom")

    monkeypatch.setattr(generic, "_build_and_run", refuse)
    with pytest.raises(UnsupportedModelError) as info:
        generic.prepare("layoutlmv3")
    message = str(info.value)
    assert "RuntimeError: boom (the tiny preset's sizes are ruled out: it fails as well with its " \
           "widths" in message and "--input" in message
    assert calls[0] == frozenset() and WIDTHS in calls and len(calls) > 2


def test_a_refusal_that_is_not_the_eager_forward_is_not_retried(monkeypatch):
    calls: list[frozenset[str]] = []

    def refuse(spec, options, size, keep=frozenset()):
        calls.append(keep)
        raise UnsupportedModelError(spec.name, "its tiny config does not build")

    monkeypatch.setattr(generic, "_build_and_run", refuse)
    with pytest.raises(UnsupportedModelError, match="does not build"):
        generic.prepare("layoutlmv3")
    assert calls == [frozenset()]


def test_the_default_size_is_never_retried(monkeypatch):
    monkeypatch.setattr(hf_config, "tiny_kwargs", lambda *a, **k: pytest.fail("retried"))
    calls: list[frozenset[str]] = []

    def refuse(spec, options, size, keep=frozenset()):
        calls.append(keep)
        raise UnsupportedModelError(spec.name, f"{generic.EAGER_FAILS}(x): RuntimeError: boom")

    monkeypatch.setattr(generic, "_build_and_run", refuse)
    with pytest.raises(UnsupportedModelError, match="boom"):
        generic.prepare("layoutlmv3", generic.ModelOptions(size=hf_config.Size.DEFAULT))
    assert calls == [frozenset()]


def test_a_retry_over_the_parameter_bound_is_not_built(monkeypatch):
    """A config's default widths at two layers can be gigabytes (a 70B config's: 3 G parameters):
    a trial over the bound is counted on the meta device and not built, and the refusal says so."""
    built: list[frozenset[str]] = []
    real = generic._build_and_run

    def counting(spec, options, size, keep=frozenset()):
        built.append(keep)
        return real(spec, options, size, keep)

    monkeypatch.setattr(generic, "_build_and_run", counting)
    monkeypatch.setattr(generic, "RETRY_MAX_PARAMETERS", 1_000_000)
    with pytest.raises(UnsupportedModelError) as info:
        generic.prepare("layoutlmv3")
    assert "widths (not built: over 1 M parameters)" in str(info.value)
    assert built[0] == frozenset() and WIDTHS not in built  # the widths' trial never built
