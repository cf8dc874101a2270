"""``torchvision:NAME`` and ``timm:NAME``: image models from the two vision libraries, with
random seeded weights, behind the generic driver's types.

- torchvision builds with ``torchvision.models.get_model(NAME, weights=None)``, timm with
  ``timm.create_model(NAME, pretrained=False)``; ``--set FIELD=VALUE`` passes keyword arguments
  to them (``--set num_classes=10``).
- The input is one image batch ``[B, C, H, W]``. Its size comes from the library's metadata:
  timm's ``pretrained_cfg["input_size"]``; torchvision's first weights entry, whose transforms
  crop to ``crop_size`` (299 for inception_v3); else 224. ``--input x=1x3x64x64`` gives another;
  ``--size tiny`` takes the smallest of ``IMAGE_SIDES`` (32, 64, 96, 128) that the model's
  eager forward takes (the library's size when it takes none). A model whose constructor takes its image
  size (timm's ``img_size``, torchvision's ``image_size``: the ViTs, fixed at 224 otherwise) is
  built at that side; a timm model also takes the depth and width knobs its constructor names
  (:func:`_tiny_knobs`: ``depth`` 2, per-stage ``depths`` 1, ``embed_dim`` 64 with 4 heads, the
  EfficientNet builders' ``channel_multiplier``), each kept only when the model builds with it
  on the meta device with fewer parameters, and all of them left out when its forward then fails: timm's
  beit_base_patch16_224 goes from 86.4 M parameters at 224 px to 0.2 M at 32 px. The record's
  settings name each knob; ``--set`` wins over them.
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

from .generic import ModelOptions, ModelSettings, PreparedModel, TupleForward, flatten_outputs
from .hf_config import TINY, Size
from .hf_families import TINY_TIMM_CHANNELS
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


#: A timm model's per-stage widths at tiny size: 1/8 of its class's default, at least 16.
TINY_WIDTH_DIVISOR = 8
TINY_STAGE_WIDTH = 16

#: The keyword that sets the image size a model is built for, per library (absent: none).
IMAGE_KNOB = {SourceKind.TIMM: "img_size", SourceKind.TORCHVISION: "image_size"}


def _constructor_parameters(cls: type) -> dict[str, inspect.Parameter]:
    """The keyword parameters ``cls`` takes, through the classes it hands ``**kwargs`` to
    (timm's VisionTransformerDistilled takes ``*args, **kwargs`` for VisionTransformer); the
    nearest class's own where two name one."""
    found: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        parameters = inspect.signature(init).parameters
        for name, p in parameters.items():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and name != "self":
                found.setdefault(name, p)
        if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
            break
    return found


def _create(kind: SourceKind, lib: ModuleType, name: str, kwargs: dict[str, Any]) -> nn.Module:
    if kind is SourceKind.TIMM:
        return lib.create_model(name, pretrained=False, **kwargs)
    return lib.models.get_model(name, weights=None, **kwargs)


def _meta_model(kind: SourceKind, lib: ModuleType, name: str, kwargs: dict[str, Any]) -> nn.Module | None:
    """Model ``name`` built with ``kwargs`` on the meta device (no memory, no weights); None when
    it does not build so: an unknown keyword, a width the heads do not divide, an op without a
    meta kernel (regnety's aten::_unique2)."""
    try:
        with torch.device("meta"):
            return _create(kind, lib, name, kwargs)
    except Exception:  # any refusal
        return None


def _parameter_count(model: nn.Module | None) -> int | None:
    return None if model is None else sum(p.numel() for p in model.parameters())


def _tiny_groups(cls: type) -> list[dict[str, Any]]:
    """Depth and width keywords that ``cls``'s constructor names, at tiny values."""
    parameters = _constructor_parameters(cls)
    groups: list[dict[str, Any]] = []
    for key in ("depth", "num_blocks", "depths", "layers"):  # a count of blocks, or one per stage
        if key not in parameters:
            continue
        default = parameters[key].default
        if isinstance(default, list | tuple):
            groups.append({key: (1,) * len(default)})
        elif key in ("depths", "layers"):  # ResNet's layers have no default: four stages
            groups.append({key: (1,) * 4})
        else:
            groups.append({key: TINY["layers"]})
    for key in ("embed_dim", "embed_dims", "dims"):  # widths: one, or one per stage
        if key not in parameters:
            continue
        default = parameters[key].default
        if isinstance(default, list | tuple):
            groups.append({key: tuple(max(TINY_STAGE_WIDTH, int(d) // TINY_WIDTH_DIVISOR)
                                      for d in default)})
        else:
            heads = "num_heads" in parameters and isinstance(parameters["num_heads"].default, int)
            groups.append({key: TINY["hidden"], **({"num_heads": TINY["heads"]} if heads else {})})
    groups.append({"channel_multiplier": TINY_TIMM_CHANNELS})  # EfficientNet's builders take it
    return groups


def _tiny_knobs(lib: ModuleType, name: str, meta: nn.Module, given: dict[str, Any]) -> dict[str, Any]:
    """The depth and width keywords of timm model ``name`` at tiny size (:func:`_tiny_groups` of
    the class of ``meta``, the model as given on the meta device), tried group by group on the
    meta device and kept where it builds with fewer parameters (a constructor that takes
    ``**kwargs`` may ignore one); ``given`` (``--set``) is not overridden."""
    count = _parameter_count(meta)
    knobs: dict[str, Any] = {}
    for group in _tiny_groups(type(meta)):
        if any(key in given for key in group):
            continue
        fewer = _parameter_count(_meta_model(SourceKind.TIMM, lib, name, {**given, **knobs, **group}))
        if fewer is not None and count is not None and fewer < count:
            knobs.update(group)
            count = fewer
    return knobs


def check_name(kind: SourceKind, lib: ModuleType, spec: ModelSpec) -> None:
    """:class:`ModelOptionError`, with the library's close names, when ``lib`` has no model
    ``spec.model_type``."""
    names = model_names(kind)
    known = lib.is_model(spec.model_type) if kind is SourceKind.TIMM else spec.model_type in names
    if not known:  # timm.is_model takes its deprecated aliases too (adv_inception_v3)
        import difflib

        close = difflib.get_close_matches(spec.model_type, names, n=3)
        hint = f" Did you mean {', '.join(f'{kind.value}:{c}' for c in close)}?" if close else ""
        raise ModelOptionError(
            f"{kind.value} {_version(kind.value)} has no model named '{spec.model_type}'.{hint} "
            "'harness port --list' lists the names.")


def _build(spec: ModelSpec, lib: ModuleType, kwargs: dict[str, Any], seed: int) -> nn.Module:
    """The model with random weights from ``seed``, in float32 and eval mode."""
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return _create(spec.kind, lib, spec.model_type, kwargs).float().eval()
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


def _input_name(model: nn.Module) -> str:
    params = [p for p in inspect.signature(model.forward).parameters if p not in ("self", "args", "kwargs")]
    return params[0] if params else "x"


@dataclass
class _Built:
    """A library model that ran eagerly on its first image batch."""

    model: nn.Module
    kwargs: dict[str, Any]  # what it was built with
    first: InputSet
    outputs: tuple[str, ...]
    shape: tuple[int, ...]
    size_from: str


def _tiny_build(spec: ModelSpec, lib: ModuleType, given: dict[str, Any], options: ModelOptions
                ) -> _Built | None:
    """``--size tiny`` built small (:func:`_tiny_knobs`, the image-size keyword at each side of
    ``IMAGE_SIDES``): the first build whose forward runs; None when there are no knobs, it does
    not build on the meta device, or none runs (the caller builds the library's model)."""
    meta = _meta_model(spec.kind, lib, spec.model_type, given)
    if meta is None:
        return None
    knobs = _tiny_knobs(lib, spec.model_type, meta, given) if spec.kind is SourceKind.TIMM else {}
    image = IMAGE_KNOB[spec.kind]
    tries: list[tuple[dict[str, Any], list[int]]] = []
    if image not in given and image in _constructor_parameters(type(meta)):
        tries += [({**given, **knobs, image: side}, [side]) for side in IMAGE_SIDES]
    if knobs:
        tries.append(({**given, **knobs}, list(IMAGE_SIDES)))
    named = ", ".join(f"{k}={v}" for k, v in knobs.items())
    for kwargs, sides in tries:
        try:
            model = _build(spec, lib, kwargs, options.seed)
            name = _input_name(model)
            why = (f"--size tiny: built for {sides[0]} px ({image}={sides[0]})" if image in kwargs
                   else f"--size tiny: the smallest of {', '.join(map(str, sides))} its forward takes")
            why += f", with {named}" if named else ""
            shapes: list[tuple[tuple[int, ...], str]] = [((options.batch, 3, side, side), why)
                                                         for side in sides]
            first, outputs, shape, size_from = _first_runnable(spec, model, name, shapes, options.seed)
        except UnsupportedModelError:  # _build and _first_runnable say every failure so
            continue  # a knob or side this model does not take: the next try, then its own sizes
        return _Built(model, kwargs, first, outputs, shape, size_from)
    return None


def prepare_library(spec: ModelSpec, options: ModelOptions) -> PreparedModel:
    """Build ``torchvision:NAME`` or ``timm:NAME`` with random weights from ``options.seed``,
    and its two image batches."""
    lib = library(spec.kind, spec.name)
    check_name(spec.kind, lib, spec)
    given = dict(options.overrides)
    givens = parse_givens(options.inputs)
    built = (_tiny_build(spec, lib, given, options)
             if options.size is Size.TINY and not givens else None)
    if built is None:
        model = _build(spec, lib, given, options.seed)
        name = _input_name(model)
        size, size_from = _input_size(spec.kind, lib, spec.model_type, model)
        shapes: list[tuple[tuple[int, ...], str]] = [((options.batch, *size), size_from)]
        if options.size is Size.TINY:  # the library's model at the smallest image its forward takes
            sides = ", ".join(map(str, IMAGE_SIDES))
            shapes = [((options.batch, size[0], side, side),
                       f"--size tiny: the smallest of {sides} its forward takes")
                      for side in IMAGE_SIDES if side < min(size[1:])]
            shapes.append(((options.batch, *size),
                           f"--size tiny: its forward takes none of {sides}, so {size_from}"))
        for input_given in givens:
            if input_given.name != name:
                raise ModelOptionError(f"--input {input_given.name}: model '{spec.name}' takes one "
                                       f"input, {name!r} [B, C, H, W]; write --input {name}=1x3x64x64.")
            shapes = [(input_given.shape, "--input")]
        built = _Built(model, given, *_first_runnable(spec, model, name, shapes, options.seed))
    model, kwargs, first, shape, size_from = (built.model, built.kwargs, built.first, built.shape,
                                              built.size_from)
    name = first.names[0]
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
        second_inputs=second.description, outputs=built.outputs,
    )
    return PreparedModel(spec, options.variant, config, model, module, first, second, settings)
