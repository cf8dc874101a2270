"""``harness port`` on real architectures, both frontends, with the outcome each really has at
the pinned versions (torch 2.13.0, torch-mlir 20261001, transformers 5.24.0).

GPT-2 goes through the command line with its numbers checked (test_port_cli.py); Llama and BERT
run here, in this process. What they do today:

- TorchScript: the trace imports and reaches the torch backend contract; torch-to-linalg fails.
  MLIR names the literal ``dense<true>``; the blocker is its user ``aten.__and__.Tensor`` from
  transformers' ``masking_utils.py``, which no conversion lowers.
- FX: torch.export works; the wheel's fx_importer stops with "Could not find state mapping for
  buffer" on the non-persistent buffers (Llama's rotary ``inv_freq``, BERT's ``position_ids``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.frontends.names import FrontendName
from harness.port import PortOptions, PortRecord, port_model
from harness.port.record import PortOutcome

MASK_LINE = "transformers/masking_utils.py:54"


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    cache: dict[str, PortRecord] = {}

    def get(model: str) -> PortRecord:
        if model not in cache:
            out = tmp_path_factory.mktemp(f"port-{model}")
            cache[model] = port_model(model, PortOptions(out=str(out)))
        return cache[model]

    return get


def _ports(record: PortRecord) -> dict[str, object]:
    [variant] = record.variants
    return {p.frontend.value: p for p in variant.ports}


@pytest.mark.parametrize("model", ["llama", "bert"])
def test_torchscript_stops_at_the_and_mask_blocker(ported, model):
    ts = _ports(ported(model))["torchscript"]
    assert str(ts.outcome) == PortOutcome.FAILS.value and str(ts.failed_stage) == "torch-to-linalg"
    assert [str(s.name) for s in ts.stages] == ["trace", "import", "torchscript-to-torch", "torch-to-linalg"]
    assert [s.ok for s in ts.stages] == [True, True, True, False]
    assert str(ts.reached) == "torchscript-to-torch" and ts.contract == "torch backend contract"
    [blocker] = ts.blockers
    assert blocker.op == "torch.aten.__and__.Tensor"
    assert blocker.location.endswith(MASK_LINE)
    # the trace's own stack says which line of the model reached it
    assert Path(blocker.called_from.rpartition(":")[0]).name == f"modeling_{model}.py"
    assert blocker.frames[0] == blocker.location and blocker.called_from in blocker.frames
    # the literal MLIR reports is a symptom of it, not the blocker
    assert blocker.symptoms == ["torch.vtensor.literal"] and blocker.reported_op == "torch.vtensor.literal"
    assert blocker.converted_by == []  # no conversion pass of the pipeline lowers it alone
    assert blocker.signature == ("legalization-failure: "
                                 "failed to legalize operation 'torch.aten.__and__.Tensor'")
    assert blocker.failing_pass == "torch-finalizing-backend-type-conversion"
    assert Path(blocker.reproducer).read_text().count("torch.aten.__and__.Tensor") == 1
    assert blocker.hint.startswith("bool-and-mask: ")
    # main's diagnosis: the named fix, and the conversion that lowers what the fix puts there
    assert blocker.fixes == ["bitwise-and-or"]
    assert blocker.lowering.startswith(
        "no conversion pass of this pipeline lowers torch.aten.__and__.Tensor (tried: ")
    assert blocker.lowering.endswith("; convert-torch-to-linalg lowers the equivalent "
                                     "torch.aten.bitwise_and.Tensor (the pipeline passes with it)")
    assert ts.reproduce.split()[0].endswith("torch-mlir-opt")
    assert ts.reproduce.endswith(f"{model}.1.torchscript-to-torch.mlir")
    # the ready commands name the failing stage's input and pipeline
    assert [c.split()[1] for c in ts.commands] == ["explain", "bisect", "reduce", "report", "timeline"]
    assert all(f"{model}.1.torchscript-to-torch.mlir --pipeline torch-to-linalg" in c for c in ts.commands)
    assert not ts.numerics


@pytest.mark.parametrize("model, buffers", [
    ("llama", ["model.rotary_emb.inv_freq", "model.rotary_emb.original_inv_freq"]),
    ("bert", ["model.embeddings.position_ids", "model.embeddings.token_type_ids"])])
def test_fx_stops_at_the_importer_on_non_persistent_buffers(ported, model, buffers):
    fx = _ports(ported(model))["fx"]
    assert str(fx.outcome) == PortOutcome.FAILS.value and str(fx.failed_stage) == "import"
    assert [(str(s.name), s.ok) for s in fx.stages] == [("export", True), ("import", False)]
    [blocker] = fx.blockers
    assert blocker.message == "AssertionError: Could not find state mapping for buffer"
    assert blocker.signature == "import: AssertionError: Could not find state mapping for buffer"
    assert "fx_importer.py" in blocker.location
    assert f"({', '.join(buffers)})" in blocker.explanation
    assert "persistent=True" in blocker.explanation
    assert blocker.hint.startswith("non-persistent-buffers: ") and blocker.fixes == ["persistent-buffers"]


def test_the_record_says_what_was_built_and_with_what(ported):
    record = ported("llama")
    assert (str(record.model), str(record.source), str(record.model_type)) == ("llama", "type", "llama")
    assert record.options["batch"] == 1 and record.options["seq"] == 8
    assert record.options["frontends"] == ["torchscript", "fx"]
    assert record.versions["torch"].startswith("2.13.0") and record.versions["torch-mlir"] == "20261001"
    assert "torch-mlir-opt" in record.versions["torch-mlir-opt"]
    [variant] = record.variants
    assert variant.settings["sizes"]["layers"] == 2 and variant.settings["attn_implementation"] == "eager"
    assert variant.config["num_hidden_layers"] == 2
    assert not record.ok
    # the folder holds the record, and reading it back gives the same record
    assert PortRecord.read(Path(record.folder) / "record.json") == record


def test_a_folder_ports_with_its_own_weights_and_sizes(tmp_path):
    """MODEL as a local folder (config.json + model.safetensors): its own sizes and weights go
    through FX to the RefBackend, and the numbers match eager with those weights."""
    import torch
    import transformers

    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=100,
                                     n_positions=32, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(7)
    saved = transformers.GPT2Model(config).eval()
    saved.save_pretrained(tmp_path / "m")
    record = port_model(str(tmp_path / "m"), PortOptions(out=str(tmp_path / "out"),
                                                         frontends=(FrontendName.FX,)))
    assert (str(record.source), str(record.model_type)) == ("directory", "gpt2")
    [variant] = record.variants
    assert variant.settings["weights"].endswith("model.safetensors")
    assert variant.settings["sizes"]["layers"] == 1 and variant.settings["sizes"]["hidden"] == 32
    [fx] = variant.ports
    assert str(fx.outcome) == PortOutcome.VERIFIED.value, fx.blockers
    assert [str(c.inputs) for c in fx.numerics] == ["traced", "second"]
    assert all(c.max_abs_diff < 1e-4 for c in fx.numerics)
    assert record.ok
