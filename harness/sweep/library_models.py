"""The torchvision and timm models ``harness sweep --all`` adds to the transformers types when
the optional ``[vision]`` extra imports (a torchvision, and timm, that fit the installed torch).

Thirty of each, chosen to cover the families porting engineers bring (residual, mobile and
searched convnets, dense and inception blocks, vision transformers, hybrids, MLP mixers), and
small enough to build in seconds; a sweep ports each built small (``--size tiny``, the sweep's
default: the smallest image it takes, and a timm model's depth and width keywords). The README
names them; ``tests/test_library_models.py`` checks the lists, and each builds in the vision
venv (measured with torchvision 0.28.0 and timm 1.0.29)."""

from __future__ import annotations

import subprocess

#: ``torchvision:NAME``: classification models of ``torchvision.models``.
TORCHVISION_MODELS = (
    "resnet18", "resnet34", "resnet50", "resnext50_32x4d", "mobilenet_v2", "mobilenet_v3_small",
    "mobilenet_v3_large", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "shufflenet_v2_x0_5",
    "shufflenet_v2_x1_0", "squeezenet1_0", "squeezenet1_1", "efficientnet_b0", "efficientnet_b1",
    "efficientnet_v2_s", "regnet_x_400mf", "regnet_y_400mf", "regnet_x_800mf", "regnet_y_800mf",
    "densenet121", "googlenet", "inception_v3", "convnext_tiny", "swin_t", "swin_v2_t",
    "maxvit_t", "vit_b_16", "alexnet",
)

#: ``timm:NAME``: models of ``timm.list_models()``.
TIMM_MODELS = (
    "resnet18", "resnet50", "resnext26ts", "mobilenetv2_050", "mobilenetv3_small_050",
    "mobilenetv3_large_100", "efficientnet_b0", "efficientnet_lite0", "mnasnet_small",
    "lcnet_050", "ghostnet_100", "regnetx_002", "regnety_002", "densenet121", "dla34", "dpn68",
    "hrnet_w18_small", "vit_tiny_patch16_224", "deit_tiny_patch16_224", "convnext_atto",
    "swin_tiny_patch4_window7_224", "levit_128s", "mobilevit_xxs", "poolformer_s12",
    "resmlp_12_224", "pit_ti_224", "rexnet_100", "cspresnet50", "edgenext_xx_small",
    "efficientvit_b0",
)

#: How long the import check may take (importing torch, torchvision and timm: ~5 s).
IMPORT_TIMEOUT_S = 120.0


def library_models() -> list[str]:
    """The MODEL names ``harness port`` takes for both lists, torchvision's first."""
    return [f"torchvision:{n}" for n in TORCHVISION_MODELS] + [f"timm:{n}" for n in TIMM_MODELS]


def vision_extra_missing(python: str) -> str:
    """Why ``python`` cannot build the library models ('' when torchvision and timm import
    there): checked in a child, so the sweep's own process does not import torch."""
    check = ("from harness.models.vision_libs import library\n"
             "from harness.models.hf_resolve import SourceKind\n"
             "library(SourceKind.TIMM)\n")
    try:
        proc = subprocess.run([python, "-c", check], capture_output=True, text=True,
                              timeout=IMPORT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"the import check did not finish: {error}"
    if proc.returncode == 0:
        return ""
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else f"exit {proc.returncode}")[:600]
