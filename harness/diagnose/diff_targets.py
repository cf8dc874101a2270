"""What ``harness diff`` runs: targets read from the command line, and lit suites run per build.

- an IR file: run through ``--pipeline``;
- a record (``harness run --json`` output, or any ``RunRecord`` JSON): its input and pipeline;
- a sweep, a folder of records: each record, in name order;
- a lit folder (a ``lit.cfg.py`` in it, or any folder named with ``--lit``: lit then finds the
  config above it): every test, once per build, by lit with ``--param opt=BINARY``; lit's ``-o``
  JSON gives each test's result code and time;
- a timeline (``harness timeline``'s ``timeline.json`` or its folder): two are compared as they
  are, one is run again on each build; the answer is the first pass whose output differs.

A config found above an unmarked folder is never run: lit executes its config as Python, and a
folder of records in a shared /tmp would run whatever someone planted above it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence

from harness.compiler import jsonfile
from harness.compiler.outcomes import ParsableEnum
from harness.compiler.pipelines import default as default_pipelines
from harness.compiler.pipeline_text import check_pipeline
from harness.errors import InputFileError, PipelineConfigError, UsageError

from . import timeline_record

LIT_CONFIGS = ("lit.cfg.py", "lit.site.cfg.py", "lit.cfg")


class TargetKind(ParsableEnum):
    IR = "ir"      # an IR file and a pipeline
    LIT = "lit"    # a lit suite folder (expanded into one target per test when run)
    TIMELINE = "timeline"  # a harness.timeline/1 record: its folder, input and pipeline


@dataclass(frozen=True)
class DiffTarget:
    kind: TargetKind
    id: str                # the file (ir), the suite folder, or lit's test name
    input: str = ""        # the IR file, or the lit folder
    pipeline: str = ""     # the textual pipeline (ir)

    @property
    def label(self) -> str:
        if self.kind is TargetKind.IR:
            return f"{self.id} [{_short_pipeline(self.pipeline)}]"
        return self.id

    def to_json(self) -> dict:
        return {"kind": self.kind.value, "id": self.id, "input": self.input,
                "pipeline": self.pipeline}

    @classmethod
    def from_json(cls, d: dict) -> DiffTarget:
        return cls(TargetKind.parse(d["kind"]), d["id"], d.get("input", ""), d.get("pipeline", ""))


def _short_pipeline(textual: str) -> str:
    """The pipeline's name from pipelines/ when it is one, else the text."""
    for name, pipeline in default_pipelines().pipelines.items():
        if pipeline.textual() == textual:
            return name
    return textual


def collect_targets(paths: Sequence[str], pipeline: str | None, *, lit: bool = False) -> list[DiffTarget]:
    """Targets from command-line paths; ``pipeline`` (a name or text) applies to IR files;
    ``lit``: every folder is (inside) a lit suite."""
    if not paths:
        raise UsageError("harness diff needs at least one TARGET: IR files with --pipeline, a "
                         "record or a folder of records (a sweep), or a lit folder.")
    textual = default_pipelines().resolve(pipeline) if pipeline else ""
    targets: list[DiffTarget] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputFileError(f"diff target {raw} does not exist. Name an IR file, a record "
                                 "(.json), a folder of records, or a lit folder.")
        record = path / timeline_record.RECORD_NAME if path.is_dir() else path
        if record.is_file() and timeline_record.is_timeline_record(record):
            timeline = timeline_record.load(record)
            # its folder's copy of the input (older records: the path)
            source = _record_input(record, timeline.input_ir or timeline.input_path)
            targets.append(DiffTarget(TargetKind.TIMELINE, str(record.parent), input=str(source),
                                      pipeline=_record_pipeline(record, timeline.pipeline)))
        elif path.is_dir():
            targets += _lit_suite(path, named=lit) or _sweep(path)
        elif path.suffix == ".json":
            targets.append(_record_target(path))
        else:
            if not textual:
                raise UsageError(f"diff target {raw} is an IR file: say which pipeline to run "
                                 "it through with --pipeline (e.g. --pipeline torch-to-linalg).")
            targets.append(DiffTarget(TargetKind.IR, str(path), input=str(path), pipeline=textual))
    return targets


def _lit_suite(folder: Path, *, named: bool) -> list[DiffTarget]:
    """The folder as a lit target when it holds a lit config itself, or when ``--lit`` says so."""
    if named or any((folder / name).is_file() for name in LIT_CONFIGS):
        return [DiffTarget(TargetKind.LIT, str(folder), input=str(folder))]
    return []


def _sweep(folder: Path) -> list[DiffTarget]:
    records = sorted(folder.rglob("*.json"))
    targets = [_record_target(p, folder) for p in records if _looks_like_record(p)]
    if not targets:
        raise InputFileError(
            f"diff target {folder} is a folder with neither a lit config ({', '.join(LIT_CONFIGS)}) "
            "in it nor run records (*.json with outcome, input_path and pipeline). Name a sweep "
            "folder, IR files with --pipeline, or a lit folder; a folder inside a lit suite runs "
            "as one only with --lit (a config above it is not run unasked).")
    return targets


def _looks_like_record(path: Path) -> bool:
    try:
        d = jsonfile.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(d, dict) and {"outcome", "input_path", "pipeline"} <= d.keys()


def _record_target(path: Path, root: Path | None = None) -> DiffTarget:
    """The IR file and pipeline of a run record. Records are input: its IR must lie inside
    ``root`` (the folder named on the command line, else the record's own folder), symlinks
    resolved; a planted record naming /etc/shadow would have its lines quoted back in the
    parser's errors."""
    try:
        d = jsonfile.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise InputFileError(f"diff target {path} is not readable JSON ({e}).") from None
    if not isinstance(d, dict) or not {"input_path", "pipeline"} <= d.keys():
        raise InputFileError(f"diff target {path} is JSON but not a run record (no input_path "
                             "and pipeline): write one with 'harness run FILE --pipeline P --json'.")
    return DiffTarget(TargetKind.IR, str(path), input=str(_record_input(path, d["input_path"], root)),
                      pipeline=_record_pipeline(path, d["pipeline"]))


def _record_input(path: Path, raw: object, root: Path | None = None) -> Path:
    """A record's input file: a relative one read against the record's folder (then the
    current one), and never outside ``root`` (default: the record's folder), symlinks resolved."""
    if not isinstance(raw, str) or not raw:
        raise InputFileError(f"diff target {path} has no input file name (input_path is "
                             f"{raw!r}): write the record again with the harness.")
    src = Path(raw)
    if not src.is_absolute():
        src = path.parent / src if (path.parent / src).exists() or not src.exists() else src
    root = (root or path.parent).resolve()
    if not src.resolve().is_relative_to(root):
        raise InputFileError(
            f"diff target {path} names the input {src}, outside {root}: a record is not followed "
            "out of its folder. Keep the IR file beside its record (in the folder), or name the IR "
            "file itself with --pipeline.")
    return src


def _record_pipeline(path: Path, raw: object) -> str:
    """A record's pipeline, run again only as a textual pipeline: pass flags read from a file
    would reach torch-mlir-opt as its own options (-load-pass-plugin=X.so runs X's code,
    --mlir-generate-reproducer=PATH overwrites PATH)."""
    text = raw if isinstance(raw, str) else ""
    try:
        if not text or text.lstrip().startswith("-"):
            raise PipelineConfigError("not a textual pipeline")
        check_pipeline(text)
    except PipelineConfigError:
        raise InputFileError(
            f"diff target {path} holds the pipeline {str(raw)[:200]!r}, which is not a textual "
            "pipeline (builtin.module(...)): a pipeline read from a record is never passed to "
            "torch-mlir-opt as flags. Name the IR file itself with --pipeline instead.") from None
    return text


def run_lit(folder: str, binary: str, extra_args: Sequence[str] = ()) -> dict:
    """lit's ``-o`` JSON for ``folder`` run with ``--param opt=BINARY`` (test failures are
    results, not errors; a lit that cannot start or configure the suite is an error). A hang
    is bounded by the suite's own per-test timeout."""
    with tempfile.TemporaryDirectory(prefix="harness-diff-lit-") as tmp:
        out = Path(tmp) / "results.json"
        cmd = [sys.executable, "-c", "import lit.main; lit.main.main()", "-q",
               "--param", f"opt={binary}", "-o", str(out), *extra_args, folder]
        env = {k: v for k, v in os.environ.items() if k != "TORCH_MLIR_OPT"}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL, check=False)
        if not out.is_file():
            tail = " ".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])[:500]
            raise UsageError(f"lit could not run {folder} with {binary} (exit {proc.returncode}): "
                             f"{tail} To see why, run: "
                             f"{shlex.join(['lit', folder, '--param', f'opt={binary}'])}")
        return jsonfile.loads(out.read_text())
