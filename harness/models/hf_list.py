"""``harness port --list``: every MODEL name, and, where asked, whether its tiny config or
model builds (names are free, and need no torch; tiny configs ~25 ms each, all 622 in 15 s of
CPU; building every model takes minutes).

After the transformers types come ``torchvision:NAME`` and ``timm:NAME`` (the ``[vision]``
extra): their names only, at every depth (they have no tiny config, and building all of timm's
~1,300 models would take long); where a library cannot be imported, one row says why."""

from __future__ import annotations

from dataclasses import dataclass

from . import hf_resolve
from .choice import Choice
from .hf_config import Size
from .hf_resolve import ModelSpec, SourceKind


class ListDepth(Choice):
    """List depth: names only, or also whether the tiny config or the tiny model builds."""

    NAMES = "names"
    CONFIG = "config"  # does the tiny config construct?
    BUILD = "build"  # does the tiny model build and run eagerly on its planned inputs?


@dataclass(frozen=True)
class TypeInfo:
    """One row of ``harness port --list``."""

    model_type: str
    config_class: str
    model_class: str
    tiny: str = ""  # "" (not checked), "ok", or why the tiny config / model does not build


def list_model_types(depth: ListDepth = ListDepth.NAMES) -> list[TypeInfo]:
    """Every MODEL type name, ``opt`` (the project's drivers) first."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    rows = [TypeInfo(hf_resolve.OPT, "OPTConfig", "OPTModel, FixedOPT",
                     "" if depth is ListDepth.NAMES else "ok")]
    for model_type in hf_resolve.model_types():
        if model_type == hf_resolve.OPT:
            continue
        rows.append(TypeInfo(model_type, CONFIG_MAPPING_NAMES[model_type],
                             hf_resolve.model_class_name(model_type),
                             check_type(model_type, depth)))
    return rows + library_rows()


def library_rows() -> list[TypeInfo]:
    """``torchvision:NAME`` and ``timm:NAME`` rows, or one row per library saying why not."""
    from harness.errors import VisionLibraryError

    from .vision_libs import model_names

    rows = []
    for kind in (SourceKind.TORCHVISION, SourceKind.TIMM):
        try:
            names = model_names(kind)
        except VisionLibraryError as error:
            rows.append(TypeInfo(f"{kind.value}:NAME", "", "(not available)",
                                 " ".join(error.reason.split())[:200]))
            continue
        builder = ("timm.create_model" if kind is SourceKind.TIMM
                   else "torchvision.models.get_model")
        rows += [TypeInfo(f"{kind.value}:{name}", "", builder) for name in names]
    return rows


def check_type(model_type: str, depth: ListDepth) -> str:
    """``ok``, or why the tiny config (CONFIG) or the tiny model and its inputs (BUILD) fail."""
    if depth is ListDepth.NAMES:
        return ""
    from .drivers import prepare  # torch and transformers' models: only when checking
    from .generic import build_config

    spec = ModelSpec(model_type, SourceKind.TYPE, model_type)
    try:
        if depth is ListDepth.CONFIG:
            build_config(spec, Size.TINY, {})
        else:
            prepare(spec)
    except Exception as error:  # a row says why; listing never stops at one type
        return " ".join(str(error).split())[:200]
    return "ok"
