"""The generic Hugging Face driver: resolving MODEL, tiny configs, ``--set``, inputs.

Expected sizes come from the tiny preset's stated values (2 layers, hidden 64, 4 heads, vocab
1024) checked on the built modules' own weights, and from transformers' config classes read
directly, never from the driver's derivation.
"""

from __future__ import annotations

import json

import pytest
import torch
import transformers

from harness.errors import (
    ConfigOverrideError,
    HarnessError,
    ModelDirectoryError,
    ModelOptionError,
    UnknownModelTypeError,
    UnsupportedModelError,
)
from harness.models import drivers, generic, hf_list
from harness.models.hf_config import Size
from harness.models.hf_resolve import Part, SourceKind, model_types, resolve

ISSUE_TYPES = ("gpt2", "gpt_neo", "gpt_neox", "gptj", "llama", "mistral", "qwen2", "qwen3", "phi",
               "phi3", "gemma", "falcon", "bloom", "opt", "mpt", "stablelm", "bert", "roberta",
               "distilbert", "t5", "bart")


def n_params(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


# --- resolving MODEL -------------------------------------------------------------------------


def test_every_issue_architecture_is_a_known_type():
    known = model_types()
    assert set(ISSUE_TYPES) <= set(known)
    assert len(known) > 300  # every type with a base model, not a hand-kept list


@pytest.mark.parametrize("name, model_type", [("gpt2", "gpt2"), ("GPT-NeoX", "gpt_neox"),
                                               ("Qwen2", "qwen2"), ("gpt-j", "gptj")])
def test_types_resolve_ignoring_case_and_separators(name, model_type):
    spec = resolve(name)
    assert (spec.kind, spec.model_type, spec.part) == (SourceKind.TYPE, model_type, Part.FULL)


def test_encoder_part_and_opt():
    assert resolve("t5:encoder").part is Part.ENCODER
    assert resolve("t5:encoder").label == "t5-encoder"
    assert resolve("opt").kind is SourceKind.OPT
    with pytest.raises(ModelOptionError, match="no encoder part"):
        resolve("opt:encoder")


def test_unknown_model_names_the_list_command_and_close_matches():
    with pytest.raises(UnknownModelTypeError) as info:
        resolve("lama")
    assert "llama" in info.value.suggestions
    message = str(info.value)
    assert "harness port --list" in message and "'llama'" in message
    assert "\n" not in message  # one paragraph
    with pytest.raises(UnknownModelTypeError) as info:
        resolve("zzzqqq")
    assert info.value.suggestions == [] and "Did you mean" not in str(info.value)


def _save_tiny_gpt2(path, weights: bool, safetensors: bool = True) -> transformers.GPT2Model:
    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=100,
                                     n_positions=32, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(7)
    model = transformers.GPT2Model(config).eval()
    if weights and safetensors:
        model.save_pretrained(path)
    elif weights:
        config.save_pretrained(path)
        torch.save(model.state_dict(), path / "pytorch_model.bin")
    else:
        config.save_pretrained(path)
    return model


@pytest.mark.parametrize("safetensors, weight_file", [(True, "model.safetensors"),
                                                      (False, "pytorch_model.bin")])
def test_directory_with_weights_loads_them(tmp_path, safetensors, weight_file):
    saved = _save_tiny_gpt2(tmp_path / "m", weights=True, safetensors=safetensors)
    spec = resolve(str(tmp_path / "m"))
    assert spec.kind is SourceKind.DIRECTORY and spec.weights.name == weight_file
    prepared = drivers.prepare(spec)
    assert prepared.config.n_layer == 1 and prepared.config.n_embd == 32  # its own sizes
    for name, tensor in saved.state_dict().items():
        assert torch.equal(prepared.model.state_dict()[name], tensor), name
    with torch.no_grad():
        expected = saved(**prepared.inputs.as_kwargs()).last_hidden_state
    torch.testing.assert_close(prepared.run_eager()[0], expected)
    assert weight_file in prepared.settings.weights


def test_directory_without_weights_is_random_at_its_own_sizes(tmp_path):
    saved = _save_tiny_gpt2(tmp_path / "c", weights=False)
    assert not (tmp_path / "c" / "model.safetensors").exists()
    prepared = drivers.prepare(str(tmp_path / "c"))
    assert prepared.spec.weights is None and prepared.settings.weights == "random (seed 0)"
    assert n_params(prepared.model) == n_params(saved)
    assert not torch.equal(prepared.model.wte.weight, saved.wte.weight)


def test_directory_in_working_directory_without_slash(tmp_path, monkeypatch):
    _save_tiny_gpt2(tmp_path / "mymodel", weights=False)
    monkeypatch.chdir(tmp_path)
    assert resolve("mymodel").kind is SourceKind.DIRECTORY


def test_bad_directories(tmp_path):
    with pytest.raises(ModelDirectoryError, match="no such directory"):
        resolve(str(tmp_path / "missing"))
    with pytest.raises(ModelDirectoryError, match="hub id"):
        resolve("meta-llama/Llama-2-7b-hf")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelDirectoryError, match=r"no config\.json"):
        resolve(str(tmp_path / "empty"))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{not json")
    with pytest.raises(ModelDirectoryError, match="not readable JSON"):
        resolve(str(tmp_path / "bad"))
    (tmp_path / "notype").mkdir()
    (tmp_path / "notype" / "config.json").write_text(json.dumps({"hidden_size": 8}))
    with pytest.raises(ModelDirectoryError, match="model_type"):
        resolve(str(tmp_path / "notype"))
    (tmp_path / "alien").mkdir()
    (tmp_path / "alien" / "config.json").write_text(json.dumps({"model_type": "lamma"}))
    with pytest.raises(ModelDirectoryError, match=r"lamma.*close: llama"):
        resolve(str(tmp_path / "alien"))


def test_directory_weights_that_do_not_fit_the_overrides(tmp_path):
    _save_tiny_gpt2(tmp_path / "m", weights=True)
    with pytest.raises(ModelDirectoryError, match="do not load"):
        drivers.prepare(str(tmp_path / "m"), generic.ModelOptions(overrides={"n_embd": 64}))
    with pytest.raises(ModelOptionError, match="own sizes"):
        drivers.prepare(str(tmp_path / "m"), generic.ModelOptions(size=Size.TINY))


def test_list_model_types():
    rows = hf_list.list_model_types()
    names = [r.model_type for r in rows]
    assert names[0] == "opt" and names.count("opt") == 1
    by_name = {r.model_type: r for r in rows}
    assert by_name["llama"].model_class == "LlamaModel"
    assert by_name["t5"].config_class == "T5Config"
    built = [r for r in rows if r.model_class != "(not available)"]
    assert all(r.tiny == "" for r in built)  # names only: nothing built
    # a vision library that cannot be imported is one row that says why, not silence
    for missing in (r for r in rows if r.model_class == "(not available)"):
        assert missing.model_type in ("torchvision:NAME", "timm:NAME") and missing.tiny


def test_list_depth_config_checks_the_tiny_config():
    from harness.models.hf_list import ListDepth, check_type

    assert check_type("llama", ListDepth.CONFIG) == "ok"
    assert check_type("vit", ListDepth.BUILD) == "ok"  # pixels are planned now
    assert "prompt_pixel_values" in check_type("seggpt", ListDepth.BUILD)  # not planned
    with pytest.raises(ModelOptionError):
        ListDepth.parse("everything")


# --- the tiny config -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prepared_cache():
    cache: dict[str, generic.PreparedModel] = {}

    def get(name: str) -> generic.PreparedModel:
        if name not in cache:
            cache[name] = drivers.prepare(name)
        return cache[name]

    return get


@pytest.mark.parametrize("name", ["gpt2", "llama", "mistral", "gemma", "falcon", "gptj", "gpt_neo",
                                  "mpt", "bloom", "distilbert", "t5", "bart", "phi3", "qwen3"])
def test_tiny_configs_are_tiny_and_run(prepared_cache, name):
    prepared = prepared_cache(name)
    embedding = prepared.model.get_input_embeddings().weight
    assert tuple(embedding.shape) == (1024, 64)  # tiny vocab and hidden
    assert n_params(prepared.model) < 400_000  # a default-size config has >= 60M
    assert not prepared.model.training
    assert prepared.config._attn_implementation == "eager"
    assert getattr(prepared.config, "use_cache", False) is False  # DistilBERT has no such field
    out = prepared.run_eager()
    assert tuple(out[0].shape) == (1, 8, 64)
    assert torch.isfinite(out[0]).all()


def test_tiny_llama_family_derivations(prepared_cache):
    llama = prepared_cache("llama").model
    assert len(llama.layers) == 2
    attention = llama.layers[0].self_attn
    assert attention.head_dim == 16 and attention.q_proj.out_features == 64
    mistral = prepared_cache("mistral").model.layers[0].self_attn
    # Mistral's default is grouped-query (8 kv heads for 32): kept, as 2 kv heads for 4
    assert transformers.MistralConfig().num_key_value_heads < transformers.MistralConfig().num_attention_heads
    assert mistral.k_proj.out_features == 2 * 16
    gemma = prepared_cache("gemma").model.layers[0].self_attn
    assert transformers.GemmaConfig().head_dim == 256  # not hidden / heads: must be derived
    assert gemma.head_dim == 16


def test_tiny_derivations_of_other_families(prepared_cache):
    t5 = prepared_cache("t5").model
    assert len(t5.encoder.block) == 2 and len(t5.decoder.block) == 2
    assert t5.encoder.block[0].layer[0].SelfAttention.key_value_proj_dim == 16  # d_kv
    bart = prepared_cache("bart").model
    assert len(bart.encoder.layers) == 2 and len(bart.decoder.layers) == 2
    neo = prepared_cache("gpt_neo").config
    assert neo.attention_layers == ["global", "local"]
    gptj = prepared_cache("gptj").model.h[0].attn
    assert gptj.rotary_dim <= gptj.head_dim == 16
    phi3 = prepared_cache("phi3").config
    assert transformers.Phi3Config().pad_token_id >= 1024  # outside the tiny vocabulary
    assert phi3.pad_token_id < 1024
    assert prepared_cache("distilbert").model.transformer.layer[0].ffn.lin1.out_features == 128


def test_a_composite_configs_auto_typed_tower_is_tiny_too():
    """LLaVA's text_config is typed AutoConfig; its default is a full-size Llama (7B: the
    --all catalog spent 60 s and 18 GB building one) unless it is made tiny as well."""
    config = generic.build_config(resolve("llava"), Size.TINY, {})
    text, vision = config.text_config, config.vision_config
    assert text.model_type == transformers.LlavaConfig().text_config.model_type == "llama"
    assert (text.hidden_size, text.num_hidden_layers, text.vocab_size) == (64, 2, 1024)
    assert vision.hidden_size == 64 and vision.num_hidden_layers == 2


def test_default_size_is_the_config_classes_own():
    spec = resolve("llama")
    config = generic.build_config(spec, Size.DEFAULT, {})
    assert config.hidden_size == transformers.LlamaConfig().hidden_size == 4096
    assert config._attn_implementation == "eager" and config.use_cache is False
    assert Size.parse("Default") is Size.DEFAULT
    with pytest.raises(ModelOptionError, match="tiny"):
        Size.parse("huge")


def test_build_is_seeded_and_leaves_the_caller_rng_alone():
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    a = drivers.prepare("gpt2")
    assert torch.equal(torch.rand(3), expected)
    b = drivers.prepare("gpt2")
    c = drivers.prepare("gpt2", generic.ModelOptions(seed=1))
    assert torch.equal(a.model.wte.weight, b.model.wte.weight)
    assert not torch.equal(a.model.wte.weight, c.model.wte.weight)
    assert all(torch.equal(x, y) for x, y in zip(a.inputs.tensors, b.inputs.tensors, strict=False))


# --- --set -----------------------------------------------------------------------------------


def test_overrides_reach_the_model_and_move_derived_sizes():
    prepared = drivers.prepare("llama", generic.ModelOptions(overrides={"num_hidden_layers": 3,
                                                           "hidden_size": 128}))
    assert len(prepared.model.layers) == 3
    attention = prepared.model.layers[0].self_attn
    assert attention.head_dim == 32 and tuple(attention.q_proj.weight.shape) == (128, 128)


def test_overrides_through_aliases_and_strings():
    gpt2 = drivers.prepare("gpt2", generic.ModelOptions(overrides={"num_hidden_layers": "3"}))
    assert len(gpt2.model.h) == 3 and gpt2.config.n_layer == 3
    llama = generic.build_config(resolve("llama"), Size.TINY, {"rms_norm_eps": 1,
                                                           "attention_bias": "True"})
    assert llama.rms_norm_eps == 1.0 and llama.attention_bias is True


@pytest.mark.parametrize("model, overrides, match", [
    ("llama", {"num_layer": 3}, "no field 'num_layer'.*num_hidden_layers"),
    ("llama", {"num_hidden_layers": "three"}, "expected int"),
    ("llama", {"hidden_act": 3}, "expected str"),
    ("llama", {"num_hidden_layers": True}, "expected int"),
    ("llama", {"use_cache": True}, "driver sets use_cache"),
    ("llama", {"num_key_value_heads": 3}, "multiple of num_key_value_heads"),
    ("gpt2", {"n_embd": 66}, "divisible by n_head"),
])
def test_bad_overrides(model, overrides, match):
    with pytest.raises(ConfigOverrideError, match=match) as info:
        drivers.prepare(model, generic.ModelOptions(overrides=overrides))
    assert "--set" in str(info.value)


def test_bad_override_on_opt_is_the_same_error():
    with pytest.raises(ConfigOverrideError, match="no field 'n_layer'"):
        drivers.prepare("opt", generic.ModelOptions(overrides={"n_layer": 2}))


# --- inputs ----------------------------------------------------------------------------------


def test_inputs_of_a_decoder_only_model(prepared_cache):
    prepared = prepared_cache("llama")
    first, second = prepared.inputs, prepared.second_inputs
    assert first.names == second.names == ("input_ids", "attention_mask")
    assert not torch.equal(first.tensors[0], second.tensors[0])
    assert bool((first.tensors[1] == 1).all())
    mask = second.tensors[1][0]
    assert mask[0] == 0 and mask[-1] == 1  # left padding, as decoder tokenizers pad
    assert prepared.config.pad_token_id is None  # Llama has none: padding holds id 0
    assert second.tensors[0][0, 0] == 0
    first_real = int(mask.argmax())
    assert second.tensors[0][0, first_real] == prepared.config.bos_token_id  # BOS starts the text


def test_inputs_of_an_encoder(prepared_cache):
    prepared = prepared_cache("bert")
    assert prepared.inputs.names == ("input_ids", "attention_mask", "token_type_ids")
    mask = prepared.second_inputs.tensors[1][0]
    assert mask[0] == 1 and mask[-1] == 0  # right padding
    assert prepared.inputs.tensors[2].sum() == 0 and prepared.second_inputs.tensors[2].sum() > 0
    assert (prepared.second_inputs.tensors[0][0, mask == 0] == prepared.config.pad_token_id).all()


def test_inputs_avoid_special_ids(prepared_cache):
    prepared = prepared_cache("roberta")
    pad = prepared.config.pad_token_id
    assert pad is not None and not (prepared.inputs.tensors[0] == pad).any()


def test_inputs_of_encoder_decoders(prepared_cache):
    t5 = prepared_cache("t5")
    assert t5.inputs.names == ("input_ids", "attention_mask", "decoder_input_ids")
    # T5 starts the decoder with the pad id (its config has no decoder_start_token_id at 5.24)
    assert getattr(t5.config, "decoder_start_token_id", None) is None
    assert t5.inputs.tensors[2][0, 0] == t5.config.pad_token_id == 0
    bart = prepared_cache("bart")
    assert "decoder_input_ids" in bart.inputs.names
    encoder = drivers.prepare("t5:encoder")
    assert type(encoder.model).__name__ == "T5EncoderModel"
    assert encoder.inputs.names == ("input_ids", "attention_mask")
    bart_encoder = drivers.prepare("bart:encoder")
    assert bart_encoder.inputs.names == ("input_ids", "attention_mask")
    with pytest.raises(ModelOptionError, match="not an encoder-decoder"):
        drivers.prepare("gpt2:encoder")


@pytest.mark.parametrize("name", ["llama", "bert", "t5", "opt"])
def test_eager_runs_on_both_sets_and_the_padded_mask_matters(prepared_cache, name):
    prepared = prepared_cache(name)
    second = prepared.run_eager(prepared.second_inputs)
    assert all(torch.isfinite(t).all() for t in second)
    # the same ids with the padded mask: the mask must change the result, or it tests nothing
    mixed = generic.InputSet(prepared.inputs.names,
                        (prepared.inputs.tensors[0], prepared.second_inputs.tensors[1],
                         *prepared.inputs.tensors[2:]), "mixed")
    assert not torch.equal(prepared.run_eager()[0], prepared.run_eager(mixed)[0])


def test_batch_and_sequence_options():
    prepared = drivers.prepare("gpt2", generic.ModelOptions(batch=2, seq=5))
    assert all(tuple(t.shape) == (2, 5) for t in prepared.inputs.tensors)
    assert prepared.second_inputs.tensors[1][1].all()  # only row 0 is padded
    with pytest.raises(ModelOptionError, match="positions"):
        drivers.prepare("gpt2", generic.ModelOptions(seq=500))
    with pytest.raises(ModelOptionError, match="sequence length"):
        drivers.prepare("gpt2", generic.ModelOptions(seq=0))
    one = drivers.prepare("gpt2", generic.ModelOptions(seq=1))
    assert one.second_inputs.tensors[1].all()  # a single token cannot be padded


def test_a_model_whose_inputs_cannot_be_planned_is_refused_clearly():
    with pytest.raises(UnsupportedModelError, match="prompt_pixel_values") as info:
        drivers.prepare("seggpt")  # its prompt image and mask
    assert isinstance(info.value, HarnessError) and "--input prompt_pixel_values=" in str(info.value)


def test_settings_record(prepared_cache):
    settings = prepared_cache("bert").settings
    text = " ".join(settings.sentences())
    assert "BertModel" in text and "eager" in text and "use_cache=False" in text
    assert "token_type_ids int64[1, 8]" in text
    data = json.loads(json.dumps(settings.to_json()))
    assert data["outputs"] == ["last_hidden_state", "pooler_output"]
    assert data["sizes"]["layers"] == 2 and data["size"] == "tiny"


def test_a_type_with_several_base_classes_builds_the_first():
    """funnel maps to (FunnelModel, FunnelBaseModel): the class is the first, not the tuple
    (the tuple reached ``cls.__name__`` and ended as an internal error)."""
    from harness.models.hf_resolve import model_class, model_class_name

    cls = model_class("funnel")
    assert isinstance(cls, type)
    assert cls.__name__ == model_class_name("funnel") == "FunnelModel"


def test_a_type_mapped_to_a_class_transformers_does_not_define_is_refused():
    """transformers 5.24.0 maps voxtral_realtime_text to VoxtralRealtimeTextModel and defines no
    such class (its mapping raises ValueError): a refusal naming the class, not an internal
    error; ``sweep --all`` then lists the type with that why."""
    from harness.models.hf_resolve import model_class

    with pytest.raises(UnsupportedModelError,
                       match=r"'voxtral_realtime_text': transformers 5\.24\.0 maps it to "
                             r"VoxtralRealtimeTextModel, a class it does not define"):
        model_class("voxtral_realtime_text")
