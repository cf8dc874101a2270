"""``harness port`` on each input kind the planner makes, through the real frontends,
torch-mlir-opt and the RefBackend, at tiny size: pixels (ViT), pixels with a pixel mask (DETR),
a spectrogram with decoder ids (Whisper), raw audio with an attention mask and padded frames
(Wav2Vec2), token ids with image placeholders beside pixels (LLaVA). And ``--input``.

Outcomes are the ones each model really has at the pinned versions (torch 2.13.0, torch-mlir
20261001, transformers 5.24.0).
"""

from __future__ import annotations

import pytest
import torch

from harness import cli
from harness.errors import ModelOptionError, UnsupportedModelError
from harness.frontends.names import FrontendName
from harness.models import generic, hf_media, hf_plan
from harness.port import PortOptions, PortRecord, port_model
from harness.port.verify import mask_argument, padded_positions
from harness.port.record import PortOutcome

BOTH = (FrontendName.TORCHSCRIPT, FrontendName.FX)


def _port(tmp_path, model: str, frontends=BOTH, **options) -> dict[str, object]:
    record: PortRecord = port_model(model, PortOptions(out=str(tmp_path), frontends=frontends,
                                                       **options))
    [variant] = record.variants
    return {p.frontend.value: p for p in variant.ports}


def _verified(port) -> None:
    assert str(port.outcome) == PortOutcome.VERIFIED.value, (port.failed_stage, port.blockers)
    assert [str(c.inputs) for c in port.numerics] == ["traced", "second"]
    assert all(str(c.verdict) == "verified" for c in port.numerics)


# --- one port per input kind -----------------------------------------------------------------


def test_pixels_vit_verifies_on_both_frontends(tmp_path):
    """ViT checks the image size against its config (here set to 32, patch 8, for speed): the
    pixels are traced at that size."""
    ports = _port(tmp_path, "vit", overrides={"image_size": 32, "patch_size": 8})
    for port in ports.values():
        _verified(port)
        assert "(%arg0: tensor<1x3x32x32xf32>) -> (tensor<1x17x64xf32>, tensor<1x64xf32>)" in port.signature
        assert "pixels 32x32 from seed 1" in port.numerics[1].description


def test_vit_keeps_the_size_its_config_checks():
    """The planner's smaller sizes are refused by ViT's own check, so the config's 224 x 224 is
    what is traced; ConvNeXt takes the smallest candidate."""
    assert generic.prepare("vit").inputs.shapes() == "pixel_values float32[1, 3, 224, 224]"


def test_pixels_with_a_pixel_mask_detr(tmp_path):
    """DETR takes any size its backbone's strides divide: the smallest candidate, 32 x 32, with
    a pixel mask whose second set marks a quarter of the columns as padding. FX verifies (the
    TorchScript path meets the text models' ``&`` mask blocker, measured in the report)."""
    fx = _port(tmp_path, "detr", frontends=(FrontendName.FX,))["fx"]
    _verified(fx)
    assert "tensor<1x3x32x32xf32>, %arg1: tensor<1x32x32xi64>" in fx.signature
    assert "pixel_mask 0 on row 0's right quarter" in fx.numerics[1].description


def test_spectrogram_and_decoder_ids_whisper(tmp_path):
    """Whisper's frames come from its (tiny) max_source_positions: 2 x 64 = 128; the decoder gets
    token ids. FX verifies; the TorchScript trace keeps the causal mask's aten.diff, which no
    pass legalizes: a named blocker at the mask's own line."""
    ports = _port(tmp_path, "whisper")
    _verified(ports["fx"])
    assert ports["fx"].signature.startswith(
        "func.func @main(%arg0: tensor<1x80x128xf32>, %arg1: tensor<1x8xi64>)")
    ts = ports["torchscript"]
    assert str(ts.outcome) == PortOutcome.FAILS.value and str(ts.failed_stage) == "torchscript-to-torch"
    assert "aten.diff" in ts.blockers[0].op and "masking_utils.py" in ts.blockers[0].location


def test_raw_audio_wav2vec2_names_its_runtime_blocker(tmp_path, monkeypatch):
    """1360 samples are the fewest that leave 4 frames. The lowered code reaches execution and
    stops at a runtime check: ``hidden_states[~mask] = 0`` (a boolean-mask index_put) lowers to
    a load out of bounds; the blocker names the op and the model's line, not just the signal.

    The port's first run is unchecked, and what an out-of-bounds load does there is undefined
    (it segfaults nearly always, then the checked rerun names the load; on a rare run it read
    memory that left the numbers right): here the port's runs are lowered with the runtime
    checks from the start, so the check aborts at the load every time."""
    from harness.execute import backend_ref
    from harness.execute.refbackend import RefBackendOptions

    def checked(**given):  # runtime checks on, whatever the caller passes (it passes False)
        return RefBackendOptions(**{**given, "runtime_checks": True})

    monkeypatch.setattr(backend_ref, "RefBackendOptions", checked)
    fx = _port(tmp_path, "wav2vec2", frontends=(FrontendName.FX,))["fx"]
    assert fx.signature.startswith("func.func @main(%arg0: tensor<1x1360xf32>, %arg1: tensor<1x1360xi64>)")
    assert str(fx.outcome) == PortOutcome.FAILS.value and str(fx.failed_stage) == "execution"
    [blocker] = fx.blockers
    assert blocker.op == "memref.load" and "out-of-bounds" in blocker.message
    assert blocker.location.endswith("wav2vec2/modeling_wav2vec2.py:671")
    assert blocker.signature == "execution: SIGABRT: memref.load out-of-bounds access"
    # and the torch ops that line became: the boolean-mask index_put is what to report
    assert "torch.aten.bitwise_not, torch.aten.clone, torch.aten.index_put." in blocker.explanation


class Frames(torch.nn.Module):
    """Raw audio -> frames: a strided conv, as a speech model's feature encoder starts."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(1, 2, kernel_size=3, stride=3)

    def forward(self, input_values, attention_mask):
        frames = self.conv(input_values[:, None, :]).transpose(1, 2)  # [B, frames, 2]
        return frames * 2.0


def test_padded_frames_are_left_out_through_the_refbackend(tmp_path):
    """The second set's padded frames (which the set names: its mask counts samples) are left
    out of the comparison and said so; the mask is no --padding-mask argument."""
    from harness.port.frontend import port_frontend
    from harness.port.progress import QUIET
    from harness.port.subject import Subject

    torch.manual_seed(0)
    module = Frames().eval()
    wave = torch.randn(1, 12)
    ones = torch.ones(1, 12, dtype=torch.int64)
    mask = ones.clone()
    mask[0, 6:] = 0
    names = ("input_values", "attention_mask")
    first = generic.InputSet(names, (wave, ones), "unpadded")
    second = generic.InputSet(names, (wave + 1, mask), "padded",
                         padded=torch.tensor([[False, False, True, True]]))
    subject = Subject("frames", module, first, second, output_names=("frames",))
    port = port_frontend(subject, FrontendName.FX, tmp_path / "fx", PortOptions(out=str(tmp_path)),
                         QUIET)
    _verified(port)
    assert port.numerics[0].excluded == ""
    assert port.numerics[1].excluded == ("2 padded frames (computed from zero samples the "
                                         "attention mask leaves out)")
    assert port.numerics[1].padding_mask is None


def test_image_placeholders_beside_pixels_llava(tmp_path):
    """LLaVA's vision tower yields 49 features at 224 x 224 (patch 32, CLS dropped): the ids hold
    its image token 49 times after the first token, 8 + 49 in all. Through TorchScript with the
    named fixes (the text tower's ``&`` mask) it verifies."""
    ts = _port(tmp_path, "llava", frontends=(FrontendName.TORCHSCRIPT,), fix=True)["torchscript"]
    _verified(ts)
    assert "%arg0: tensor<1x57xi64>, %arg1: tensor<1x3x224x224xf32>" in ts.signature
    assert "49 image token(s)" in ts.numerics[0].description
    assert [f.fix for f in ts.fixes] == ["bitwise-and-or"]


# --- the planner, without frontends ----------------------------------------------------------


def test_smallest_size_the_model_accepts():
    assert generic.prepare("convnext").inputs.shapes() == "pixel_values float32[1, 3, 32, 32]"
    whisper = generic.prepare("whisper:encoder")
    assert whisper.inputs.shapes() == "input_features float32[1, 80, 128]"


def test_sample_count_is_the_fewest_for_four_frames():
    prepared = generic.prepare("wav2vec2")
    samples = prepared.inputs.tensors[0].shape[-1]
    lengths = prepared.model._get_feat_extract_output_lengths(torch.tensor([samples, samples - 1]))
    assert lengths.tolist() == [hf_media.AUDIO_FRAMES, hf_media.AUDIO_FRAMES - 1]
    padded = prepared.second_inputs.padded
    frames = int(lengths[0])
    real = int(prepared.model._get_feat_extract_output_lengths(
        prepared.second_inputs.tensors[1][0].sum()))
    assert padded.shape == (1, frames) and padded[0].tolist() == [i >= real for i in range(frames)]
    assert padded_positions(prepared.second_inputs).tolist() == padded.tolist()
    assert mask_argument(prepared.second_inputs) is None


def test_placeholder_count_matches_the_image_features():
    prepared = generic.prepare("llava")
    ids = prepared.inputs.as_kwargs()["input_ids"]
    token = prepared.config.image_token_id
    assert token < prepared.config.text_config.vocab_size
    with torch.no_grad():
        features = prepared.model.get_image_features(
            pixel_values=prepared.inputs.as_kwargs()["pixel_values"],
            vision_feature_layer=prepared.config.vision_feature_layer,
            vision_feature_select_strategy=prepared.config.vision_feature_select_strategy)
    count = sum(f.shape[0] for f in features.pooler_output)
    assert int((ids == token).sum()) == count == 49


def test_a_required_input_the_planner_cannot_make_is_refused_then_given():
    # SegGPT's prompt image (PatchTST's past_values, the example before, is planned now); it
    # stacks the prompt over the image, so the three are given at half its 896 x 448
    with pytest.raises(UnsupportedModelError) as info:
        generic.prepare("seggpt")
    text = str(info.value)
    assert "'prompt_pixel_values' of shape (batch_size, num_channels, height, width)" in text
    assert "--input prompt_pixel_values=SHAPE[:DTYPE]" in text and "\n" not in text
    shapes = [f"{n}=1x3x448x448" for n in ("pixel_values", "prompt_pixel_values", "prompt_masks")]
    given = generic.prepare("seggpt", generic.ModelOptions(inputs=tuple(shapes)))
    assert given.inputs.shapes() == ", ".join(
        f"{n} float32[1, 3, 448, 448]" for n in ("pixel_values", "prompt_pixel_values", "prompt_masks"))
    assert given.second_inputs.tensors[1].shape == (1, 3, 448, 448)


def test_given_input_names_no_argument():
    with pytest.raises(UnsupportedModelError, match="--input pixel_mask names no argument"):
        generic.prepare("vit", generic.ModelOptions(inputs=("pixel_mask=1x32x32:int64",)))


def test_given_input_replaces_the_planned_one():
    prepared = generic.prepare("convnext", generic.ModelOptions(inputs=("pixel_values=1x3x64x64",)))
    assert prepared.inputs.shapes() == "pixel_values float32[1, 3, 64, 64]"
    assert "pixel_values given (1x3x64x64)" in prepared.inputs.description


def test_parse_given():
    assert hf_media.parse_given("image_grid_thw=1x3:int64") == hf_media.GivenInput(
        "image_grid_thw", (1, 3), torch.int64)
    assert hf_media.parse_given("x=2") == hf_media.GivenInput("x", (2,), torch.float32)
    given = hf_media.GivenInput("m", (2, 2), torch.int64)
    assert given.make(torch.Generator()).tolist() == [[1, 1], [1, 1]]
    assert hf_plan.InputKind.parse("pixels") is hf_plan.InputKind.PIXELS


@pytest.mark.parametrize("value, message", [
    ("pixel_values", "--input 'pixel_values' has no '=': it needs a name and a shape"),
    ("3d=1x2", "'3d' is not an input name"),
    ("pixel_values=1x3xbig", "shape '1x3xbig' is not sizes joined by 'x'"),
    ("pixel_values=", "shape '' is not sizes joined by 'x'"),
    ("pixel_values=1x0x32", "every size must be at least 1"),
    ("pixel_values=1x3x32x32:float8", "unknown dtype 'float8'"),
    # issue 45 item 8: an absurd shape was an internal error from torch's allocator (exit 3)
    ("input_ids=1x99999999999999:int64", "762,939,453 MiB, over the 1024 MiB one input"),
    ("pixel_values=100000x100000", "38,147 MiB, over the 1024 MiB"),
])
def test_bad_input_values_are_one_paragraph_usage_errors(tmp_path, capsys, value, message):
    out = tmp_path / "out"
    assert cli.main(["port", "convnext", "--input", value, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: ") and message in err, err
    assert "NAME=SHAPE[:DTYPE]" in err and err.count("\n") == 1
    assert not out.exists()
    with pytest.raises(ModelOptionError):
        hf_media.parse_given(value)


def test_an_input_given_twice_is_refused(tmp_path, capsys):
    assert cli.main(["port", "convnext", "--input", "pixel_values=1x3x32x32", "--input",
                     "pixel_values=1x3x64x64", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "--input gives 'pixel_values' twice" in err and err.count("\n") == 1


def test_audio_placeholders_match_the_audio_tower():
    """GLM-ASR's audio token is repeated as often as its audio tower yields at 16 frames: one
    placeholder fewer and the model's own check refuses the ids."""
    prepared = generic.prepare("glmasr")
    kwargs = prepared.inputs.as_kwargs()
    token = prepared.config.audio_token_id
    count = int((kwargs["input_ids"] == token).sum())
    assert count > 1 and f"{count} audio token(s) {token}" in prepared.inputs.description
    assert kwargs["input_features_mask"].all()
    keep = [i for i in range(kwargs["input_ids"].shape[1]) if i != 1]  # the first placeholder
    fewer = dict(kwargs, input_ids=kwargs["input_ids"][:, keep],
                 attention_mask=kwargs["attention_mask"][:, keep])
    assert int((fewer["input_ids"] == token).sum()) == count - 1
    with pytest.raises(Exception, match=r"(?i)token"), torch.no_grad():
        prepared.model(**fewer)


def test_audio_placeholders_of_a_model_without_a_placeholder_mask_qwen2_audio():
    """Qwen2-Audio merges audio features without ``get_placeholder_mask``: its placeholders are
    counted at its ``multi_modal_projector`` (128 frames: 32). One placeholder, as before, took
    its "legacy" merge, which raised on the padded second set (an internal error of the port)."""
    prepared = generic.prepare("qwen2_audio")
    token = prepared.config.audio_token_id
    for inputs in (prepared.inputs, prepared.second_inputs):
        ids = inputs.as_kwargs()["input_ids"]
        assert int((ids == token).sum(-1)[0]) == 32 and "32 audio token(s)" in inputs.description
        with torch.no_grad():
            prepared.model(**inputs.as_kwargs())  # the padded set too


@pytest.mark.parametrize("model, shapes", [
    ("videomae", "pixel_values float32[1, 16, 3, 224, 224]"),  # video: frames first
    ("parakeet_encoder", "input_features float32[1, 16, 80]"),  # [B, frames, mels]
    ("qwen2_5_vl_vision", "hidden_states float32[16, 1176], grid_thw int64[1, 3]"),
    ("omniasr_ctc", "input_values float32[1, 1, 1360]"),  # mono audio as [B, 1, samples]
    ("vilt", "input_ids int64[1, 8], attention_mask int64[1, 8], token_type_ids int64[1, 8], "
             "pixel_values float32[1, 3, 32, 32], pixel_mask int64[1, 32, 32]"),  # one tower
])
def test_other_layouts_the_model_reads(model, shapes):
    prepared = generic.prepare(model)
    assert prepared.inputs.shapes() == shapes
    if model == "qwen2_5_vl_vision":  # one 1 x 4 x 4 grid: 16 patches of 3 x 2 x 14 x 14 values
        assert prepared.inputs.as_kwargs()["grid_thw"].tolist() == [[1, 4, 4]]


@pytest.mark.parametrize("model", ["qwen2_vl_text", "swinv2", "detr", "wav2vec2"])
def test_tiny_presets_of_the_new_families_run(model):
    """Rotary sections summing to half the tiny head (Qwen2-VL's text tower), a head count that
    splits each Swin stage, transformers' ResNet for DETR's timm backbone, narrow audio convs:
    each tiny model runs its eager forward on the planned inputs."""
    prepared = generic.prepare(model)
    config = prepared.config
    if model == "qwen2_vl_text":
        head = config.hidden_size // config.num_attention_heads
        assert sum(config.rope_parameters["mrope_section"]) == head // 2
    if model == "swinv2":
        assert all(config.embed_dim * 2 ** i % h == 0 for i, h in enumerate(config.num_heads))
    if model == "detr":
        assert config.backbone_config.model_type == "resnet"
    if model == "wav2vec2":
        assert max(config.conv_dim) == 64
