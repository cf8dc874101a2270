"""A sweep's folder, read back: the port records, what stood in for a model that left none,
and the op-level checks. Records are the only state of a sweep (no database, no scheduler):
``DIR/records/NAME.json`` is either a port record (``harness.port/1``, written by
``harness port --json``) or a :class:`RunFailure` (``harness.sweep-failure/1``: the port
crashed, hung, or wrote nothing), and ``DIR/checks/NAME/VARIANT.FRONTEND.json`` is the JSON of
``harness check`` (``harness.check/1``) on a port's torch IR.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.compiler import jsonfile
from harness.compiler.irfile import write_atomically
from harness.enums import ParsableEnum
from harness.errors import HarnessError, InputFileError
from harness.execute.outcomes import CheckOutcome
from harness.port.record import SCHEMA as PORT_SCHEMA
from harness.port.record import PortRecord, typed_fields

FAILURE_SCHEMA = "harness.sweep-failure/1"
CHECK_SCHEMA = "harness.check/1"
RECORDS, CHECKS, LOGS, PORTS = "records", "checks", "logs", "ports"
#: ``--builds A,B``: each build's sweep is a sweep folder of its own, ``DIR/builds/NAME/``.
BUILDS = "builds"
class FailureReason(ParsableEnum):
    """Why a model's port left no record."""

    TIMEOUT = "timeout"          # the model's time ran out; its process group was killed
    CRASH = "crash"              # killed by a signal, or an internal error (exit 3)
    NO_RECORD = "no-record"      # it exited without writing its record
    LOST = "lost"                # its cluster worker died twice
    UNSUPPORTED = "unsupported"  # the harness cannot drive the model (detail: its refusal)

    @classmethod
    def _error(cls) -> type[HarnessError]:
        return InputFileError  # read back from a sweep's record


#: A RunFailure's reason for a model the harness cannot drive (the board's own status).
UNSUPPORTED = FailureReason.UNSUPPORTED
MODELS_FILE = "models.json"  # --all: the types ported, refused (with why), and left no record


def file_name(model: str) -> str:
    """A MODEL (``gpt2``, ``t5:encoder``, ``./my-model``) as a file name."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model.strip("./")).strip("_")
    return name or "model"


@dataclass
class RunFailure:
    """A model whose port left no record: why, and where its output went."""

    model: str
    reason: FailureReason
    seconds: float
    returncode: int | None = None
    detail: str = ""       # the last lines of its stderr
    log: str = ""          # DIR/logs/NAME.log, relative to DIR
    build: str = ""        # --builds: the torch-mlir-opt build the port ran on
    schema: str = FAILURE_SCHEMA

    def __post_init__(self) -> None:
        self.reason = FailureReason.parse(self.reason)  # a record's text, or the member

    def to_json(self) -> dict[str, Any]:
        data = jsonfile.plain(asdict(self))
        return {"schema": data.pop("schema"), **data}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunFailure:
        return cls(**typed_fields(cls, data))


@dataclass
class ModelResult:
    """One MODEL of a sweep: its port record, or the failure that stands for it."""

    model: str
    path: Path
    record: PortRecord | None = None
    failure: RunFailure | None = None
    checks: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (variant, port path)
    build: str = ""        # --builds: the build's name (its folder DIR/builds/NAME); "" without

    @property
    def ok(self) -> bool:
        return self.record is not None and self.record.ok and not any(
            check_outcome(c) is CheckOutcome.NUMERICS_MISMATCH for c in self.checks.values())


@dataclass
class SweepDir:
    """What a sweep folder holds: every model's result, and (``--all``) the skipped types."""

    root: Path
    models: list[ModelResult] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # model_type, why
    built: list[str] = field(default_factory=list)  # --all: the types whose port ran

    def by_model(self) -> dict[str, ModelResult]:
        return {m.model: m for m in self.models}

    @property
    def builds(self) -> list[str]:
        """The builds the sweep ran on, in folder order ("" for the records of DIR/records)."""
        return list(dict.fromkeys(m.build for m in self.models))


def read_result(path: str | os.PathLike) -> PortRecord | RunFailure:
    """One file of ``DIR/records``: a port record or a run failure, by its ``schema``."""
    try:
        data = jsonfile.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputFileError(f"cannot read the sweep record {path}: {e}. Delete it and run the "
                             "sweep again (or pass --force).") from None
    schema = str(data.get("schema", "")) if isinstance(data, dict) else ""
    if schema.split("/")[0] == FAILURE_SCHEMA.split("/")[0]:
        if schema != FAILURE_SCHEMA:
            raise InputFileError(f"{path}: a sweep failure of schema {schema!r}; this version "
                                 f"reads {FAILURE_SCHEMA}. Run the sweep again with --force.")
        try:
            return RunFailure.from_json(data)
        except (HarnessError, KeyError, TypeError, ValueError) as e:  # a field of another type
            raise InputFileError(f"{path} is not a valid sweep failure record ({FAILURE_SCHEMA}): "
                                 f"{str(e).rstrip('.')}. Run the sweep again with --force.") from None
    try:
        return PortRecord.from_json(data)
    except InputFileError as e:  # what the record's reader says, with the file it was
        raise InputFileError(f"{path}: {str(e).rstrip('.')}; or run the sweep again with "
                             "--force.") from None
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise InputFileError(f"{path} is not a valid port record ({PORT_SCHEMA}): {e}. Run the "
                             "sweep again with --force.") from None


def within(path: str | os.PathLike, roots: Sequence[Path]) -> Path | None:
    """``path`` resolved (symlinks followed) when it lies inside one of ``roots``, else None.

    Records are input: a path in one (a reproducer, a port folder, a log) is read, linked or
    run only when it stays inside the sweep's own folders, never /etc/shadow or ~/.ssh."""
    if not path:
        return None
    try:
        real = Path(path).resolve()
        return real if any(real.is_relative_to(r.resolve()) for r in roots) else None
    except (OSError, RuntimeError, ValueError):
        return None


def read_capped(path: str | os.PathLike, roots: Sequence[Path], limit: int = 256 * 1024) -> str | None:
    """The first ``limit`` bytes of a regular file inside ``roots`` as text, or None."""
    real = within(path, roots)
    if real is None or not real.is_file():
        return None
    try:
        with open(real, "rb") as f:
            return f.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return None


def write_failure(root: Path, failure: RunFailure) -> Path:
    path = root / RECORDS / f"{file_name(failure.model)}.json"
    write_atomically(path, jsonfile.dumps(failure.to_json(), indent=1) + "\n")
    return path


def check_path(root: Path, model: str, variant: str, frontend: str) -> Path:
    return root / CHECKS / file_name(model) / f"{file_name(variant)}.{frontend}.json"


def read_check(path: Path) -> dict[str, Any] | None:
    """A ``harness check --json`` result, or None when absent or of another schema."""
    try:
        data = jsonfile.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or str(data.get("schema", "")).split("/")[0] != CHECK_SCHEMA.split("/")[0]:
        return None
    return data


def check_outcome(check: dict[str, Any]) -> CheckOutcome | None:
    """The outcome of a ``harness check`` result read back; None when it holds none we know."""
    try:
        return CheckOutcome.parse(str(check.get("outcome", "")))
    except HarnessError:
        return None


def build_folders(root: Path) -> list[tuple[str, Path]]:
    """(build, its sweep folder) of a sweep: ``("", root)`` when it has ``root/records``, and
    each ``root/builds/NAME`` (``--builds``), sorted by name. A link is not a build folder."""
    found = [("", root)] if (root / RECORDS).is_dir() else []
    builds = root / BUILDS
    if builds.is_dir() and not builds.is_symlink():
        found += [(p.name, p) for p in sorted(builds.iterdir())
                  if p.is_dir() and not p.is_symlink() and (p / RECORDS).is_dir()]
    return found


def load(root: str | os.PathLike) -> SweepDir:
    """Every record under ``root/records`` and ``root/builds/NAME/records`` (sorted by build,
    then model), with its checks."""
    root = Path(root)
    folders = build_folders(root)
    if not folders:
        raise InputFileError(f"{root} is not a sweep folder: it has no {RECORDS}/ folder. Pass the "
                             "--out DIR of an earlier 'harness sweep'.")
    sweep = SweepDir(root)
    for build, base in folders:
        for path in sorted((base / RECORDS).glob("*.json")):
            result = read_result(path)
            if isinstance(result, RunFailure):
                result.build = result.build or build
                sweep.models.append(ModelResult(result.model, path, failure=result, build=build))
                continue
            item = ModelResult(result.model, path, record=result, build=build)
            for variant, port in result.ports():
                check = read_check(check_path(base, result.model, variant.name, port.path))
                if check is not None:
                    item.checks[(variant.name, port.path)] = check
            sweep.models.append(item)
    models_file = root / MODELS_FILE
    if models_file.is_file():
        try:
            listed = jsonfile.loads(models_file.read_text())
            sweep.skipped = list(listed.get("skipped", []))
            sweep.built = [str(t) for t in listed.get("built", [])]
        except (OSError, json.JSONDecodeError, AttributeError, TypeError):
            sweep.skipped, sweep.built = [], []
    return sweep
