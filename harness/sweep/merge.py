"""``harness sweep --merge DIR... --out DIR``: the shards' records joined into one folder.
Records are the only state, so joining is copying files; a model found in more than one
folder keeps the copy of the folder named last (and the merge says so). A ``--builds`` sweep's
build folders (``DIR/builds/NAME``) merge build by build."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from harness.compiler import jsonfile
from harness.compiler.irfile import copy_fresh, unlink_link, write_atomically
from harness.errors import OutputError, UsageError

from .records import BUILDS, CHECKS, LOGS, MODELS_FILE, RECORDS, ModelResult, SweepDir, load, within


def _links(folder: str, names: list[str]) -> list[str]:
    """copytree's ignore: symlinks (a shard's file that points elsewhere is not copied)."""
    return [n for n in names if os.path.islink(os.path.join(folder, n))]


@dataclass
class Merged:
    models: list[str] = field(default_factory=list)    # "MODEL" or "MODEL on BUILD"
    replaced: list[str] = field(default_factory=list)  # in more than one folder: the last one wins


def merge(sources: list[Path], out: Path) -> Merged:
    out = out.resolve()
    if not sources:
        raise UsageError("--merge needs at least one sweep folder (the --out DIR of each shard).")
    merged = Merged()
    seen: set[tuple[str, str]] = set()
    skipped: dict[str, dict[str, str]] = {}
    built: set[str] = set()
    for source, sweep in _load_all(sources, out):
        for result in sweep.models:
            label = f"{result.model} on {result.build}" if result.build else result.model
            if (result.build, result.model) in seen:
                merged.replaced.append(label)
            else:
                merged.models.append(label)
            seen.add((result.build, result.model))
            _copy(result, source, out)
        for row in sweep.skipped:
            skipped[row.get("model_type", "")] = row
        built.update(sweep.built)
    if skipped or built:  # the shards' lists, joined (a type one shard ported is not skipped)
        write_atomically(out / MODELS_FILE, jsonfile.dumps(
            {"built": sorted(built),
             "skipped": [skipped[k] for k in sorted(skipped) if k not in built]}, indent=1) + "\n")
    return merged


def _load_all(sources: list[Path], out: Path) -> list[tuple[Path, SweepDir]]:
    """Every source's sweep, each record validated before anything is copied."""
    loaded = []
    for source in sources:
        if source.resolve() == out:
            raise UsageError(f"--merge {source}: the folder to merge into is also a source; give "
                             "--out a new folder.")
        sweep = load(source)
        for result in sweep.models:
            # Records are input: what is copied stays a file of the shard (no link out of it).
            if result.path.is_symlink() or within(result.path, [source]) is None:
                raise UsageError(f"--merge {source}: {result.path} is a link, not a file of the "
                                 "folder; a sweep writes its records as files. Remove it and "
                                 "merge again.")
        loaded.append((source, sweep))
    return loaded


def _copy(result: ModelResult, source: Path, out: Path) -> None:
    """One model's record, its op-level checks and its logs, from ``source`` into ``out`` (each
    build in its own folder); links in the shard are not followed."""
    base, into = ((source / BUILDS / result.build, out / BUILDS / result.build)
                  if result.build else (source, out))
    target = into / RECORDS / result.path.name
    _real_folder(out, target.parent)
    copy_fresh(result.path, target)
    stem = result.path.stem
    checks = base / CHECKS / stem
    if checks.is_dir() and not checks.is_symlink():
        _real_folder(out, into / CHECKS)
        unlink_link(into / CHECKS / stem)
        shutil.rmtree(into / CHECKS / stem, ignore_errors=True)
        skip = shutil.ignore_patterns("harness-check-*")
        shutil.copytree(checks, into / CHECKS / stem,
                        ignore=lambda d, names, skip=skip: {*skip(d, names), *_links(d, names)})
    for log in (base / LOGS).glob(f"{stem}.*log"):
        if log.is_symlink() or not log.is_file():
            continue
        _real_folder(out, into / LOGS)
        copy_fresh(log, into / LOGS / log.name)


def _real_folder(out: Path, folder: Path) -> None:
    """``folder`` (inside ``out``) made if missing; OutputError when it, or a folder between it
    and ``out``, is a link: a merge writes into its own folders, never through a planted link."""
    at = folder
    while at != out and out in at.parents:
        if at.is_symlink():
            raise OutputError(f"{at} in the merge's --out is a symbolic link: a merge writes into "
                              "its own folders only. Remove the link, or merge into a new folder.")
        at = at.parent
    folder.mkdir(parents=True, exist_ok=True)
