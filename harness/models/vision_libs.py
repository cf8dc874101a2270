"""``torchvision:NAME`` and ``timm:NAME``: image models from the two vision libraries, with
random seeded weights, behind the generic driver's types.

- torchvision builds with ``torchvision.models.get_model(NAME, weights=None)``, timm with
  ``timm.create_model(NAME, pretrained=False)``; ``--set FIELD=VALUE`` passes keyword arguments
  to them (``--set num_classes=10``).
- The input is one image batch ``[B, C, H, W]``. Its size comes from the library's metadata:
  timm's ``pretrained_cfg["input_size"]``; torchvision's first weights entry, whose transforms
  crop to ``crop_size`` (299 for inception_v3); else 224. ``--input x=1x3x64x64`` gives another;
  ``--size tiny`` takes the smallest of ``IMAGE_SIDES`` (32, 64) that the model's eager forward
  takes (the library's size when it takes neither, as a ViT fixed at 224). The model itself
  keeps its library's sizes either way.
- Both libraries are the optional extra ``[vision]``. They must fit the installed torch:
  PyPI's torchvision wheels link against PyPI's torch build (measured: the CPU torch 2.13.0+cpu
  on this machine's disk beside PyPI's torchvision 0.28.0 fails on import with "operator
  torchvision::nms does not exist"), and timm imports torchvision, so it fails the same way.
  :func:`library` turns both cases into one :class:`VisionLibraryError`.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import torch
from torch import nn

from harness.errors import ModelOptionError, UnsupportedModelError, VisionLibraryError

from .hf import HFOptions, ModelSettings, PreparedModel, TupleForward, flatten_outputs
from .hf_config import Size
from .hf_inputs import InputSet
from .hf_media import DEFAULT_IMAGE, IMAGE_SIDES, parse_givens
from .hf_resolve import ModelSpec, Part, SourceKind

#: torch release -> the torchvision release built with it (PyPI pairs them).
TORCHVISION_FOR_TORCH = {"2.13": "0.28", "2.14": "0.29", "2.9": "0.24"}


@dataclass(frozen=True)
class LibraryConfig:
    """What a library model was built from, in the shape the port record reads (``to_dict``)."""

    library: str
    name: str
    kwargs: dict[str, Any] = field(default_factory=dict)  # --set FIELD=VALUE
    input_size: tuple[int, int, int] = (3, DEFAULT_IMAGE, DEFAULT_IMAGE)  # C, H, W
    input_size_from: str = ""  # where the size came from

    def to_dict(self) -> dict[str, Any]:
        return {"library": self.library, "name": self.name, **self.kwargs,
                "input_size": list(self.input_size), "input_size_from": self.input_size_from}

    to_diff_dict = to_dict


def _version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def library(kind: SourceKind, model: str = "") -> ModuleType:
    """Import torchvision (and timm for ``timm:``); :class:`VisionLibraryError` when one is
    missing or does not fit the installed torch."""
    model = model or f"{kind.value}:NAME"
    modules = ["torchvision"] + (["timm"] if kind is SourceKind.TIMM else [])
    found: ModuleType | None = None
    for module in modules:
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name not in ("torchvision", "timm"):
                raise _misfit(model, module, error) from error
            raise VisionLibraryError(
                model, f"{module} is not installed in this Python ({_python()})",
                "Install the optional extra: pip install 'torch-mlir-harness[vision]' (with "
                f"torch {torch.__version__} it takes {_pins()}).") from error
        except Exception as error:  # a torchvision built for another torch fails here
            raise _misfit(model, module, error) from error
    assert found is not None
    return found


def _python() -> str:
    import sys

    return sys.executable


def _pins() -> str:
    """The pip requirement of the torchvision built with the installed torch."""
    torch_release = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    vision = TORCHVISION_FOR_TORCH.get(torch_release)
    return f"torchvision=={vision}.*" if vision else "the torchvision built with this torch"


def _misfit(model: str, module: str, error: BaseException) -> VisionLibraryError:
    message = " ".join(str(error).split())[:300]
    vision = _version("torchvision") or "not installed"
    build = torch.__version__
    cause = (f"importing {module} failed: {type(error).__name__}: {message}. The installed "
             f"torch {build} and torchvision {vision} do not fit together")
    if "+cpu" in build:
        cause += (" (PyPI's torchvision wheels link against PyPI's torch build; a CPU-only torch "
                  "from another index does not fit them)")
    return VisionLibraryError(
        model, cause,
        "Install the pair PyPI builds together, in a separate venv if this one must keep its "
        f"torch: pip install 'torch=={build.split('+')[0]}' '{_pins()}' from PyPI (a CUDA "
        "build; it runs on the CPU), or take torchvision from the index this torch came from.")


def model_names(kind: SourceKind) -> list[str]:
    """The names ``torchvision:`` (classification models) or ``timm:`` builds."""
    lib = library(kind)
    if kind is SourceKind.TIMM:
        return list(lib.list_models())
    return list(lib.models.list_models(module=lib.models))


def _input_size(kind: SourceKind, lib: ModuleType, name: str,
                model: nn.Module) -> tuple[tuple[int, int, int], str]:
    if kind is SourceKind.TIMM:
        size = (getattr(model, "pretrained_cfg", None) or {}).get("input_size")
        if size and len(size) == 3:
            return (int(size[0]), int(size[1]), int(size[2])), 'timm pretrained_cfg["input_size"]'
        return (3, DEFAULT_IMAGE, DEFAULT_IMAGE), "no pretrained_cfg input_size: 224"
    try:
        weights = list(lib.models.get_model_weights(name))
    except (ValueError, KeyError):
        weights = []
    if weights:
        transforms = getattr(weights[0], "transforms", None)
        crop = getattr(transforms, "keywords", {}).get("crop_size")
        if isinstance(crop, int):
            return (3, crop, crop), f"torchvision {weights[0]} transforms crop_size"
    return (3, DEFAULT_IMAGE, DEFAULT_IMAGE), "no torchvision weights meta: 224"


def _build(kind: SourceKind, lib: ModuleType, spec: ModelSpec, kwargs: dict[str, Any]) -> nn.Module:
    names = model_names(kind)
    known = lib.is_model(spec.model_type) if kind is SourceKind.TIMM else spec.model_type in names
    if not known:  # timm.is_model takes its deprecated aliases too (adv_inception_v3)
        import difflib

        close = difflib.get_close_matches(spec.model_type, names, n=3)
        hint = f" Did you mean {', '.join(f'{kind.value}:{c}' for c in close)}?" if close else ""
        raise ModelOptionError(
            f"{kind.value} {_version(kind.value)} has no model named '{spec.model_type}'.{hint} "
            "'harness port --list' lists the names.")
    try:
        if kind is SourceKind.TIMM:
            return lib.create_model(spec.model_type, pretrained=False, **kwargs)
        return lib.models.get_model(spec.model_type, weights=None, **kwargs)
    except Exception as error:
        message = " ".join(str(error).split())[:400]
        raise UnsupportedModelError(spec.name, f"it does not build with {kwargs or 'no arguments'}"
                                    f": {type(error).__name__}: {message}",
                                    "Change the arguments with --set FIELD=VALUE.") from error


def _pixels(name: str, shape: tuple[int, ...], seed: int) -> InputSet:
    return InputSet((name,), (torch.randn(shape, generator=torch.Generator().manual_seed(seed)),),
                    f"random normal pixels from seed {seed}")


def _first_runnable(spec: ModelSpec, model: nn.Module, name: str,
                    shapes: list[tuple[tuple[int, ...], str]], seed: int
                    ) -> tuple[InputSet, tuple[str, ...], tuple[int, ...], str]:
    """The first image shape whose eager forward runs: (its input set, the output names, the
    shape, where the size came from); the last shape's error when none runs."""
    for index, (shape, size_from) in enumerate(shapes):
        first = _pixels(name, shape, seed)
        try:
            with torch.no_grad():
                outputs = tuple(n for n, _ in flatten_outputs(model(*first.tensors)))
            return first, outputs, shape, size_from
        except Exception as error:
            if index < len(shapes) - 1:
                continue  # a smaller image the model refuses: try the next
            message = " ".join(str(error).split())[:400]
            raise UnsupportedModelError(spec.name, f"its eager forward fails on {first.shapes()}: "
                                        f"{type(error).__name__}: {message}",
                                        f"Give another image size with --input {name}=1x3xHxW.") from error
    raise AssertionError("no shapes to try")


def prepare_library(spec: ModelSpec, options: HFOptions) -> PreparedModel:
    """Build ``torchvision:NAME`` or ``timm:NAME`` with random weights from ``options.seed``,
    and its two image batches."""
    lib = library(spec.kind, spec.name)
    kwargs = dict(options.overrides)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(options.seed)
        model = _build(spec.kind, lib, spec, kwargs).float().eval()
    params = [p for p in inspect.signature(model.forward).parameters
              if p not in ("self", "args", "kwargs")]
    name = params[0] if params else "x"
    size, size_from = _input_size(spec.kind, lib, spec.model_type, model)
    shapes: list[tuple[tuple[int, ...], str]] = [((options.batch, *size), size_from)]
    if options.size is Size.TINY:  # the library's model at the smallest image its forward takes
        sides = ", ".join(map(str, IMAGE_SIDES))
        shapes = [((options.batch, size[0], side, side),
                   f"--size tiny: the smallest of {sides} its forward takes")
                  for side in IMAGE_SIDES if side < min(size[1:])]
        shapes.append(((options.batch, *size),
                       f"--size tiny: its forward takes none of {sides}, so {size_from}"))
    for given in parse_givens(options.inputs):
        if given.name != name:
            raise ModelOptionError(f"--input {given.name}: model '{spec.name}' takes one input, "
                                   f"{name!r} [B, C, H, W]; write --input {name}=1x3x64x64.")
        shapes = [(given.shape, "--input")]
    first, outputs, shape, size_from = _first_runnable(spec, model, name, shapes, options.seed)
    second = _pixels(name, shape, options.seed + 1)
    module = TupleForward(model, (name,), {}).eval()
    config = LibraryConfig(spec.kind.value, spec.model_type, kwargs,
                           (int(shape[-3]), int(shape[-2]), int(shape[-1])), size_from)
    builder = ("timm.create_model(pretrained=False)" if spec.kind is SourceKind.TIMM
               else "torchvision.models.get_model(weights=None)")
    settings = ModelSettings(
        model=spec.name, source=spec.kind, model_type=spec.model_type,
        model_class=type(model).__name__, config_class=builder, part=Part.FULL,
        size=options.size or Size.DEFAULT, overrides=kwargs,
        sizes={"parameters": sum(p.numel() for p in model.parameters()),
               "channels": int(shape[-3]), "height": int(shape[-2]), "width": int(shape[-1])},
        weights=f"random (seed {options.seed})", attn_implementation="", use_cache=False,
        call=f"takes ({name}) and returns {type(model).__name__}'s output tensors; the image "
             f"size is from {size_from}.",
        inputs=first.shapes(), first_inputs=first.description,
        second_inputs=second.description, outputs=outputs,
    )
    return PreparedModel(spec, options.variant, config, model, module, first, second, settings)
