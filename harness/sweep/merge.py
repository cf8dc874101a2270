"""``harness sweep --merge DIR... --out DIR``: the shards' records joined into one folder.
Records are the only state, so joining is copying files; a model found in more than one
folder keeps the copy of the folder named last (and the merge says so)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from harness.compiler.irfile import write_atomically
from harness.errors import UsageError

from .records import CHECKS, LOGS, MODELS_FILE, RECORDS, load


@dataclass
class Merged:
    models: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # in more than one folder: the last one wins


def merge(sources: list[Path], out: Path) -> Merged:
    out = out.resolve()
    if not sources:
        raise UsageError("--merge needs at least one sweep folder (the --out DIR of each shard).")
    merged = Merged()
    seen: set[str] = set()
    skipped: dict[str, dict[str, str]] = {}
    for source in sources:
        if source.resolve() == out:
            raise UsageError(f"--merge {source}: the folder to merge into is also a source; give "
                             "--out a new folder.")
        sweep = load(source)  # validates every record before anything is copied
        for result in sweep.models:
            name = result.path.name
            if result.model in seen:
                merged.replaced.append(result.model)
            else:
                merged.models.append(result.model)
            seen.add(result.model)
            target = out / RECORDS / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(result.path, target)
            stem = result.path.stem
            checks = source / CHECKS / stem
            if checks.is_dir():
                shutil.rmtree(out / CHECKS / stem, ignore_errors=True)
                shutil.copytree(checks, out / CHECKS / stem,
                                ignore=shutil.ignore_patterns("harness-check-*"))
            for log in (source / LOGS).glob(f"{stem}.*log"):
                (out / LOGS).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(log, out / LOGS / log.name)
        for row in sweep.skipped:
            skipped[row.get("model_type", "")] = row
    if skipped:
        write_atomically(out / MODELS_FILE, json.dumps(
            {"built": sorted(seen), "skipped": [skipped[k] for k in sorted(skipped)]}, indent=1) + "\n")
    return merged
