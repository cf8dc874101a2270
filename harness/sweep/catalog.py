"""``harness sweep --all``'s transformers model types, and what became of them.

Every type with a config class and a base model is ported as any MODEL is, OPT first: a type
whose tiny model does not build (or does not run eagerly on its inputs) is refused by its own
port, an ``unsupported`` row with why. Listing the types that build first would build each of
them twice (stop 39's ``--all``: 5.1 of its 60.6 min); a refusal costs one forked port.
After the sweep ``DIR/models.json`` says which types built and why the others did not, read
from the records."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from harness.compiler.irfile import write_atomically

from .records import MODELS_FILE, UNSUPPORTED, load


def all_types() -> list[str]:
    """Every transformers model type with a config class and a base model, OPT first."""
    from harness.models.hf_resolve import OPT, model_types

    return [OPT, *[t for t in model_types() if t != OPT]]


def write_models_file(out: Path, types: Sequence[str]) -> tuple[list[str], list[dict[str, str]]]:
    """``out/models.json`` from the sweep's records of ``types``: (the types whose port ran,
    the refused ones as {model_type, why}). A type whose port crashed or timed out built (its
    record says what happened after); a type with no record yet is in neither list."""
    results = load(out).by_model()
    built: list[str] = []
    skipped: list[dict[str, str]] = []
    for model_type in types:
        result = results.get(model_type)
        if result is None:
            continue
        if result.failure is not None and result.failure.reason == UNSUPPORTED:
            skipped.append({"model_type": model_type, "why": result.failure.detail})
        else:
            built.append(model_type)
    write_atomically(out / MODELS_FILE, json.dumps({"built": built, "skipped": skipped},
                                                   indent=1) + "\n")
    return built, skipped
