"""``harness timeline``: one run of a pipeline, and what each of its passes did to the module.

MLIR prints everything; this reads it (``docs/timeline.md``):

- ``-mlir-print-ir-after-all -mlir-print-ir-tree-dir=DIR/tree`` writes the IR after every pass
  to a file under one folder per op (the module, then a function: the nesting is the path),
  ``X Failed`` in the header of the pass that failed. A pass nested under ``func.func`` prints
  only the function it ran on (not ``-mlir-print-ir-module-scope``: OPT-125m's
  torchscript-to-torch prints 10 MB instead of 87 MB, 271 of its 299 dumps being canonicalize
  on one function). The module after each pass is kept here as its top-level ops, each replaced
  when a dump prints it again. Files, not stderr: LLVM's stderr is unbuffered, and the same
  10 MB there took 2.6 million write calls (OPT-125m: 2.2 s against 1.0 s into files).
- ``-mlir-print-local-scope`` keeps each dump readable on its own (no alias defined elsewhere);
  ``--follow FILE:LINE`` needs ``-mlir-print-debuginfo`` instead, whose location aliases are
  resolved within each dump (OPT-125m: 76 MB of dumps, so it is only on when asked for).
- ``-mlir-timing -mlir-timing-display=tree`` times each pass instance, totalled over the ops and
  iterations it ran on; a row names its instance (``Timer``), and nesting under a pass that runs
  a pipeline itself (LowerToBackendContract's) is kept in the instance's path.
- Weights are elided as everywhere in the harness (runner.ELIDE_PRINTED_WEIGHTS).

Ops are counted as printed: one per line that starts an op (the generic or custom form); an op
is at FILE:LINE when a position of the location on its line (own or caller) is that line.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from harness.compiler import jsonfile
from harness import defaults
from harness.errors import OutputError
from harness.compiler.irfile import write_atomically
from harness.compiler.locations import file_locations
from harness.compiler.records import RunRecord
from harness.compiler.runner import ELIDE_PRINTED_WEIGHTS, RunOptions, run_pipeline
from harness.compiler.text import DUMP_HEADER

from .onnx_terms import left_in, no_pattern, onnx_opset
from .timeline_record import RECORD_NAME, Follow, FollowKind, PassRow, RowState, Timeline
from .timing import Instance, assign_timers, read_timing

TIMING_FLAGS = ("-mlir-timing", "-mlir-timing-display=tree")
TREE_NAME, DIFF_NAME, INPUT_NAME = "tree", "diff", "input.mlir"  # inside the timeline's folder
PRINT_FLAGS = ("-mlir-print-ir-after-all",)
MAX_DIFF_LINES = 4000  # a diff file is cut there (the full IR after the pass is linked beside it)
# Above this many line pairs in the changed middle of an op, difflib (quadratic there) is skipped:
# OPT-125m's inlining canonicalize (3,647 -> 22,432 lines) took 0.8 s of 1.2 s of diffing.
MAX_DIFF_WORK = 2_000_000


@dataclass(frozen=True)
class TimelineOptions:
    timeout_s: float = defaults.TIMEOUT_S   # for the run, and for printing the input
    follow: Follow | None = None


def printing_flags(follow: Follow | None) -> tuple[str, ...]:
    if follow is not None and follow.kind is FollowKind.LOCATION:
        return (*ELIDE_PRINTED_WEIGHTS, "-mlir-print-debuginfo")
    return (*ELIDE_PRINTED_WEIGHTS, "-mlir-print-local-scope")


# ---------------------------------------------------------------------------------------------
# Reading the dumps

_ALIAS = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_ALIAS_REF = re.compile(r"#loc\d*\b")
# An alias, unknown, or one file position: most locations; the rest (callsite, fused) are
# scanned for their closing parenthesis.
_LOC_TOKEN = re.compile(r'\\.|["()]')  # what moves the scan of a location: escapes skipped
_SIMPLE_LOC = re.compile(r' loc\((?:#loc\d*|unknown|"(?:[^"\\]|\\.)*":\d+:\d+)\)')
_OP = re.compile(r'^(?:%[^\s=,]+(?:\s*,\s*%[^\s=,]+)*\s*=\s*)?"?(?P<name>[A-Za-z_][\w$]*(?:\.[\w$]+)*)"?'
                 r"(?=[\s(<{:@\[]|$)")
_SYMBOL = re.compile(r'@(?:"(?:[^"\\]|\\.)*"|[\w.$-]+)')
_NO_DIALECT = {"return": "func.return", "module": "builtin.module", "func": "func.func"}


@dataclass
class Dump:
    pass_name: str
    argument: str
    failed: bool
    text: str                  # as printed, without MLIR's header line
    path: str                  # relative to the timeline's folder: tree/builtin_module_.../N_ARG.mlir


@dataclass
class Group:
    """What ran between two module-level dumps: the module dump ``k`` (when a module pass printed
    it), then the passes nested under the module's ops, by op (each op's own order is exact)."""

    module: Dump | None = None
    nested: dict[str, list[tuple[tuple[int, ...], Dump]]] = field(default_factory=dict)


def read_tree(root: Path, base: Path) -> list[Group]:
    """The dumps of ``-mlir-print-ir-tree-dir=root``, grouped in run order.

    MLIR names a dump ``C0_..._Cn_ARG.mlir`` under one folder per op from the module down; Ci is
    how many times the op at that depth had been printed. The module's count goes up only when a
    module pass prints it, so a dump nested at module count k ran after the module dump k and
    before k+1. Between them the order across sibling ops is not in the names; rows take it
    from the module's own order (build)."""
    groups: dict[int, Group] = {}
    for path in sorted(root.rglob("*.mlir")):
        folders = path.relative_to(root).parts[:-1]
        fields = path.stem.split("_", len(folders))
        if not folders or len(fields) <= len(folders) or not all(f.isdigit() for f in fields[:-1]):
            continue
        counts = tuple(int(f) for f in fields[:-1])
        header, _, text = path.read_text(errors="replace").partition("\n")
        m = DUMP_HEADER.match(header)
        if m is None:
            continue
        dump = Dump(m["cls"], m["arg"], bool(m["failed"]), text, path.relative_to(base).as_posix())
        group = groups.setdefault(counts[0], Group())
        if len(folders) == 1:
            group.module = dump
        else:
            group.nested.setdefault(folders[1], []).append((counts[1:], dump))
    for group in groups.values():
        for dumps in group.nested.values():
            dumps.sort(key=lambda item: item[0])
    return [groups[k] for k in sorted(groups)]


@dataclass
class TopLevelOp:
    """One top-level op of the module (a function, a global): its text and what it holds."""

    text: str                  # as compared and diffed: location aliases left out
    counts: Counter
    followed: int
    digest: bytes              # of the text


class _Locations:
    """One dump's location aliases (``#loc3 = loc(callsite(#loc1 at #loc2))``), asked lazily
    whether a location names ``--follow``'s FILE:LINE: OPT-125m's dumps define thousands each,
    and expanding them all took ten times the run."""

    def __init__(self, lines: list[str], follow: Follow):
        self.table = {m[1]: m[2] for m in map(_ALIAS.match, lines) if m}
        self.follow = follow
        file, _, line = follow.value.rpartition(":")
        self.file, self.line = file.rpartition("/")[2], f'":{line}:'  # in every matching loc
        self.known: dict[str, bool] = {}

    def names(self, loc: str, depth: int = 0) -> bool:
        if self.file in loc and self.line in loc and self.follow.matches_location(file_locations(loc)):
            return True
        return depth < 50 and any(self._alias(r[0], depth) for r in _ALIAS_REF.finditer(loc))

    def _alias(self, name: str, depth: int) -> bool:
        if name not in self.known:
            self.known[name] = False  # a cycle reads as no match
            self.known[name] = self.names(self.table.get(name, ""), depth + 1)
        return self.known[name]


def _measure(lines: list[str], follow: Follow | None, locations: _Locations | None) -> tuple[Counter, int]:
    counts: Counter = Counter()
    followed = 0
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped[0] in "}^#)]/{" or stripped.startswith("{-#"):
            continue
        m = _OP.match(stripped)
        if m is None:
            continue
        name = m["name"]
        name = _NO_DIALECT.get(name, name) if "." not in name else name
        if "." not in name:
            continue
        counts[name] += 1
        if follow is None:
            continue
        if follow.kind is FollowKind.OP:
            followed += follow.matches_op(name)
        elif locations is not None and "loc(" in stripped:
            followed += locations.names(stripped[stripped.rindex("loc("):])
    return counts, followed


def strip_locations(line: str) -> str:
    """``line`` without its ``loc(...)`` (inline or an alias): a dump printed alone inlines
    locations a module dump prints as aliases, and the two must compare equal."""
    line = _SIMPLE_LOC.sub("", line)
    out, start = [], 0
    while (at := line.find(" loc(", start)) >= 0:
        depth, quoted, end = 0, False, len(line)
        for m in _LOC_TOKEN.finditer(line, at + 4):
            token = m[0]
            if token == '"':
                quoted = not quoted
            elif quoted:
                continue
            elif token == "(":
                depth += 1
            elif token == ")":
                depth -= 1
                if depth == 0:
                    end = m.end()
                    break
        out.append(line[start:at])
        start = end
    out.append(line[start:])
    return "".join(out)


def _part(lines: list[str], follow: Follow | None, locations: _Locations | None) -> TopLevelOp:
    counts, followed = _measure(lines, follow, locations)
    text = "\n".join(strip_locations(line) if " loc(" in line else line for line in lines) + "\n"
    return TopLevelOp(text, counts, followed, hashlib.sha1(text.encode()).digest())


def split_dump(text: str, follow: Follow | None,
               cache: dict[str, TopLevelOp] | None = None) -> tuple[str, dict[str, TopLevelOp]]:
    """The op a dump printed (``builtin.module`` or ``func.func @f``) and its parts by key: the
    top-level ops of a module, or the one op printed. ``cache`` holds parts read before by
    their text (a module dump prints every function again; location aliases are per dump, so
    not with ``--follow FILE:LINE``)."""
    lines = text.splitlines()
    locations = None
    if follow is not None and follow.kind is FollowKind.LOCATION:
        locations, cache = _Locations(lines, follow), None
    if "#loc" in text:
        lines = [line for line in lines if not _ALIAS.match(line)]

    def part(chunk: list[str]) -> TopLevelOp:
        if cache is None:
            return _part(chunk, follow, locations)
        joined = "\n".join(chunk)
        if joined not in cache:
            cache[joined] = _part(chunk, follow, locations)
        return cache[joined]

    body = [line for line in lines if line.strip() and not line.startswith("#")]
    if not body:
        return "", {}
    first = body[0]
    m = _OP.match(first.strip())
    name = _NO_DIALECT.get(m["name"], m["name"]) if m else first.split()[0]
    if name != "builtin.module":
        key = _key(first, 0)
        return f"{name} {key}" if key.startswith("@") else name, {key: part(body)}
    parts: dict[str, TopLevelOp] = {}
    chunk: list[str] = []
    inner = body[1:-1] if body[-1].startswith("}") else body[1:]
    for line in [*inner, "  <end>"]:
        if line.startswith("  ") and not line.startswith("   ") and not line.startswith("  }") and chunk:
            key = _key(chunk[0], len(parts))
            parts[key] = part([c[2:] for c in chunk])
            chunk = []
        chunk.append(line)
    return "builtin.module", parts


def _key(first_line: str, index: int) -> str:
    m = _SYMBOL.search(first_line)
    return m[0] if m else f"#{index}"


# ---------------------------------------------------------------------------------------------
# Building the record

class _Module:
    """The module after the passes so far, as its top-level ops; op counts kept as a running
    total (summing every op's counts for each of OPT-125m's 299 rows took a second)."""

    def __init__(self, parts: dict[str, TopLevelOp]):
        self.parts: dict[str, TopLevelOp] = {}
        self.totals: Counter = Counter()
        self.replace(parts, whole=True)

    def replace(self, parts: dict[str, TopLevelOp], *, whole: bool) -> Counter:
        """Puts ``parts`` in (all of the module when ``whole``); returns the op-count change."""
        change: Counter = Counter()
        for key in (list(self.parts) if whole else [k for k in parts if k in self.parts]):
            change.subtract(self.parts[key].counts)
        for part in parts.values():
            change.update(part.counts)
        self.parts = dict(parts) if whole else {**self.parts, **parts}
        self.totals.update(change)
        return Counter({k: v for k, v in change.items() if v})

    def counts(self) -> Counter:
        return +self.totals

    def followed(self) -> int:
        return sum(p.followed for p in self.parts.values())

    def digest(self) -> str:
        h = hashlib.sha1()
        for key, part in self.parts.items():
            h.update(key.encode() + b"\0" + part.digest + b"\0")
        return h.hexdigest()[:16]


def _diff(old: dict[str, TopLevelOp], new: dict[str, TopLevelOp], label: str) -> list[str]:
    out: list[str] = []
    for key in dict.fromkeys([*old, *new]):
        if key in old and key in new and old[key].digest == new[key].digest:
            continue
        a = old[key].text.splitlines() if key in old else []
        b = new[key].text.splitlines() if key in new else []
        if a != b:
            out += _unified(a, b, f"{key} before {label}", f"{key} after {label}")
    return out


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _unified(a: list[str], b: list[str], before: str, after: str, context: int = 2) -> list[str]:
    """difflib's unified diff of the lines between the common head and tail only: a pass
    usually changes a few lines of a long function, and difflib is quadratic-ish (OPT-125m:
    4.7 s of 10 for the whole diff, well under one now)."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start = max(0, head - context)
    a_mid, b_mid = a[head:len(a) - tail], b[head:len(b) - tail]
    if len(a_mid) * len(b_mid) > MAX_DIFF_WORK:  # one hunk: every middle line out, then in
        end_a, end_b = len(a) - tail + min(tail, context), len(b) - tail + min(tail, context)
        return [f"--- {before}", f"+++ {after}",
                f"@@ -{start + 1},{end_a - start} +{start + 1},{end_b - start} @@",
                *(" " + x for x in a[start:head]), *("-" + x for x in a_mid), *("+" + x for x in b_mid),
                *(" " + x for x in a[len(a) - tail:end_a])]
    lines = list(difflib.unified_diff(a[start:len(a) - tail + min(tail, context)],
                                      b[start:len(b) - tail + min(tail, context)],
                                      before, after, lineterm="", n=context))
    def shifted(m: re.Match) -> str:
        return f"@@ -{int(m[1]) + start}{m[2] or ''} +{int(m[3]) + start}{m[4] or ''} @@"
    return [_HUNK.sub(shifted, line) if line.startswith("@@") else line for line in lines]


def _slug(text: str) -> str:
    return re.sub(r"[^\w.-]+", "_", text)[:60]


def _in_order(groups: list[Group], module: _Module, follow: Follow | None,
              leaves: list[Instance]) -> list[tuple[Dump, str, dict[str, TopLevelOp], int | None]]:
    """Every dump with its op, its parts and its timer, in run order.

    Between two module dumps each op's own dumps are in order, and ops go in module order: on
    one thread a nested pipeline runs all its passes on one op before the next (MLIR merges
    neighbouring pipelines on the same kind of op). Only the inliner's own canonicalize visits
    callees in call-graph order instead, which the tree's names do not keep."""
    ordered = []
    keys = list(module.parts)
    known: dict[str, tuple[str, dict[str, TopLevelOp]]] = {}
    parts_read: dict[str, TopLevelOp] = {}
    pos = 0

    def seen(text: str) -> tuple[str, dict[str, TopLevelOp]]:
        """A dump read once per distinct text: most passes print what the last one did."""
        if text not in known:
            known[text] = split_dump(text, follow, parts_read)
        return known[text]

    for group in groups:
        if group.module is not None:
            anchor, parts = seen(group.module.text)
            [timer], pos = assign_timers([(group.module.pass_name, "builtin.module")], leaves, pos)
            ordered.append((group.module, anchor, parts, timer))
            keys = list(parts)
        runs = []
        end = pos
        for dumps in group.nested.values():
            split = [(dump, *seen(dump.text)) for _, dump in dumps]
            key = next(iter(split[0][2]), "")
            rank = keys.index(key) if key in keys else len(keys)
            timers, after = assign_timers([(d.pass_name, a.split(" ")[0]) for d, a, _ in split], leaves, pos)
            end = max(end, after)
            runs.append(((rank, key), [(*item, timer) for item, timer in zip(split, timers, strict=False)]))
        for _, items in sorted(runs, key=lambda r: r[0]):
            ordered += items
        pos = end
    return ordered


def build(record: RunRecord, input_text: str, groups: list[Group], out: Path,
          options: TimelineOptions) -> Timeline:
    """The timeline of a finished run: rows from its dumps, times from its timing report; each
    changed pass's diff is written under ``out/diff``."""
    follow = options.follow
    module = _Module(split_dump(input_text, follow)[1])
    initial_counts = dict(module.counts())
    initial_followed = module.followed() if follow else None
    input_digest = module.digest()
    timers, leaves = read_timing(record.stderr)
    dumps = _in_order(groups, module, follow, leaves)
    errors = _error_text(record)
    rows: list[PassRow] = []
    for i, (dump, anchor, parts, timer) in enumerate(dumps, start=1):
        whole = anchor == "builtin.module"
        old = dict(module.parts) if whole else {k: module.parts[k] for k in parts if k in module.parts}
        delta = module.replace(parts, whole=whole)
        diff = _diff(old, parts, f"{dump.argument} ({i})")
        state = RowState.FAILED if dump.failed else RowState.CHANGED if diff else RowState.UNCHANGED
        diff_file = ""
        if diff:
            diff_file = f"diff/{i:04d}_{_slug(dump.argument)}.diff"
            cut = diff[:MAX_DIFF_LINES] + ([f"... {len(diff) - MAX_DIFF_LINES} more lines"]
                                           if len(diff) > MAX_DIFF_LINES else [])
            write_atomically(out / diff_file, "\n".join(cut) + "\n")
        rows.append(PassRow(index=i, pass_name=dump.pass_name, argument=dump.argument, anchor=anchor,
                            state=state, delta=dict(sorted(delta.items())), digest=module.digest(),
                            timer=timer, followed=module.followed() if follow else None,
                            ir_file=dump.path, diff_file=diff_file, error=errors if dump.failed else ""))
    if not record.ok and not any(r.state is RowState.FAILED for r in rows):
        rows.append(_stopped_row(record, len(rows) + 1, errors, module.digest()))
    lost = lost_dumps(record.stderr)
    if lost:
        errors = "\n".join(filter(None, [errors, (
            f"MLIR could not write {len(lost)} of its IR dumps ({lost[0][:300]}): the passes on "
            "those ops are missing from this timeline (an op name too long for a file name; the "
            "pipeline itself ran to its end)")]))
    return Timeline(input_path=record.input_path, pipeline=record.pipeline, binary=record.binary,
                    outcome=record.outcome, elapsed_s=record.elapsed_s, command=list(record.command),
                    initial_counts=dict(sorted(initial_counts.items())), rows=rows, timers=timers,
                    follow=follow, initial_followed=initial_followed, error=errors,
                    input_digest=input_digest, lost_dumps=lost)


#: MLIR's own complaint when it cannot write a dump of -mlir-print-ir-tree-dir (it goes on, and
#: exits 0): "Error while creating directory DIR: File name too long", "Error opening file ...".
_LOST_DUMP = re.compile(r"^Error (?:while creating directory|opening file|while opening) .*$", re.MULTILINE)


def lost_dumps(stderr: str) -> list[str]:
    """Each distinct line in which MLIR said it could not write a dump."""
    return list(dict.fromkeys(m.group(0).strip() for m in _LOST_DUMP.finditer(stderr)))


def _error_text(record: RunRecord) -> str:
    if record.crash is not None:
        crash = record.crash
        what = f"Assertion `{crash.assertion.condition}' failed" if crash.assertion \
            else crash.fatal_error or crash.signal
        where = f" in {crash.pass_name}" if crash.pass_name else ""
        return f"{record.outcome.value}{where}: {what}".strip()
    if record.ok:
        return ""
    lines = []
    for d in record.diagnostics:
        if d.is_error and not d.is_reproducer_summary:
            lines.append(f"{d.location}: error: {d.message}")
            lines += [f"{n.location}: note: {n.message}" for n in d.notes]
    return "\n".join(lines[:20]) or f"{record.outcome.value} (exit status {record.returncode})"


def _stopped_row(record: RunRecord, index: int, errors: str, digest: str) -> PassRow:
    """The pass a crash or a hang stopped in: MLIR printed nothing after it."""
    name = record.crash.pass_name if record.crash is not None and record.crash.pass_name else "?"
    return PassRow(index=index, pass_name=name, argument=name, anchor="", state=RowState.FAILED,
                   delta={}, digest=digest, error=errors)


def run_timeline(input_path: str, pipeline: str, out: str | Path, *, opt: str | None = None,
                 options: TimelineOptions = TimelineOptions()) -> Timeline:
    """Runs ``pipeline`` once with MLIR's printing and timing flags and writes
    ``out/timeline.json``, ``out/input.mlir``, MLIR's ``out/tree`` and ``out/diff`` (not the
    page: harness.sweep.timeline_page)."""
    out = Path(out)
    _fresh(out)
    flags = printing_flags(options.follow)
    printed_input = out / INPUT_NAME
    before = run_pipeline(input_path, "builtin.module()", opt=opt,
                          options=RunOptions(timeout_s=options.timeout_s, extra_args=flags,
                                             output_path=str(printed_input)))
    input_text = printed_input.read_text() if before.ok and printed_input.is_file() else ""
    tree = out / TREE_NAME
    record = run_pipeline(input_path, pipeline, opt=opt, options=RunOptions(
        timeout_s=options.timeout_s,
        extra_args=(*flags, *PRINT_FLAGS, f"-mlir-print-ir-tree-dir={tree}", *TIMING_FLAGS)))
    timeline = build(record, input_text, read_tree(tree, out) if tree.is_dir() else [], out, options)
    timeline.input_ir = INPUT_NAME if input_text else ""
    failing = timeline.failing
    if failing is not None:
        opset = onnx_opset(input_path)
        timeline.onnx = [f"at #{failing.index} {failing.argument or failing.pass_name}: "
                         + no_pattern(name, opset, node) for name, node in left_in(failing.error)]
    write(timeline, out)
    return timeline


def _fresh(out: Path) -> None:
    """``out`` ready for a timeline: an earlier timeline's files there go (its record is
    replaced); a folder that holds something else is refused."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"the timeline folder {out} is a file. Name a folder (--out).")
    if out.is_dir() and any(out.iterdir()) and not (out / RECORD_NAME).is_file():
        raise OutputError(f"the timeline folder {out} already holds other files. Name a new or "
                          "empty folder, or one an earlier timeline wrote (--out).")
    for name in (TREE_NAME, DIFF_NAME):
        if (out / name).is_dir():
            shutil.rmtree(out / name)
    out.mkdir(parents=True, exist_ok=True)


def write(timeline: Timeline, out: Path) -> Path:
    return write_atomically(out / RECORD_NAME, jsonfile.dumps(timeline.to_json(), indent=1) + "\n",
                            hint="Choose a writable --out folder.")
