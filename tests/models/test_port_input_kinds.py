"""The input kinds and tiny-preset rules `harness port --list build` learned in session 35, each
through a real model type at tiny size: its planned inputs, and an eager run of both sets (the
traced one and the padded or masked second one)."""

from __future__ import annotations

import torch

from harness.models import generic, hf_resolve
from harness.models.hf_config import tiny_kwargs
from harness.models.hf_list import ListDepth, check_type
from harness.models.modality import Modality, modality_of


def _shapes(prepared: generic.PreparedModel, which: str = "inputs") -> dict[str, tuple[int, ...]]:
    inputs = getattr(prepared, which)
    return {n: tuple(t.shape) for n, t in zip(inputs.names, inputs.tensors, strict=True)}


def _runs_both_sets(prepared: generic.PreparedModel) -> None:
    first, second = prepared.run_eager(), prepared.run_eager(prepared.second_inputs)
    assert first and all(torch.isfinite(t).all() for t in first if t.is_floating_point())
    assert len(first) == len(second)


def test_time_series_with_lags_and_a_future_window_autoformer():
    # no default prediction_length: the tiny horizon is 4, the context follows it, and the past
    # window also covers the largest lag (7); the decoder reads the future window
    prepared = generic.prepare("autoformer")
    assert _shapes(prepared) == {
        "past_values": (1, 11), "past_time_features": (1, 11, 1), "past_observed_mask": (1, 11),
        "future_values": (1, 4), "future_time_features": (1, 4, 1)}
    assert prepared.inputs.tensors[2].dtype == torch.bool  # its docstring: torch.BoolTensor
    assert not bool(prepared.second_inputs.tensors[2][0, :2].any())  # row 0's first quarter
    assert modality_of(prepared.inputs.names) is Modality.TIME_SERIES
    _runs_both_sets(prepared)


def test_time_series_in_patches_with_padding_and_frequency_timesfm():
    # TimesFM reads whole patches of 32 steps (the fewest: one), a padding indicator (1 where
    # padded, its docstring's LongTensor) and a frequency class per row
    prepared = generic.prepare("timesfm")
    assert _shapes(prepared) == {"past_values": (1, 32), "past_values_padding": (1, 32), "freq": (1, 1)}
    padding = prepared.second_inputs.tensors[1]
    assert padding.dtype == torch.int64 and int(padding[0].sum()) == 8
    _runs_both_sets(prepared)


def test_time_series_channels_patchtsmixer():
    # [B, context_length, num_input_channels]: its patchifier takes no other length
    prepared = generic.prepare("patchtsmixer")
    assert _shapes(prepared) == {"past_values": (1, 32, 1), "observed_mask": (1, 32, 1)}
    _runs_both_sets(prepared)


def test_video_fewest_tubelet_frames_vjepa2():
    # pixel_values_videos [B, frames, C, H, W]: two tubelets of 2 frames, at the smallest side
    prepared = generic.prepare("vjepa2")
    assert _shapes(prepared) == {"pixel_values_videos": (1, 4, 3, 32, 32)}
    assert modality_of(prepared.inputs.names) is Modality.VISION
    _runs_both_sets(prepared)


def test_a_fixed_video_table_is_two_tubelets_videoprism():
    # VideoPrism's position table is fixed at 16 frames of 288 px (tubelets of 1x18x18): the
    # planner's small clips did not fit it, so 4,096 patches were ported (past the sweep's 900 s)
    kwargs = tiny_kwargs(hf_resolve.config_class("videoprism_vision_model"))
    assert (kwargs["image_size"], kwargs["num_frames"]) == (36, 2)
    vivit = tiny_kwargs(hf_resolve.config_class("vivit"))  # tubelets of 2x16x16
    assert (vivit["image_size"], vivit["num_frames"]) == (32, 4)
    assert "image_size" not in tiny_kwargs(hf_resolve.config_class("videomae"))  # int tubelet
    prepared = generic.prepare("videoprism_vision_model")
    assert _shapes(prepared) == {"pixel_values_videos": (1, 2, 3, 36, 36)}
    _runs_both_sets(prepared)


def test_flat_patches_read_as_images_kimi_k25_vision():
    # Kimi-K2.5's tower convolves each patch: [patches, C, P, P], merged by its 2x2 kernel
    prepared = generic.prepare("kimi_k25_vision")
    assert _shapes(prepared) == {"pixel_values": (16, 3, 14, 14), "grid_thw": (1, 3)}
    _runs_both_sets(prepared)


def test_temporal_patch_spelled_patch_temporal_muse_spark_vision():
    # MuseSpark spells the temporal patch patch_temporal (2): 3 x 2 x 14 x 14 values per patch
    assert _shapes(generic.prepare("muse_spark_vision"))["pixel_values"] == (16, 1176)


def test_each_size_is_tried_on_a_copy_swin():
    # at 32 x 32 Swin shrinks a stage's window for good and then fails at every size; tried on
    # copies, the model still runs at its own 224
    prepared = generic.prepare("swin")
    assert _shapes(prepared) == {"pixel_values": (1, 3, 224, 224)}
    _runs_both_sets(prepared)


def test_python_numbers_among_the_outputs_are_dropped_maskformer_swin():
    assert check_type("maskformer-swin", ListDepth.BUILD) == "ok"


def test_widths_that_must_agree_follow_the_tiny_hidden_size():
    # WavTokenizer: codebook_dim == hidden_size (one config); Granite-Docling: the vision
    # tower's out_hidden_size == the text tower's hidden_size (across towers)
    assert tiny_kwargs(hf_resolve.config_class("wavtokenizer"))["codebook_dim"] == 64
    assert tiny_kwargs(hf_resolve.config_class("granite_docling"))["vision_config"]["out_hidden_size"] == 64
    assert check_type("wavtokenizer", ListDepth.BUILD) == "ok"


def test_a_codecs_channel_ladder_ends_at_the_tiny_width_dac():
    # DAC doubles encoder_hidden_size at each of 4 downsamplings and halves decoder_hidden_size
    # at each upsampling, fields no concept names: at its defaults 76.6 M parameters (300 MB of
    # IR, a minute a port); XCodec holds a DAC config as its acoustic model (33.6 M before)
    kwargs = tiny_kwargs(hf_resolve.config_class("dac"))
    assert (kwargs["encoder_hidden_size"], kwargs["decoder_hidden_size"]) == (4, 64)
    for model_type, most in (("dac", 1_000_000), ("xcodec", 2_000_000)):
        prepared = generic.prepare(model_type)
        assert sum(p.numel() for p in prepared.model.parameters()) < most, model_type
        _runs_both_sets(prepared)



def test_a_codecs_filter_ladder_ends_at_the_tiny_width_vibevoice_encodec_mimi():
    # num_filters doubles at each ratio: VibeVoice's 32 filters reach 2048 channels after 6
    # (172 M parameters, 224 s a sweep port), EnCodec's 32 and Mimi's 64 after 4 (14.4 M, 23.0 M)
    assert tiny_kwargs(hf_resolve.config_class("vibevoice_acoustic_tokenizer"))["num_filters"] == 4
    assert tiny_kwargs(hf_resolve.config_class("encodec"))["num_filters"] == 4
    for model_type in ("vibevoice_acoustic_tokenizer", "encodec", "mimi"):
        prepared = generic.prepare(model_type)
        assert sum(p.numel() for p in prepared.model.parameters()) < 3_000_000, model_type
        _runs_both_sets(prepared)

def test_widths_under_their_own_names_flaubert_xlm_blt_gemma4():
    # XLM's (and FlauBERT's) hidden size is emb_dim (2048: 103 M parameters); BLT's hashed
    # n-gram table has encoder_hash_byte_group_vocab rows (500,002: 192 M parameters)
    assert tiny_kwargs(hf_resolve.config_class("flaubert"))["emb_dim"] == 64
    assert tiny_kwargs(hf_resolve.config_class("xlm"))["emb_dim"] == 64
    assert tiny_kwargs(hf_resolve.config_class("blt"))["encoder_hash_byte_group_vocab"] == 1024
    # Gemma 4's per-layer embeddings: vocab_size_per_layer_input rows (262,144: 134 M parameters)
    assert tiny_kwargs(hf_resolve.config_class("gemma4_text"))["vocab_size_per_layer_input"] == 1024
    # GLM-5-Next's vision merger: projection_intermediate_size (10,240: 47 M parameters)
    vision = tiny_kwargs(hf_resolve.config_class("glm5_next"))["vision_config"]
    assert vision["projection_intermediate_size"] == 128
    for model_type in ("flaubert", "xlm", "blt", "gemma4_text"):
        prepared = generic.prepare(model_type)
        assert sum(p.numel() for p in prepared.model.parameters()) < 1_500_000, model_type
        _runs_both_sets(prepared)


def test_stage_lists_under_other_names_cvt():
    # CvT's depth [1, 2, 10] and embed_dim [64, 192, 384] (19.6 M parameters); its stage i reads
    # its i-th block's drop rate, so [1, 1, 1] does not build
    kwargs = tiny_kwargs(hf_resolve.config_class("cvt"))
    assert (kwargs["depth"], kwargs["embed_dim"]) == ([1, 2, 3], [16, 48, 96])
    prepared = generic.prepare("cvt")
    assert sum(p.numel() for p in prepared.model.parameters()) < 1_000_000
    _runs_both_sets(prepared)


def test_ssm_heads_span_expand_times_hidden_mamba2():
    kwargs = tiny_kwargs(hf_resolve.config_class("mamba2"))
    assert kwargs["num_heads"] * kwargs["head_dim"] == 2 * kwargs["hidden_size"]
    assert kwargs["num_heads"] % kwargs["n_groups"] == 0
    assert check_type("mamba2", ListDepth.BUILD) == "ok"


def test_per_layer_stage_lists_and_nested_audio_patches_muse_spark_audio():
    # one depth, width and patch per layer: cut to the tiny 2 layers; samples a multiple of the
    # patches' product (4 frames of 96)
    kwargs = tiny_kwargs(hf_resolve.config_class("muse_spark_audio"))
    assert len(kwargs["depths"]) == len(kwargs["patch_sizes"]) == 2
    assert _shapes(generic.prepare("muse_spark_audio")) == {"input_values": (1, 384)}


def test_group_norms_and_a_default_language():
    # BiT's 32 groups split the narrow stages; X-MOD picks its one language's adapter
    assert tiny_kwargs(hf_resolve.config_class("bit"))["num_groups"] == 4
    assert tiny_kwargs(hf_resolve.config_class("xmod"))["default_language"] == "en_XX"
    assert check_type("bit", ListDepth.BUILD) == check_type("xmod", ListDepth.BUILD) == "ok"


def test_a_model_that_does_not_build_says_why_in_one_line():
    # a library transformers names as missing; a default config that fails too (its own bug)
    assert check_type("dinat", ListDepth.BUILD).startswith(
        "cannot drive model 'dinat': DinatModel needs natten, which is not installed here")
    assert "does not build even from its default config" in check_type("nemotron", ListDepth.BUILD)


def test_rotary_sections_fit_a_partial_rotary_head_glm4v_moe_text():
    # GLM-4V rotates half of each 16-wide tiny head: sections sum to 4, not 8
    rope = tiny_kwargs(hf_resolve.config_class("glm4v_moe_text"))["rope_parameters"]
    assert sum(rope["mrope_section"]) == 4
    assert check_type("glm4v_moe_text", ListDepth.BUILD) == "ok"


def test_features_of_stacked_frames_wav2vec2_bert():
    # its feature projection reads 2 stacked frames of 80 mel bins
    assert _shapes(generic.prepare("wav2vec2-bert"))["input_features"] == (1, 16, 160)


def test_code_points_hashed_into_buckets_canine():
    # CANINE has no vocabulary: ids are characters, drawn below its hash bucket count
    assert check_type("canine", ListDepth.BUILD) == "ok"


def test_stage_widths_and_the_neck_follow_the_hidden_size_sam2_vision_model():
    # Hiera's embed_dim_per_stage starts at its hidden size; the neck reads the stages' widths
    kwargs = tiny_kwargs(hf_resolve.config_class("sam2_vision_model"))
    assert kwargs["backbone_config"]["embed_dim_per_stage"] == [64, 128, 256, 512]
    assert kwargs["backbone_channel_list"] == [512, 256, 128, 64]
    assert check_type("sam2_vision_model", ListDepth.BUILD) == "ok"
