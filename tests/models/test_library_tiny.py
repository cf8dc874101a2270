"""``--size tiny`` for torchvision and timm models (harness/models/vision_libs.py): the depth and
width keywords a constructor names, and the sweep's ``--size`` for each kind of MODEL.

CI's venv has no torchvision or timm (see tests/models/test_vision_sources.py), so the keyword
rules are checked here on constructors of our own, and the real builds in the vision venv
(HARNESS_VISION_PYTHON, as tests/sweep/test_library_models.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support import ROOT
from torch import nn

from harness.models.hf_config import Size
from harness.models.vision_libs import _constructor_parameters, _tiny_groups
from harness.sweep.runner import SweepOptions, port_flags

VISION_PYTHON = os.environ.get("HARNESS_VISION_PYTHON", "/work/venv-vision213/bin/python")


class Towers(nn.Module):
    def __init__(self, img_size: int = 224, depth: int = 12, embed_dim: int = 768,
                 num_heads: int = 12, mlp_ratio: float = 4.0):
        super().__init__()


class Distilled(Towers):  # hands everything on, as timm's VisionTransformerDistilled
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


class Staged(nn.Module):
    def __init__(self, depths: tuple[int, ...] = (3, 3, 9, 3), dims: tuple[int, ...] = (96, 192, 384, 768),
                 **kwargs):
        super().__init__()


class Residual(nn.Module):
    def __init__(self, block: type, layers: tuple[int, ...], base_width: int = 64):
        super().__init__()


def test_a_constructor_that_hands_on_kwargs_names_its_bases_keywords():
    assert {"img_size", "depth", "embed_dim", "num_heads"} <= set(_constructor_parameters(Distilled))
    assert set(_constructor_parameters(Staged)) == {"depths", "dims"}
    assert _constructor_parameters(Distilled)["depth"].default == 12  # Towers' own default


def test_tiny_keywords_per_kind_of_constructor():
    groups = _tiny_groups(Distilled)
    assert {"depth": 2} in groups and {"embed_dim": 64, "num_heads": 4} in groups
    groups = _tiny_groups(Staged)  # one block per stage, as many stages; widths / 8, at least 16
    assert {"depths": (1, 1, 1, 1)} in groups and {"dims": (16, 24, 48, 96)} in groups
    assert {"layers": (1, 1, 1, 1)} in _tiny_groups(Residual)  # no default: ResNet's four stages
    # the EfficientNet builders' multiplier is tried for every model (kept only where it shrinks)
    assert all({"channel_multiplier": 0.125} in _tiny_groups(c) for c in (Towers, Staged, Residual))
    assert not any("img_size" in g for g in _tiny_groups(Towers))  # the image is tried per side


def test_a_sweep_gives_library_models_its_size(tmp_path: Path):
    tiny, own = SweepOptions(out=tmp_path), SweepOptions(out=tmp_path, size=Size.DEFAULT)
    assert tiny.size is Size.TINY
    for model in ("timm:vit_base_patch16_224", "torchvision:resnet18", "TIMM:resnet18"):
        flags = port_flags(tiny, model)
        assert flags[flags.index("--size") + 1] == "tiny"
        flags = port_flags(own, model)
        assert flags[flags.index("--size") + 1] == "default"
    # a type is tiny unless told, and a folder at its own sizes always: tiny passes nothing
    for model in ("gpt2", "t5:encoder", str(tmp_path / "model")):
        assert "--size" not in port_flags(tiny, model)
    assert port_flags(own, "gpt2")[port_flags(own, "gpt2").index("--size") + 1] == "default"


BUILD = """
import json, sys
from harness.models.generic import ModelOptions
from harness.models.hf_config import Size
from harness.models.hf_resolve import resolve
from harness.models.vision_libs import prepare_library
rows = {}
for name in sys.argv[1:]:
    prepared = prepare_library(resolve(name), ModelOptions(size=Size.TINY))
    rows[name] = {"parameters": prepared.settings.sizes["parameters"], "kwargs": prepared.config.kwargs,
                  "input": list(prepared.config.input_size), "from": prepared.config.input_size_from}
print(json.dumps(rows, default=list))
"""


@pytest.mark.skipif(not Path(VISION_PYTHON).is_file(), reason="no vision venv (HARNESS_VISION_PYTHON)")
def test_tiny_library_models_are_small_for_real():
    names = ["timm:vit_base_patch16_224", "timm:convmixer_768_32", "timm:inception_v3",
             "timm:resnest101e", "torchvision:vit_b_16"]
    proc = subprocess.run([VISION_PYTHON, "-c", BUILD, *names], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    vit = rows["timm:vit_base_patch16_224"]  # 86.6 M parameters at 224 px in its library
    assert vit["kwargs"] == {"depth": 2, "embed_dim": 64, "num_heads": 4, "img_size": 32}
    assert vit["input"] == [3, 32, 32] and vit["parameters"] < 1_000_000
    # ConvMixer takes **kwargs and ignores channel_multiplier: not kept, nor said
    assert rows["timm:convmixer_768_32"]["kwargs"] == {}
    assert rows["timm:inception_v3"]["input"] == [3, 96, 96]  # it refuses 32 and 64 px
    assert rows["timm:resnest101e"]["kwargs"] == {"layers": [1, 1, 1, 1]}
    assert rows["timm:resnest101e"]["parameters"] < 12_000_000  # 48.3 M at its own depth
    tv = rows["torchvision:vit_b_16"]
    assert tv["kwargs"] == {"image_size": 32} and tv["input"] == [3, 32, 32]
