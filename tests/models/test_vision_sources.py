"""``torchvision:NAME``, ``timm:NAME`` and transformers head classes as MODEL.

This venv holds the machine's CPU torch 2.13.0+cpu and no torchvision, so here the vision
sources are tested where they must fail: torchvision missing (this venv as it is), and
torchvision present but built for another torch (PyPI's torchvision 0.28.0 installed into a
temporary folder on PYTHONPATH: its import fails with "operator torchvision::nms does not
exist"). Both must end in one paragraph, exit 2, with no folder left behind. The ports
themselves run in a venv with a fitting pair: tools/vision_check.py.

Head classes port for real: T5ForConditionalGeneration through FX verifies (measured: ~30 s).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest
import torch

from harness.errors import ModelOptionError
from harness.models import drivers
from harness.models.hf_resolve import SourceKind, resolve
from harness.models.modality import Modality

from support import harness

HAS_TORCHVISION = importlib.util.find_spec("torchvision") is not None


def test_library_names_resolve_to_their_kind():
    spec = resolve("torchvision:resnet18")
    assert (spec.kind, spec.model_type, spec.label) == (
        SourceKind.TORCHVISION, "resnet18", "torchvision-resnet18")
    spec = resolve("TIMM:vit_tiny_patch16_224")
    assert (spec.kind, spec.model_type, spec.label) == (
        SourceKind.TIMM, "vit_tiny_patch16_224", "timm-vit_tiny_patch16_224")
    for bad in ("torchvision:", "timm:a b", "timm:../x"):
        with pytest.raises(ModelOptionError, match="comes a model name of that library"):
            resolve(bad)


def test_a_library_model_is_a_vision_model_whatever_its_input_is_called():
    # torchvision's and timm's forwards take ``x``: the board grouped them as "unknown"
    prepared = drivers.prepare("vit")
    assert prepared.modality is Modality.VISION
    as_x = replace(prepared.inputs, names=("x",))
    assert replace(prepared, inputs=as_x).modality is Modality.UNKNOWN
    for library in ("torchvision:resnet18", "timm:resnet18"):
        assert replace(prepared, spec=resolve(library), inputs=as_x).modality is Modality.VISION


def test_a_decoder_of_latents_into_audio_is_audio_mimi_decoder():
    # its input is latents, which no modality names: the board grouped it as "unknown"
    prepared = drivers.prepare("mimi_decoder")
    assert prepared.inputs.names == ("latents",) and prepared.settings.outputs == ("audio_values",)
    assert prepared.modality is Modality.AUDIO


def test_a_head_class_resolves_to_its_type():
    spec = resolve("BertForQuestionAnswering")
    assert (spec.kind, spec.model_type, spec.head, spec.label) == (
        SourceKind.TYPE, "bert", "BertForQuestionAnswering", "BertForQuestionAnswering")
    # a class several types share goes to the type it is named after
    assert resolve("LlamaForCausalLM").model_type == "llama"
    assert resolve("T5ForConditionalGeneration").model_type == "t5"
    with pytest.raises(ModelOptionError, match="a class name is built whole"):
        resolve("T5ForConditionalGeneration:encoder")


def test_a_head_class_builds_its_head():
    prepared = drivers.prepare("BertForQuestionAnswering")
    assert type(prepared.model).__name__ == "BertForQuestionAnswering"
    assert prepared.settings.outputs == ("start_logits", "end_logits")
    assert prepared.settings.model_type == "bert"
    logits = prepared.run_eager()
    assert [tuple(t.shape) for t in logits] == [(1, 8), (1, 8)]


def test_a_seq2seq_head_ports_and_verifies_through_fx(tmp_path):
    record_path = tmp_path / "t5.json"
    proc = harness("--no-progress", "port", "T5ForConditionalGeneration", "--frontend", "fx", "--out",
                   str(tmp_path), "--json", str(record_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.loads(record_path.read_text())
    [variant] = record["variants"]
    assert variant["settings"]["model_class"] == "T5ForConditionalGeneration"
    assert variant["settings"]["outputs"][0] == "logits"  # the LM head's, not hidden states
    [port] = variant["ports"]
    assert (str(port["frontend"]), str(port["outcome"])) == ("fx", "verified")


@pytest.mark.skipif(HAS_TORCHVISION, reason="torchvision is installed in this venv")
@pytest.mark.parametrize("model", ["torchvision:resnet18", "timm:resnet18"])
def test_missing_torchvision_is_one_paragraph(tmp_path, capsys, model):
    from harness import cli

    assert cli.main(["port", model, "--out", str(tmp_path)]) == 2
    message = capsys.readouterr().err.strip()
    assert message.count("\n") == 0 and "Traceback" not in message, message
    assert f"cannot build model '{model}': torchvision is not installed" in message
    assert "pip install 'torch-mlir-harness[vision]'" in message
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def misfit_torchvision(tmp_path_factory) -> str:
    """PyPI's torchvision 0.28.0 (built for PyPI's torch 2.13.0) in a folder of its own, beside
    this venv's CPU torch: the pair that does not fit."""
    if not torch.__version__.endswith("+cpu") or HAS_TORCHVISION:
        pytest.skip(f"needs a CPU-only torch and no torchvision (torch {torch.__version__})")
    target = tmp_path_factory.mktemp("torchvision-0.28.0")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--target", str(target), "torchvision==0.28.0"],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode:
        pytest.skip(f"pip could not fetch torchvision 0.28.0: {proc.stderr[-300:]}")
    return str(target)


def test_the_misfit_is_real(misfit_torchvision):
    env = {**os.environ, "PYTHONPATH": misfit_torchvision}
    proc = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True,
                          text=True, env=env)
    assert "operator torchvision::nms does not exist" in proc.stderr


@pytest.mark.parametrize("model", ["torchvision:resnet18", "timm:resnet18"])
def test_a_misfit_torchvision_is_one_paragraph(tmp_path, misfit_torchvision, model):
    proc = harness("--no-progress", "port", model, "--out", str(tmp_path),
                   env={"PYTHONPATH": misfit_torchvision})
    assert proc.returncode == 2
    message = proc.stderr.strip()
    assert message.count("\n") == 0, message
    assert (f"cannot build model '{model}': importing torchvision failed: RuntimeError: "
            "operator torchvision::nms does not exist") in message
    assert f"torch {torch.__version__} and torchvision 0.28.0 do not fit together" in message
    assert "pip install 'torch==2.13.0' 'torchvision==0.28.*' from PyPI" in message
    assert list(tmp_path.iterdir()) == []


def test_list_says_why_the_libraries_are_missing(misfit_torchvision):
    proc = harness("--no-progress", "port", "--list", env={"PYTHONPATH": misfit_torchvision})
    assert proc.returncode == 0
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()}
    assert "bert" in rows
    for name in ("torchvision:NAME", "timm:NAME"):
        assert "(not available)" in rows[name]
        assert "torchvision::nms does not exist" in rows[name]
