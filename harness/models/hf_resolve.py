"""What MODEL names: a transformers model type, a local model directory, or ``opt``.

- A model type is any key of transformers' auto mappings that has both a config class
  (``CONFIG_MAPPING``) and a base model (``MODEL_MAPPING``): 622 types at transformers 5.24.0.
- A directory holds ``config.json`` as ``save_pretrained`` writes it, and weights when present;
  it is only ever read locally.
- ``opt`` keeps the project's own OPT drivers (stock ``OPTModel`` behind a one-tensor wrapper,
  and the static-structure ``FixedOPT``), so ``harness port opt`` and ``harness opt`` agree.
- ``TYPE:encoder`` takes the encoder of an encoder-decoder type alone (``t5:encoder`` is
  ``T5EncoderModel``).
- A transformers class name with a task head (``BertForQuestionAnswering``,
  ``T5ForConditionalGeneration``) builds that class from its type's config: the port includes
  the head users deploy. Any class of transformers' auto mappings is taken (1,571 at 5.24.0).
- ``torchvision:NAME`` and ``timm:NAME`` are built by :mod:`vision_libs` (random weights); the
  name is checked there, where the library is imported.

A name that looks like a path (a ``/``, or a leading ``.`` or ``~``) is a directory; otherwise a
known type wins over a directory of the same name in the working directory.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, cast

from harness.enums import ParsableEnum
from harness.errors import (ModelDirectoryError, ModelOptionError, UnknownModelTypeError,
                            UnsupportedModelError)

from .choice import Choice

if TYPE_CHECKING:
    from transformers import PreTrainedModel

#: The name that maps onto the project's OPT drivers instead of the generic one.
OPT = "opt"

#: Weight files ``save_pretrained`` writes, in the order transformers prefers them.
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")


class SourceKind(ParsableEnum):
    TYPE = "type"  # a transformers model type, built from its config class
    DIRECTORY = "directory"  # a local folder with config.json (and maybe weights)
    OPT = "opt"  # the project's OPT and FixedOPT drivers
    MODULE = "module"  # an nn.Module given directly (the Python API), not built by a driver
    TORCHVISION = "torchvision"  # torchvision:NAME, torchvision.models.get_model(weights=None)
    TIMM = "timm"  # timm:NAME, timm.create_model(pretrained=False)
    ONNX_FILE = "onnx-file"  # a .onnx file: the ONNX frontend takes it as it is (models/onnx_file.py)


#: ``LIBRARY:NAME`` prefixes -> their source kind.
LIBRARIES = {"torchvision": SourceKind.TORCHVISION, "timm": SourceKind.TIMM}


class Part(Choice):
    """Model part: full for the base model, encoder for an encoder-decoder's encoder alone."""

    FULL = "full"  # the base model (MODEL_MAPPING), e.g. T5Model: encoder and decoder
    ENCODER = "encoder"  # the encoder alone, for encoder-decoder types


@dataclass(frozen=True)
class ModelSpec:
    """A resolved MODEL: where the config (and weights) come from, and which part to build."""

    name: str  # as the user gave it
    kind: SourceKind
    model_type: str  # transformers' model_type (from config.json for a directory)
    directory: Path | None = None
    part: Part = Part.FULL
    weights: Path | None = None  # the first weight file found in the directory
    head: str = ""  # a transformers class with a task head (BertForQuestionAnswering), or ""

    @property
    def label(self) -> str:
        """Short name for folders and titles: ``gpt2``, ``t5-encoder``, ``dir-NAME``,
        ``BertForQuestionAnswering``, ``torchvision-resnet18``."""
        base = f"dir-{self.directory.name}" if self.directory else (self.head or self.model_type)
        if self.kind in (SourceKind.TORCHVISION, SourceKind.TIMM):
            base = f"{self.kind.value}-{self.model_type}"
        if self.kind is SourceKind.ONNX_FILE and self.weights is not None:
            base = f"onnx-{self.weights.stem}"
        base = re.sub(r"[^A-Za-z0-9_.-]+", "-", base)
        return base if self.part is Part.FULL else f"{base}-{self.part.value}"


# ---------------------------------------------------------------------------------------------
# The known types


@cache
def model_types() -> tuple[str, ...]:
    """Every model type with a config class and a base model, sorted."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    return tuple(sorted(t for t in CONFIG_MAPPING_NAMES if t in MODEL_MAPPING_NAMES))


def _squash(name: str) -> str:
    """``GPT-NeoX`` and ``gpt_neox`` -> ``gptneox``: how people write a type by hand."""
    return re.sub(r"[-_\s]", "", name.lower())


def suggestions(name: str, n: int = 3) -> list[str]:
    """Close matches among the known types, for the unknown-model error."""
    types = model_types()
    by_squash = {_squash(t): t for t in types}
    close = difflib.get_close_matches(_squash(name), list(by_squash), n=n, cutoff=0.6)
    found = [by_squash[c] for c in close]
    found += [t for t in difflib.get_close_matches(name.lower(), types, n=n) if t not in found]
    return found[:n]


def _known_type(name: str) -> str | None:
    """The type ``name`` spells, ignoring case, ``-`` and ``_`` when that is unambiguous."""
    types = model_types()
    if name in types:
        return name
    matches = [t for t in types if _squash(t) == _squash(name)]
    return matches[0] if len(matches) == 1 else None


# ---------------------------------------------------------------------------------------------
# Resolving


@cache
def head_classes() -> dict[str, tuple[str, ...]]:
    """Class name -> the model types whose auto mappings name it, from every ``MODEL_*``
    mapping of transformers (names only: no modeling module is imported)."""
    from transformers.models.auto import modeling_auto

    found: dict[str, set[str]] = {}
    for attr in dir(modeling_auto):
        if not (attr.startswith("MODEL") and attr.endswith("_MAPPING_NAMES")):
            continue
        for model_type, names in getattr(modeling_auto, attr).items():
            for cls in names if isinstance(names, (list, tuple)) else (names,):
                found.setdefault(cls, set()).add(model_type)
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    known = set(CONFIG_MAPPING_NAMES)  # a head needs a config, not a base model (TrOCR has none)
    return {cls: tuple(sorted(t for t in types if t in known))
            for cls, types in found.items() if types & known}


def head_model_type(name: str) -> str | None:
    """The model type of a transformers class name; where several types share the class
    (``LlamaForCausalLM``: llama, exaone, ...), the one the class is named after."""
    types = head_classes().get(name)
    if not types:
        return None
    named = [t for t in types if _squash(name).startswith(_squash(t))]
    return max(named, key=len) if named else types[0]


def _looks_like_path(name: str) -> bool:
    return "/" in name or name.startswith((".", "~"))


def library_kind(name: str) -> SourceKind | None:
    """``torchvision:NAME`` or ``timm:NAME``'s source kind; None for any other MODEL."""
    library, colon, _ = name.strip().partition(":")
    return LIBRARIES.get(library.lower()) if colon else None


def resolve(name: str) -> ModelSpec:
    """Resolve MODEL; raises :class:`UnknownModelTypeError` (with close matches) or
    :class:`ModelDirectoryError`."""
    text = name.strip()
    library, colon, library_name = text.partition(":")
    if colon and library.lower() in LIBRARIES:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", library_name.strip()):
            raise ModelOptionError(
                f"model {name!r}: after '{library.lower()}:' comes a model name of that library "
                f"(e.g. {library.lower()}:resnet18); 'harness port --list' lists them.")
        return ModelSpec(name, LIBRARIES[library.lower()], library_name.strip())
    part = Part.FULL
    head, sep, tail = text.rpartition(":")
    if sep and tail.lower() in {p.value for p in Part}:
        text, part = head, Part.parse(tail)
    if not text:
        raise UnknownModelTypeError(name, [])
    if text.lower().endswith(".onnx"):
        return _onnx_file(name, Path(text).expanduser())
    if _looks_like_path(text):
        return _directory(name, Path(text).expanduser(), part)
    if text.lower() == OPT:
        if part is not Part.FULL:
            raise ModelOptionError("opt is a decoder-only model: it has no encoder part.")
        return ModelSpec(name, SourceKind.OPT, OPT)
    known = _known_type(text)
    if known:
        return ModelSpec(name, SourceKind.TYPE, known, part=part)
    head_type = head_model_type(text)
    if head_type:
        if part is not Part.FULL:
            raise ModelOptionError(f"model {name!r}: a class name is built whole; ':{part.value}' "
                                   "takes a part of a model type (e.g. t5:encoder).")
        return ModelSpec(name, SourceKind.TYPE, head_type, head=text)
    if Path(text).is_dir():
        return _directory(name, Path(text), part)
    raise UnknownModelTypeError(name, suggestions(text))


def _onnx_file(name: str, path: Path) -> ModelSpec:
    if not path.is_file():
        raise ModelOptionError(
            f"MODEL {name!r} ends in .onnx but is not a file "
            f"({'a folder' if path.is_dir() else 'no such file'}). Give the path of an ONNX "
            "model file (torch.onnx.export writes one).")
    return ModelSpec(name, SourceKind.ONNX_FILE, "onnx", weights=path)


def _directory(name: str, path: Path, part: Part) -> ModelSpec:
    if not path.is_dir():
        reason = "it is a file, not a directory" if path.exists() else "no such directory"
        if not path.exists() and re.fullmatch(r"[\w.-]+/[\w.-]+", name):
            reason += (" (a hub id such as 'org/model' is not downloaded: save the model with "
                       "save_pretrained where it is available, and pass that folder)")
        raise ModelDirectoryError(str(path), reason)
    config_file = path / "config.json"
    if not config_file.is_file():
        raise ModelDirectoryError(str(path), "it has no config.json")
    try:
        data = json.loads(config_file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelDirectoryError(str(path), f"config.json is not readable JSON ({e})") from e
    model_type = data.get("model_type") if isinstance(data, dict) else None
    if not isinstance(model_type, str) or not model_type:
        raise ModelDirectoryError(str(path), "config.json has no \"model_type\" field")
    if model_type not in model_types():
        close = suggestions(model_type)
        hint = f" (close: {', '.join(close)})" if close else ""
        raise ModelDirectoryError(
            str(path), f"its model_type '{model_type}' has no base model in transformers "
            f"{_transformers_version()}{hint}")
    weights = next((path / f for f in WEIGHT_FILES if (path / f).is_file()), None)
    return ModelSpec(name, SourceKind.DIRECTORY, model_type, directory=path.resolve(), part=part,
                     weights=weights)


def _transformers_version() -> str:
    import transformers

    return transformers.__version__


# ---------------------------------------------------------------------------------------------
# Classes


def config_class(model_type: str) -> type:
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    return CONFIG_MAPPING[model_type]


def model_class_name(model_type: str) -> str:
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    name = MODEL_MAPPING_NAMES[model_type]
    return name if isinstance(name, str) else name[0]


def model_class(model_type: str, head: str = "") -> type[PreTrainedModel]:
    """The base model class, or the head class named (imports its modeling module: the first
    one costs ~4 s). Some types map to several base classes (funnel: FunnelModel and
    FunnelBaseModel); the first is the one ``model_class_name`` names."""
    if head:
        import transformers

        return getattr(transformers, head)
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    # object: transformers types the value as a pair, but most model types map to one class.
    try:
        found: object = MODEL_MAPPING[config_class(model_type)]
    except ValueError:  # a class name the mapping holds and the library does not define
        raise UnsupportedModelError(
            model_type, f"transformers {_transformers_version()} maps it to "
            f"{model_class_name(model_type)}, a class it does not define",
            "Port a transformers class it does define by its name (harness port CLASS), or use "
            "the transformers release that defines this one.") from None
    first = found[0] if isinstance(found, (list, tuple)) else found
    # cast: the mapping holds PreTrainedModel classes, or (a backend missing) transformers'
    # placeholder class, which raises its missing-backend error when built; both are built alike.
    return cast("type[PreTrainedModel]", first)


def encoder_class(model_type: str) -> type[PreTrainedModel] | None:
    """``T5Model`` -> ``T5EncoderModel`` where transformers has one, else None."""
    import transformers

    full = model_class_name(model_type)
    return getattr(transformers, re.sub(r"Model$", "EncoderModel", full), None)


def is_decoder_only(model_type: str, config: object) -> bool:
    """A causal LM that is neither a masked LM (BERT is both) nor an encoder-decoder: its
    tokenizer pads on the left, and the other families' pad on the right."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    return (model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
            and model_type not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
            and not getattr(config, "is_encoder_decoder", False))
