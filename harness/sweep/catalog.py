"""``harness sweep --all``'s transformers model types, and what became of them.

Every type with a config class and a base model is ported as any MODEL is, OPT first: a type
whose tiny model does not build (or does not run eagerly on its inputs) is refused by its own
port, an ``unsupported`` row with why. Listing the types that build first would build each of
them twice (stop 39's ``--all``: 5.1 of its 60.6 min); a refusal costs one forked port.
After the sweep ``DIR/models.json`` says which types built and why the others did not, read
from the records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.compiler import jsonfile
from harness.compiler.irfile import write_atomically

from .records import MODELS_FILE, UNSUPPORTED, load


@dataclass
class ModelsFile:
    """What ``DIR/models.json`` holds after an ``--all`` sweep."""

    built: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # model_type, why (the refusal)
    failed: list[dict[str, str]] = field(default_factory=list)   # model_type, why (crash, timeout)


def all_types() -> list[str]:
    """Every transformers model type with a config class and a base model, OPT first."""
    from harness.models.hf_resolve import OPT, model_types

    return [OPT, *[t for t in model_types() if t != OPT]]


def write_models_file(out: Path, types: Sequence[str]) -> ModelsFile:
    """``out/models.json`` from the sweep's records of ``types``: the types whose port ran
    (``built``), the ones it refused with why (``skipped``), and the ones whose port left no
    record for another reason (``failed``: a crash, a timeout, an error before the build was
    done; the board's "Ports that left no record" says more). A type with no record yet is in
    none of them."""
    results = load(out).by_model()
    listed = ModelsFile()
    for model_type in types:
        result = results.get(model_type)
        if result is None:
            continue
        if result.record is not None:
            listed.built.append(model_type)
        elif result.failure is not None and result.failure.reason is UNSUPPORTED:
            listed.skipped.append({"model_type": model_type, "why": result.failure.detail})
        elif result.failure is not None:
            listed.failed.append({"model_type": model_type, "why": result.failure.reason.value})
    write_atomically(out / MODELS_FILE, jsonfile.dumps(asdict(listed), indent=1) + "\n")
    return listed
