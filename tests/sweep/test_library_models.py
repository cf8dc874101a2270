"""The torchvision and timm models ``harness sweep --all`` adds (harness/sweep/library_models.py):
thirty of each, named in the README, and left out with the reason when the [vision] extra does not
import. With HARNESS_VISION_PYTHON (a venv whose torch and torchvision fit, see
tools/vision_check.py), every name is one its library knows, and the extra imports there."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

from harness.sweep.library_models import (
    TIMM_MODELS,
    TORCHVISION_MODELS,
    library_models,
    vision_extra_missing,
)


VISION_PYTHON = os.environ.get("HARNESS_VISION_PYTHON", "/work/venv-vision213/bin/python")


def test_thirty_of_each_and_no_repeats():
    assert len(TORCHVISION_MODELS) == 30 and len(set(TORCHVISION_MODELS)) == 30
    assert len(TIMM_MODELS) == 30 and len(set(TIMM_MODELS)) == 30
    models = library_models()
    assert len(models) == 60
    assert models[0] == "torchvision:resnet18" and models[30] == "timm:resnet18"


def test_the_readme_names_each_of_them():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for library, names in (("torchvision", TORCHVISION_MODELS), ("timm", TIMM_MODELS)):
        bullet = re.search(rf"^- {library}: (.*?)\.$", text, re.MULTILINE | re.DOTALL)
        assert bullet, f"the README has no '- {library}:' list"
        assert re.findall(r"`([^`]+)`", bullet.group(1)) == list(names)


def test_a_python_without_torchvision_gives_the_reason():
    # This venv's torch is the CPU build, with no torchvision beside it.
    if subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True,
                      check=False).returncode == 0:
        pytest.skip("this Python imports torchvision")
    why = vision_extra_missing(sys.executable)
    assert "torchvision" in why


@pytest.mark.skipif(not Path(VISION_PYTHON).is_file(), reason="no vision venv (HARNESS_VISION_PYTHON)")
def test_the_vision_venv_knows_every_name(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    assert vision_extra_missing(VISION_PYTHON) == ""
    check = ("import sys, timm, torchvision\n"
             "known = set(torchvision.models.list_models(module=torchvision.models))\n"
             "tv, tm = sys.argv[1].split(','), sys.argv[2].split(',')\n"
             "print([n for n in tv if n not in known] + [n for n in tm if not timm.is_model(n)])\n")
    proc = subprocess.run([VISION_PYTHON, "-c", check, ",".join(TORCHVISION_MODELS),
                           ",".join(TIMM_MODELS)], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


_TINY_PROBE = """
import json, sys
from harness.models import drivers, generic
from harness.models.hf_config import Size
sides = {}
for model in sys.argv[1:]:
    prepared = drivers.prepare(model, generic.ModelOptions(size=Size.TINY))
    sides[model] = [int(prepared.inputs.tensors[0].shape[-1]), prepared.config.input_size_from]
print(json.dumps(sides))
"""


@pytest.mark.skipif(not Path(VISION_PYTHON).is_file(), reason="no vision venv (HARNESS_VISION_PYTHON)")
def test_size_tiny_takes_the_smallest_image_the_model_takes():
    # resnet18 runs on 32x32; torchvision's ViT checks its image is 224 (its library's size).
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([VISION_PYTHON, "-c", _TINY_PROBE, "torchvision:resnet18",
                           "torchvision:vit_b_16"], capture_output=True, text=True, cwd=ROOT,
                          env=env, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    sides = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sides["torchvision:resnet18"] == [
        32, "--size tiny: the smallest of 32, 64, 96, 128 its forward takes"]
    side, why = sides["torchvision:vit_b_16"]
    assert side == 32 and why.startswith("--size tiny: built for 32 px (image_size=32)")
