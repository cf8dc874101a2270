"""`harness port --list build` coverage: each category the input planner or the tiny preset
learned, with a real model type of that category that builds and runs eagerly (and failed
before)."""

from __future__ import annotations

from harness.models import generic, hf_resolve
from harness.models.hf_config import tiny_kwargs
from harness.models.hf_list import ListDepth, check_type


def test_flat_patch_tower_without_a_temporal_patch_glm_image():
    # GlmImageVisionModel reads flattened patches and their grid, but its config has no
    # temporal_patch_size (one frame per image): the planner takes 1 frame per patch
    assert check_type("glm_image_vision", ListDepth.BUILD) == "ok"


def test_per_stage_heads_divide_the_narrow_stage_widths_pvt():
    # PVT's heads per stage [1, 2, 5, 8]: 5 does not divide the tiny third stage's 64
    kwargs = tiny_kwargs(hf_resolve.config_class("pvt"))
    assert all(w % h == 0 for w, h in zip(kwargs["hidden_sizes"], kwargs["num_attention_heads"], strict=True))
    assert kwargs["num_attention_heads"] == [1, 2, 4, 8]
    assert check_type("pvt", ListDepth.BUILD) == "ok"


def test_head_dim_none_by_default_is_set_ministral():
    # MinistralConfig.head_dim is None and its attention computes head_dim ** -0.5
    assert tiny_kwargs(hf_resolve.config_class("ministral"))["head_dim"] == 16
    assert check_type("ministral", ListDepth.BUILD) == "ok"


def test_depthwise_groups_follow_the_tiny_hidden_size_mimi():
    # Mimi's upsample_groups is its hidden size (512, depthwise): 64 channels cannot split in 512
    assert tiny_kwargs(hf_resolve.config_class("mimi"))["upsample_groups"] == 64
    assert check_type("mimi", ListDepth.BUILD) == "ok"


def test_float_input_sized_from_its_docstring_mimi_decoder():
    # MimiDecoderModel.forward(latents): "(batch_size, hidden_size, frames)" -> [B, 64, seq]
    assert check_type("mimi_decoder", ListDepth.BUILD) == "ok"
    prepared = generic.prepare("mimi_decoder")
    assert prepared.inputs.names == ("latents",)
    assert tuple(prepared.inputs.tensors[0].shape) == (1, 64, 8)


def test_vocab_and_special_ids_without_defaults_esm():
    # EsmConfig has no default vocab_size nor pad/mask ids; its forward compares ids with them
    kwargs = tiny_kwargs(hf_resolve.config_class("esm"))
    assert kwargs["vocab_size"] == 1024 and kwargs["pad_token_id"] < 128
    assert check_type("esm", ListDepth.BUILD) == "ok"


def test_per_layer_kinds_shortened_to_the_tiny_depth_zamba2():
    # Zamba2's layers_block_type lists its 54 layers; the tiny config has 2 and keeps both kinds
    kwargs = tiny_kwargs(hf_resolve.config_class("zamba2"))
    assert kwargs["layers_block_type"] == ["linear_attention", "hybrid"]
    assert check_type("zamba2", ListDepth.BUILD) == "ok"
