"""The ``harness.timeline/1`` record: what each pass of one pipeline run did to the module.

One :class:`PassRow` per IR dump MLIR printed (``-mlir-print-ir-after-all``), in the order the
passes ran: a pass nested under ``func.func`` gets a row per function it ran on. Paths in the
record (``ir_file``, ``diff_file``) are relative to the record's folder and never leave it.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from harness.compiler import jsonfile
from harness.compiler.locations import SourceLocation
from harness.compiler.outcomes import Outcome
from harness.enums import ParsableEnum
from harness.errors import HarnessError, InputFileError, UsageError

SCHEMA = "harness.timeline/1"
RECORD_NAME = "timeline.json"
_OP_NAME = re.compile(r"[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)+")  # dialect.op, dialect.op.overload
_SCHEMA_FIELD = re.compile(r'"schema"\s*:\s*"' + re.escape(SCHEMA) + '"')


class RowState(ParsableEnum):
    CHANGED = "changed"        # the pass changed the op it ran on
    UNCHANGED = "unchanged"
    FAILED = "failed"          # MLIR printed "IR Dump After X Failed", or the run crashed in it


class FollowKind(ParsableEnum):
    OP = "op"                  # an op name: torch.aten.mm, or aten.mm (a suffix after a dot)
    LOCATION = "location"      # a Python FILE:LINE: ops whose location names it


@dataclass(frozen=True)
class Follow:
    """What ``--follow`` counts after each pass."""

    kind: FollowKind
    value: str                 # the op name, or FILE:LINE as given

    @classmethod
    def parse(cls, text: str) -> Follow:
        text = text.strip()
        file, sep, line = text.rpartition(":")
        if sep and file and line.isdigit():
            return cls(FollowKind.LOCATION, text)
        if _OP_NAME.fullmatch(text):
            return cls(FollowKind.OP, text)
        raise UsageError(
            f"--follow {text!r} is neither an op name (dialect.op, e.g. torch.aten.mm or aten.mm) "
            "nor a Python FILE:LINE (e.g. modeling_opt.py:339). Give one of those.")

    def matches_op(self, name: str) -> bool:
        return self.kind is FollowKind.OP and (name == self.value or name.endswith("." + self.value))

    def matches_location(self, positions: list[SourceLocation]) -> bool:
        """Any file position of an op's location (its own line or a caller's) is FILE:LINE."""
        if self.kind is not FollowKind.LOCATION:
            return False
        file, _, line = self.value.rpartition(":")
        return any(p.line == int(line) and (p.file == file or p.file.endswith("/" + file.lstrip("./")))
                   for p in positions)

    def to_json(self) -> dict:
        return {"kind": self.kind.value, "value": self.value}

    @classmethod
    def from_json(cls, d: dict) -> Follow:
        return cls(FollowKind.parse(d["kind"]), d["value"])


@dataclass(frozen=True)
class Timer:
    """One pass instance of ``-mlir-timing``'s tree: its total over every op and iteration."""

    path: tuple[str, ...]      # enclosing pipelines and passes, outermost first, then the pass
    seconds: float

    @property
    def label(self) -> str:
        return " › ".join(self.path)

    def to_json(self) -> dict:
        return {"path": list(self.path), "seconds": round(self.seconds, 6)}

    @classmethod
    def from_json(cls, d: dict) -> Timer:
        return cls(tuple(d["path"]), float(d["seconds"]))


@dataclass(frozen=True)
class PassRow:
    index: int
    pass_name: str             # the class name MLIR prints (CanonicalizerPass)
    argument: str              # the pass argument (canonicalize)
    anchor: str                # the op it ran on: builtin.module, func.func @forward
    state: RowState
    delta: dict[str, int]      # op name -> count after minus count before (non-zero only)
    digest: str                # of the whole module after the pass (equal digests: equal IR)
    timer: int | None = None   # index into Timeline.timers: the pass instance this run belongs to
    followed: int | None = None  # --follow: how many such ops exist after the pass
    ir_file: str = ""          # the IR MLIR printed after the pass (changed and failed rows)
    diff_file: str = ""        # the unified diff of the op it ran on (changed rows)
    error: str = ""            # the diagnostics of a failed pass

    def to_json(self) -> dict:
        return {"index": self.index, "pass": self.pass_name, "argument": self.argument,
                "anchor": self.anchor, "state": self.state.value, "delta": self.delta,
                "digest": self.digest, "timer": self.timer, "followed": self.followed,
                "ir_file": self.ir_file, "diff_file": self.diff_file, "error": self.error}

    @classmethod
    def from_json(cls, d: dict) -> PassRow:
        return cls(index=int(d["index"]), pass_name=d["pass"], argument=d["argument"],
                   anchor=d["anchor"], state=RowState.parse(d["state"]),
                   delta={str(k): int(v) for k, v in d.get("delta", {}).items()},
                   digest=d.get("digest", ""), timer=d.get("timer"), followed=d.get("followed"),
                   ir_file=_inside(d.get("ir_file", "")), diff_file=_inside(d.get("diff_file", "")),
                   error=d.get("error", ""))


def _inside(relative: str) -> str:
    """A path of the record's folder: relative, without '..' (records are input)."""
    if relative and (os.path.isabs(relative) or ".." in Path(relative).parts):
        raise InputFileError(f"timeline record names the file {relative!r} outside its folder; "
                             "records are read only inside their folder. Rewrite the record with "
                             "'harness timeline'.")
    return relative


@dataclass(frozen=True)
class OpFlow:
    entered: list[str]         # not in the input, in the module at the end
    left: list[str]            # in the input, gone at the end
    transient: list[str]       # created by one pass and removed by a later one


@dataclass
class Timeline:
    input_path: str
    pipeline: str              # the textual pipeline that ran
    binary: str
    outcome: Outcome
    elapsed_s: float
    command: list[str]
    initial_counts: dict[str, int]
    rows: list[PassRow] = field(default_factory=list)
    timers: list[Timer] = field(default_factory=list)
    follow: Follow | None = None
    initial_followed: int | None = None
    input_ir: str = ""         # the input as printed with the same flags, relative
    input_digest: str = ""     # of the input module, as PassRow.digest
    error: str = ""            # the run's first error, or its crash, in one paragraph
    # MLIR's own errors writing its dump files (a folder name past the file system's limit):
    # the passes on those ops are missing from the rows, so the timeline is not whole
    lost_dumps: list[str] = field(default_factory=list)
    # The ONNX ops the failing pass left as generic torch.operator "onnx.X", each in ONNX's
    # terms (onnx_terms' wording: op, node, opset): what an ONNX import's timeline stops at
    onnx: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.SUCCESS and not self.lost_dumps

    @property
    def changed(self) -> list[PassRow]:
        return [r for r in self.rows if r.state is RowState.CHANGED]

    @property
    def failing(self) -> PassRow | None:
        return next((r for r in self.rows if r.state is RowState.FAILED), None)

    def slowest(self, n: int = 5) -> list[Timer]:
        """The slowest pass instances, leaving out a pass whose time holds passes it ran itself
        (LowerToBackendContract's pipeline): those are listed instead."""
        outer = {t.path[:i] for t in self.timers for i in range(1, len(t.path))}
        return sorted((t for t in self.timers if t.path not in outer), key=lambda t: -t.seconds)[:n]

    def final_counts(self) -> Counter:
        counts = Counter(self.initial_counts)
        for row in self.rows:
            counts.update(row.delta)
        return +counts

    def op_flow(self) -> OpFlow:
        """Which op names entered the module along the way and which left it."""
        counts = Counter(self.initial_counts)
        initial = {k for k, v in counts.items() if v > 0}
        seen = set(initial)
        for row in self.rows:
            counts.update(row.delta)
            seen |= {k for k, v in counts.items() if v > 0}
        final = {k for k, v in counts.items() if v > 0}
        return OpFlow(entered=sorted(final - initial), left=sorted(initial - final),
                      transient=sorted(seen - initial - final))

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "input_path": self.input_path, "pipeline": self.pipeline,
                "binary": self.binary, "outcome": self.outcome.value,
                "elapsed_s": round(self.elapsed_s, 4), "command": self.command,
                "follow": self.follow.to_json() if self.follow else None,
                "initial_followed": self.initial_followed, "input_ir": self.input_ir,
                "input_digest": self.input_digest,
                "error": self.error, "lost_dumps": list(self.lost_dumps), "onnx": list(self.onnx),
                "initial_counts": self.initial_counts,
                "timers": [t.to_json() for t in self.timers],
                "rows": [r.to_json() for r in self.rows]}

    @classmethod
    def from_json(cls, d: object) -> Timeline:
        if not isinstance(d, dict) or d.get("schema") != SCHEMA:
            schema = d.get("schema") if isinstance(d, dict) else None
            raise InputFileError(f"not a {SCHEMA} record (schema {schema!r}); "
                                 "write one with 'harness timeline FILE --pipeline P --out DIR'.")
        return cls(input_path=d["input_path"], pipeline=d["pipeline"], binary=d["binary"],
                   outcome=Outcome.parse(d["outcome"]), elapsed_s=float(d["elapsed_s"]),
                   command=list(d.get("command", [])),
                   initial_counts={str(k): int(v) for k, v in d.get("initial_counts", {}).items()},
                   rows=[PassRow.from_json(r) for r in d.get("rows", [])],
                   timers=[Timer.from_json(t) for t in d.get("timers", [])],
                   follow=Follow.from_json(d["follow"]) if d.get("follow") else None,
                   initial_followed=d.get("initial_followed"), input_ir=_inside(d.get("input_ir", "")),
                   input_digest=d.get("input_digest", ""),
                   error=d.get("error", ""), lost_dumps=[str(x) for x in d.get("lost_dumps", [])],
                   onnx=[str(x) for x in d.get("onnx", [])])


def is_timeline_record(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(400)  # to_json writes the schema first
    except OSError:
        return False
    return bool(_SCHEMA_FIELD.search(head))


def load(path: str | os.PathLike) -> Timeline:
    """A record from ``DIR/timeline.json`` or its folder."""
    path = Path(path)
    if path.is_dir():
        path = path / RECORD_NAME
    try:
        data = jsonfile.loads(path.read_text())
    except OSError as e:
        raise InputFileError(f"cannot read the timeline record {path}: {e.strerror or e}. Name the "
                             f"{RECORD_NAME} that 'harness timeline --out DIR' wrote.") from None
    except ValueError as e:
        raise InputFileError(f"the timeline record {path} is not JSON ({e}).") from None
    try:
        return Timeline.from_json(data)
    except (HarnessError, KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        # a forged or damaged record: fields of other types than 'harness timeline' writes
        raise InputFileError(f"the timeline record {path} is not one 'harness timeline' wrote: "
                             f"{type(e).__name__}: {str(e)[:200]}. Run 'harness timeline' again "
                             "to write it.") from None
