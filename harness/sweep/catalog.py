"""``harness sweep --all``: every transformers model type whose base model builds from a tiny
config on the CPU (and runs eagerly on token inputs), and the others with why. Building every
model takes minutes, so the answer is kept in ``DIR/models.json`` and reused unless forced."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.compiler.irfile import write_atomically

from .records import MODELS_FILE

#: Per type: a tiny model builds in well under a second; a hang costs this much.
BUILD_TIMEOUT_S = 60.0


def all_models(out: Path, force: bool = False, candidates: Sequence[str] | None = None,
               say: Callable[[str], None] | None = None) -> tuple[list[str], list[dict[str, str]]]:
    """(the types that build, the skipped ones as {model_type, why}); ``candidates`` narrows
    the types looked at (default: every type with a config class and a base model)."""
    path = out / MODELS_FILE
    if path.is_file() and not force and candidates is None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return list(data["built"]), list(data["skipped"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # unreadable: list them again
    from harness.models.hf_list import ListDepth, check_type
    from harness.models.hf_resolve import OPT, model_types
    from harness.port.progress import StageTimeout, time_limit

    types = list(candidates) if candidates is not None else [OPT, *[t for t in model_types() if t != OPT]]
    built, skipped = [], []
    for k, model_type in enumerate(types, 1):
        try:
            with time_limit(BUILD_TIMEOUT_S):
                why = "ok" if model_type == OPT else check_type(model_type, ListDepth.BUILD)
        except StageTimeout:
            why = f"building the tiny model took over {BUILD_TIMEOUT_S:g} s"
        if why == "ok":
            built.append(model_type)
        else:
            skipped.append({"model_type": model_type, "why": why})
        if say is not None and k % 25 == 0:
            say(f"--all: {k}/{len(types)} model types tried, {len(built)} build")
    write_atomically(path, json.dumps({"built": built, "skipped": skipped}, indent=1) + "\n")
    return built, skipped
