"""The tiny preset keeps a config's dependent values consistent (issue 45, round 4, items 1, 3
and 4): 13 model types were refused because their tiny config or model did not build (a
validator tying one sub-config's size to another's, a per-layer list or index sized for the
default depth, widths that add up to the hidden size), Mask2Former's backbone was shrunk from
Swin's class defaults rather than the composite's own default backbone, and SAM2 was planned a
224 px image against its 1024 px feature sizes. Real transformers configs and models."""

from __future__ import annotations

import pytest

from harness.errors import UnsupportedModelError
from harness.models import generic, hf_config, hf_media, hf_resolve
from harness.models.hf_config import COMPOSITE, tiny_kwargs
from harness.models.hf_list import ListDepth, check_type


def test_a_tiny_config_that_does_not_build_is_retried_and_says_so():
    """FunASR's validator: the adaptor's intermediate size is the text tower's hidden / 4; the
    retry (now for a config that does not build, too) builds it with its widths kept."""
    prepared = generic.prepare("fun_asr_nano")
    kept = prepared.settings.kept
    assert kept.startswith("its widths kept at the config's defaults")
    assert "it did not build (Class validation error" in kept and "hidden_size // 4" in kept
    assert prepared.run_eager()


def test_a_composites_sub_config_starts_from_the_composites_own_default():
    """Mask2Former's default backbone is a Swin with 4 output stages (its sub_configs_defaults);
    Swin's class default has 1, which the pixel decoder fails on."""
    cls = hf_resolve.config_class("mask2former")
    preset = tiny_kwargs(cls)["backbone_config"]
    own = tiny_kwargs(cls, keep=frozenset({COMPOSITE}))["backbone_config"]
    assert "out_features" not in preset  # the preset is as it was: Swin's own default
    assert own["model_type"] == "swin" and own["depths"] == [1, 1, 1, 1]  # [2, 2, 18, 2] shrunk
    assert own["out_features"] == ["stage1", "stage2", "stage3", "stage4"]
    prepared = generic.prepare("mask2former")
    assert prepared.settings.kept.startswith("its sub-configs' settings kept at the config's defaults:")
    assert prepared.run_eager()


def test_a_sub_configs_width_follows_the_composites_own_default():
    """Inkling 2: the vision tower's text_hidden_size is 2304 in the composite's default (4608 in
    its class's), equal to the text tower's hidden size, which its validator checks."""
    cls = hf_resolve.config_class("inkling2_loop")
    assert tiny_kwargs(cls, keep=frozenset({COMPOSITE}))["vision_config"]["text_hidden_size"] == 64
    assert check_type("inkling2_loop", ListDepth.BUILD) == "ok"


def test_widths_that_add_up_to_the_hidden_size_scale_with_it():
    assert tiny_kwargs(hf_resolve.config_class("reformer"))["axial_pos_embds_dim"] == [16, 48]
    assert check_type("reformer", ListDepth.BUILD) == "ok"


def test_per_layer_settings_sized_for_the_default_depth_fit_the_tiny_one():
    gemma = tiny_kwargs(hf_resolve.config_class("gemma3n_text"))
    assert gemma["num_kv_shared_layers"] == 1  # 15 of 35: one of the 2 layers reuses the other's
    assert check_type("gemma3n_text", ListDepth.BUILD) == "ok"
    molmo = tiny_kwargs(hf_resolve.config_class("molmo2"))
    assert molmo["adapter_config"]["vision_feature_layer"] == [1, 0]  # [24, 18] of 25
    assert check_type("molmo2", ListDepth.BUILD) == "ok"
    dots = tiny_kwargs(hf_resolve.config_class("dots3_note"))
    assert dots["vision_config"]["mlp_layer_types"] == ["dense", "sparse"]  # 42 long by default
    assert dots["audio_config"]["adapter_input_size"] == 64  # its hidden size, 1280 by default
    assert check_type("dots3_note", ListDepth.BUILD) == "ok"
    # a config that derives the list from the depth itself is left to do so
    assert "mlp_layer_types" not in tiny_kwargs(hf_resolve.config_class("exaone_moe"))


def test_a_default_config_that_fails_too_is_said_so_not_blamed_on_the_preset():
    """Cohere Compass's rope parameters are per layer type and empty by default: its model does
    not build from the default config either (KeyError 'full_attention')."""
    assert "rope_parameters" not in tiny_kwargs(hf_resolve.config_class("cohere_compass_text"))
    reason = check_type("cohere_compass_text", ListDepth.BUILD)
    assert "does not build even from its default config" in reason and "KeyError" in reason


def test_the_image_size_comes_from_a_vision_towers_own_backbone():
    """SAM2's size is its Hiera backbone's (1024 px), which its fixed feature sizes need."""
    config = generic.build_config(hf_resolve.resolve("sam2"), hf_config.Size.TINY, None)
    _, sides = hf_media.image_candidates(config)
    assert sides[-1] == (1024, 1024)
    assert check_type("sam2", ListDepth.BUILD) == "ok"


def test_oneformer_builds_from_its_own_backbone_with_task_inputs_its_context_long():
    """OneFormer: its default Swin backbone (4 output stages, as Mask2Former's), and task_inputs
    as long as its text encoder's context (77; the docstring says sequence_length)."""
    prepared = generic.prepare("oneformer")
    assert prepared.settings.kept.startswith("its sub-configs' settings kept")
    shapes = dict(zip(prepared.inputs.names, (t.shape for t in prepared.inputs.tensors), strict=True))
    assert shapes["task_inputs"] == (1, 77)
    assert prepared.run_eager()


def test_an_argument_that_is_no_tensor_is_refused_without_the_input_remedy():
    """SAM2 video's forward needs an inference session (an object): --input cannot give one, so
    the refusal names its class and points at the image model instead (4 of the 18 types whose
    inputs the planner cannot make: SAM2 video, SAM3 video and tracker video, EdgeTAM video)."""
    reason = check_type("sam2_video", ListDepth.BUILD)
    assert "needs 'inference_session', a Sam2VideoInferenceSession, not a tensor" in reason
    assert "--input inference_session" not in reason
    # a tensor the planner cannot make keeps the --input remedy
    assert "Give it by hand with --input action_embeds=" in check_type("pi0", ListDepth.BUILD)


def test_a_build_refused_after_every_retry_keeps_its_own_remedy():
    """Zamba (transformers ties its hybrid layers' shared block to the first one's, which needs
    two hybrid layers; the preset's two layers are one of each kind): the refusal says the
    preset's sizes were ruled out and gives a build's remedy, not the planner's --input."""
    with pytest.raises(UnsupportedModelError) as info:
        generic.prepare("zamba")
    message = str(info.value)
    assert message.startswith("cannot drive model 'zamba': ZambaModel does not build from its config")
    assert "the tiny preset's sizes are ruled out" in message
    assert message.endswith("Try --size default, or --set FIELD=VALUE of the field it reads.")
    assert "--input" not in message
