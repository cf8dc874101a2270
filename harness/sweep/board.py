"""``DIR/index.html``: the status board of a sweep, one static page (inline CSS, no script, no
network): the model x frontend table (one column group per build with ``--builds``; rows
grouped by modality, with counts per status and frontend), the blockers with the models each
stops (one row per cause), what changed since a baseline sweep or between builds, the models
that crashed and the ones ``--all`` skipped.

Written for a porting engineer at 1400 px: every text wraps (no cell pushes the page wider), a
cell's "where" is the blocker's own line, and MLIR locations are shown as FILE:LINE, never as
raw ``loc(...)`` text."""

from __future__ import annotations

import datetime
import html
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from harness.compiler.irfile import write_atomically
from harness.compiler.locations import first_file_location
from harness.models.modality import Modality
from harness.port.record import Blocker

from . import board_dynamic, highlight
from .records import SweepDir, read_capped, within
from .status import (
    Cell,
    CellChange,
    Row,
    Status,
    columns_of,
    compare,
    compare_builds,
    frontends_of,
    rows_of,
)

COLOURS = {  # background, text: the word is always printed too (colour is never the only sign)
    Status.VERIFIED: ("#1e7b34", "#fff"),
    Status.LOWERED: ("#7fbf7f", "#000"),
    Status.NUMERICS_MISMATCH: ("#e69500", "#000"),
    Status.PARTIAL: ("#d4c24a", "#000"),
    Status.MISCOMPILE: ("#8e24aa", "#fff"),
    Status.FAILS: ("#c62828", "#fff"),
    Status.CRASHED: ("#424242", "#fff"),
    Status.UNSUPPORTED: ("#e0e0e0", "#000"),  # not a compiler result: light, not the darkest
}
STAGE_ABBREV = {"torchscript-to-torch": "ts→torch", "fx-to-torch": "fx→torch",
                "torch-to-linalg": "→linalg", "torch-to-tosa": "→tosa", "tosa-to-linalg": "tosa→linalg",
                "torch-to-stablehlo": "→stablehlo", "stablehlo-to-linalg": "stablehlo→linalg",
                "refbackend-lowering": "refback", "execution": "run"}

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin-bottom: .2em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 4px 6px; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f3f3f3; text-align: left; } th.build { text-align: center; background: #e8eef7; }
tr.group th { background: #dde3ea; font-size: 1.05em; } .name { min-width: 7em; }
.status { display: inline-block; padding: 1px 6px; border-radius: 3px; font-weight: 600; }
.small { font-size: 12px; color: #555; } .mono { font-family: ui-monospace, monospace; font-size: 12px; }
.better { color: #1e7b34; font-weight: 600; } .worse { color: #c62828; font-weight: 600; }
.counts span { margin-right: .6em; }
pre.mlir { background: #f8f8f8; padding: 6px; font-size: 12px; margin: 4px 0;
           white-space: pre-wrap; overflow-wrap: anywhere; }
pre.mlir .err { border: none; color: inherit; } .cut { color: #888; }
"""


@dataclass(frozen=True)
class BoardOptions:
    title: str = "torch-mlir-harness sweep"
    baseline: SweepDir | None = None
    baseline_build: str = ""           # --baseline build:NAME: the other builds against NAME
    roots: tuple[Path, ...] = ()  # more folders of this sweep (--merge's shards: their ports)
    builds: tuple[str, ...] = ()  # --builds: the column groups' order (else by name)


# What the board quotes of a reproducer file at most (it shows its first 40 lines).
REPRODUCER_MAX_BYTES = 64 * 1024


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _badge(status: Status) -> str:
    bg, fg = COLOURS[status]
    return f'<span class="status" style="background:{bg};color:{fg}">{_e(status.value)}</span>'


def _link(path: str, roots: tuple[Path, ...], text: str) -> str:
    """A relative link to a file or folder of the sweep (``roots[0]``, or another of its
    folders), when it is there; else the path as text."""
    real = within(path, roots)
    if real is not None and real.exists():
        href = os.path.relpath(real, roots[0].resolve())
        return f'<a href="{_e(href)}">{_e(text)}</a>'
    return f'<span class="mono">{_e(path or text)}</span>'


def _diff(value: float | str | None) -> str:
    if value is None:
        return ""
    return _e(value) if isinstance(value, str) else f"{value:.2e}"


_LOC = re.compile(r"\bloc\(")


def _plain(text: str) -> str:
    """``text`` with each MLIR location, ``loc(...)`` (nested ones too), as its innermost
    FILE:LINE (site-packages cut), or left out when it names none (``loc(unknown)``)."""
    out, at = [], 0
    for m in _LOC.finditer(text):
        if m.start() < at:
            continue
        depth, end, quoted = 0, len(text), False
        for i in range(m.end() - 1, len(text)):
            c = text[i]
            if quoted:
                quoted = c != '"' or text[i - 1] == "\\"
            elif c == '"':
                quoted = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
        where = first_file_location(text[m.start():end])
        out.append(text[at:m.start()] + (f"at {_short(where.file_line)}" if where else ""))
        at = end
    return re.sub(r"\s{2,}", " ", "".join(out) + text[at:]).strip()


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` characters, with an ellipsis that says it was cut."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _where(b: Blocker) -> tuple[str, str]:
    """(the blocker's own line, the model's line that calls it when that is another line): the
    op's location first, as the record says it (a TorchScript trace's caller is not the op)."""
    own = _short(_plain(b.location)) if b.location else ""
    caller = _short(_plain(b.called_from)) if b.called_from else ""
    return (own, caller if caller != own else "") if own else (caller, "")


def _cell(cell: Cell | None, root: Path, change: CellChange | None) -> str:
    if cell is None:
        return '<td class="cell" data-status="none"></td>'
    parts = [_badge(cell.status)]
    if cell.status is Status.FAILS:
        parts.append(f'<div>at <b>{_e(cell.failed_stage or "?")}</b></div>')
    elif cell.reached:
        parts.append(f'<div class="small">reached {_e(cell.reached)}</div>')
    if cell.blockers:
        parts += _blocker(min(cell.blockers, key=lambda x: x.rank))
    if cell.fixes:
        parts.append(f'<div class="small">fixes: {_e(", ".join(cell.fixes))}</div>')
    if cell.max_abs_diff is not None:
        parts.append(f'<div class="small">max abs diff {_diff(cell.max_abs_diff)}</div>')
    if cell.check is not None:
        parts.append(f'<div class="small">op-level check: {_e(cell.check.get("outcome", "?"))}'
                     f'{_check_diff(cell.check)}</div>')
    if cell.culprit and cell.status in (Status.MISCOMPILE, Status.NUMERICS_MISMATCH):
        parts.append(f'<div class="small">the op that computes wrong: '
                     f'{_e(_cut(_plain(cell.culprit), 300))}</div>')
    if cell.stage_seconds:
        times = ", ".join(f"{STAGE_ABBREV.get(k, k)} {v:.1f}" for k, v in cell.stage_seconds.items())
        parts.append(f'<div class="small">s: {_e(times)}</div>')
    if cell.detail:  # a refusal is shown whole: it is the reason, and what to do
        text = _plain(cell.detail)
        parts.append(f'<div class="small reason">'
                     f'{_e(text if cell.status is Status.UNSUPPORTED else _cut(text, 300))}</div>')
    timeline = Path(cell.folder) / "timeline" / "index.html" if cell.folder else None
    if timeline is not None and timeline.is_file():  # sweep --timelines
        parts.append(f'<div class="small">{_link(str(timeline), (root,), "timeline")}</div>')
    if change is not None:
        before = change.before.value if change.before else "absent"
        on = f" on {change.was}" if change.was else ""
        parts.append(f'<div class="{change.direction}">{_e(change.direction)} '
                     f'(was {_e(before)}{_e(on)})</div>')
    build = f' data-build="{_e(cell.build)}"' if cell.build else ""
    return (f'<td class="cell" data-status="{_e(cell.status.value)}" '
            f'data-frontend="{_e(cell.frontend)}"{build}>{"".join(parts)}</td>')


def _blocker(b: Blocker) -> list[str]:
    """The first blocker's lines: the op (or message), then where in the model's code."""
    what = op_name(b.op) or _cut(_plain(b.message), 120)
    own, caller = _where(b)
    parts = [f'<div class="mono">{_e(what)}</div>']
    if own:
        parts.append(f'<div class="small mono" data-where="{_e(own)}">{_e(own)}</div>')
    if caller:
        parts.append(f'<div class="small">called from <span class="mono">{_e(caller)}</span></div>')
    return parts


def _check_diff(check: dict) -> str:
    numerics = check.get("numerics") or {}
    diffs = [o.get("max_abs_diff") for o in numerics.get("outputs", []) if o.get("max_abs_diff") is not None]
    if not diffs:
        return ""
    worst = "nan" if "nan" in diffs else "inf" if "inf" in diffs else max(float(d) for d in diffs)
    return f" (max abs diff {_diff(worst)})"


def _short(location: str) -> str:
    """``.../site-packages/transformers/masking_utils.py:54`` -> ``transformers/masking_utils.py:54``."""
    marker = "site-packages/"
    return location.split(marker, 1)[1] if marker in location else location


_OPERATOR = re.compile(r'^torch\.operator\s*"([^"]+)"$')


def op_name(op: str) -> str:
    """An op as one name, however a frontend or a pass spelled it: ``torch.aten.fft_fftn``,
    ``aten.fft_fftn``, ``aten::fft_fftn`` and ``torch.operator "aten.fft_fftn"`` (an op the
    torch dialect does not define, as TorchScript's import names it) are ``aten.fft_fftn``."""
    name = op.strip()
    operator = _OPERATOR.match(name)
    name = (operator.group(1) if operator else name).replace("::", ".")
    return name.removeprefix("torch.") if re.match(r"torch\.(aten|prim|quantized|prims)\.", name) else name


def cause_of(b: Blocker) -> str:
    """A blocker's cause, the blockers table's row key: its op (one spelling), else its
    signature with its ops spelled the same way."""
    op = op_name(b.op)
    if op:
        return op
    return re.sub(r"\btorch\.(?=(aten|prim|quantized|prims)\.)", "", b.signature.replace("::", "."))


@dataclass
class _Line:
    """A row of the board: one model variant, its rows by build."""

    model: str
    variant: str
    modality: Modality
    rows: dict[str, Row]  # by build


def _lines(rows: list[Row]) -> list[_Line]:
    """The builds' rows of a model variant side by side, in the sweep's order."""
    lines: dict[tuple[str, str], _Line] = {}
    for row in rows:
        line = lines.setdefault((row.model, row.variant), _Line(row.model, row.variant, row.modality, {}))
        line.rows[row.build] = row
        if line.modality is Modality.UNKNOWN:
            line.modality = row.modality
    # A model that left no record on one build and ported on another: one line, the port's.
    for key, line in list(lines.items()):
        if all(set(r.cells) == {"-"} for r in line.rows.values()):
            other = next((o for o in lines.values() if o is not line and o.model == line.model), None)
            if other is not None:
                for build, row in line.rows.items():
                    other.rows.setdefault(build, row)
                del lines[key]
    return list(lines.values())


def _counts(cells: list[Cell]) -> str:
    counts: dict[Status, int] = defaultdict(int)
    for cell in cells:
        counts[cell.status] += 1
    return " ".join(f'<span data-count-status="{_e(s.value)}">{_badge(s)} {counts[s]}</span>'
                    for s in reversed(Status) if counts[s])


def _modalities(lines: list[_Line], builds: list[str], frontends: list[str]) -> str:
    """Per modality: the models, and the count of each status per build and frontend."""
    head = "".join(f"<th>{_e(_column(b, f))}</th>" for b in builds for f in frontends)
    out = [f'<table id="modalities"><thead><tr><th>modality</th><th>models</th>{head}'
           '<th>no record</th></tr></thead><tbody>']
    for modality in Modality:
        group = [line for line in lines if line.modality is modality]
        if not group:
            continue
        cols = []
        for b in builds:
            for f in frontends:
                cells = [r.cells[f] for line in group for bb, r in line.rows.items()
                         if bb == b and f in r.cells]
                cols.append(f'<td data-build="{_e(b)}" data-frontend="{_e(f)}">{_counts(cells)}</td>')
        none = [r.cells["-"] for line in group for r in line.rows.values() if "-" in r.cells]
        out.append(f'<tr class="modality" data-modality="{_e(modality.value)}"><td><b>'
                   f'{_e(_label(modality))}</b></td><td>{len({line.model for line in group})}</td>'
                   f'{"".join(cols)}<td data-frontend="-">{_counts(none)}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _label(modality: Modality) -> str:
    return "no record (not driven, or crashed)" if modality is Modality.UNKNOWN else modality.value


def _models(group: list[_Line]) -> str:
    count = len({line.model for line in group})
    return f"{count} model{'' if count == 1 else 's'}"


def _column(build: str, frontend: str) -> str:
    return f"{build} {frontend}" if build else frontend


def _table(rows: list[Row], root: Path, changes: dict) -> str:
    frontends = frontends_of(rows)
    builds = list(dict.fromkeys(r.build for r in rows)) or [""]
    width = max(1, len(frontends))
    dynamic = board_dynamic.has_dynamic(rows)  # sweep --dynamic: a column group per frontend
    span = width * (2 if dynamic else 1)           # a build's columns
    dyn_head = board_dynamic.head(frontends) if dynamic else ""
    if builds != [""]:  # one column group per build
        head = ('<tr><th class="name" rowspan="2">model</th><th class="name" rowspan="2">variant</th>'
                + "".join(f'<th class="build" colspan="{span}" data-build="{_e(b)}">{_e(b)}</th>'
                          for b in builds)
                + "</tr><tr>" + "".join("".join(f"<th>{_e(f)}</th>" for f in frontends) + dyn_head
                                        for _ in builds) + "</tr>")
    else:
        head = ('<tr><th class="name">model</th><th class="name">variant</th>'
                + "".join(f"<th>{_e(f)}</th>" for f in frontends) + dyn_head + "</tr>")
    out = [f'<table id="board"><thead>{head}</thead>']
    lines = _lines(rows)
    for modality in Modality:
        group = [line for line in lines if line.modality is modality]
        if not group:
            continue
        label = _label(modality)
        cells = [c for line in group for r in line.rows.values() for c in r.cells.values()]
        out.append(f'<tbody data-modality="{_e(modality.value)}"><tr class="group"><th colspan="'
                   f'{2 + span * len(builds)}">{_e(label)}: {_models(group)} '
                   f'<span class="counts">{_counts(cells)}</span></th></tr>')
        for line in group:
            out.append(f'<tr class="model" data-model="{_e(line.model)}" data-variant="{_e(line.variant)}" '
                       f'data-modality="{_e(line.modality.value)}">'
                       f'<td class="name"><b>{_e(line.model)}</b></td>'
                       f'<td class="name">{_e(line.variant)}</td>')
            for build in builds:
                row = line.rows.get(build)
                if row is not None and "-" in row.cells:  # no record: one cell across the frontends
                    lone = row.cells["-"]
                    out.append(_cell(lone, root, changes.get((lone.key, build))).replace(
                        "<td ", f'<td colspan="{width}" ', 1))
                    out += [board_dynamic.cell(None) for _ in frontends] if dynamic else []
                    continue
                for f in frontends:
                    cell = row.cells.get(f) if row is not None else None
                    out.append(_cell(cell, root, changes.get((cell.key, build)) if cell else None))
                if dynamic:
                    out += [board_dynamic.cell(row.cells.get(f) if row is not None else None)
                            for f in frontends]
            out.append("</tr>")
        out.append("</tbody>")
    out.append("</table>")
    return "".join(out)


def _blockers(rows: list[Row], roots: tuple[Path, ...]) -> str:
    groups: dict[str, list[tuple[Cell, Blocker]]] = defaultdict(list)
    for row in rows:
        for cell in row.cells.values():
            for b in cell.blockers:
                groups[cause_of(b)].append((cell, b))
    if not groups:
        return "<p>No blockers: every port reached its last stage.</p>"
    out = ['<table id="blockers"><thead><tr><th>blocker</th><th>stops</th><th>where, and what to run'
           "</th></tr></thead><tbody>"]
    for cause, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        cell, b = items[0]
        signature = b.signature
        stopped = sorted({f"{c.variant} ({_column(c.build, str(c.frontend))})" for c, _ in items})
        detail = [f'<div class="mono">{_e(op_name(b.op) or b.stage)}</div>',
                  f'<div class="small">{_e(_cut(_plain(b.message), 300))}</div>']
        fixes = sorted({f for _, x in items for f in x.fixes})
        if fixes:
            detail.append(f'<div class="small">fix: {_e(", ".join(fixes))}</div>')
        own, caller = _where(b)
        where = [f'<div class="mono">{_e(own)}</div>'] if own else []
        if caller:
            where.append(f'<div class="small">called from <span class="mono">{_e(caller)}</span></div>')
        if b.failing_pass:
            where.append(f'<div class="small">failing pass: {_e(b.failing_pass)}</div>')
        text = read_capped(b.reproducer, roots, REPRODUCER_MAX_BYTES) if b.reproducer else None
        if text is not None:
            where.append("<div>reproducer: " + _link(b.reproducer, roots, Path(b.reproducer).name) + "</div>")
            where.append(highlight.mlir_html(text))
        for c, _ in items:
            bundle = within(Path(c.folder) / "report", roots) if c.folder else None
            if bundle is not None and bundle.is_dir():
                link = _link(str(bundle), roots, f"{c.variant} {c.frontend}")
                where.append(f"<div>report bundle: {link}</div>")
        if cell.report_command:
            where.append(f'<div class="small mono">{_e(cell.report_command)}</div>')
        out.append(f'<tr class="blocker" data-signature="{_e(signature)}" data-cause="{_e(cause)}">'
                   f'<td>{"".join(detail)}</td>'
                   f'<td data-count="{len(stopped)}">{len(stopped)}: {_e(", ".join(stopped))}</td>'
                   f'<td>{"".join(where)}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _unshared(old: list[Row], new: list[Row]) -> str:
    """A sentence naming the columns only one of two sweeps has (not compared), or ""."""
    was, now = columns_of(old), columns_of(new)
    said = [f"{which}: {', '.join(sorted(cols))}"
            for which, cols in (("only the baseline has", was - now), ("only this sweep has", now - was))
            if cols]
    return (f'<p class="small">Not compared (a column only one sweep asked for): {_e("; ".join(said))}.</p>'
            if said else "")


def _changes(changes: list[CellChange], baseline: str, unshared: str = "") -> str:
    """The changes since ``baseline`` (a folder, or "build NAME"), after ``unshared``: the
    columns only one of the sweeps has."""
    if not changes:
        return f"<p>No change since <span class=\"mono\">{_e(baseline)}</span>.</p>{unshared}"
    better = sum(c.direction in ("better", "new") for c in changes)
    worse = len(changes) - better
    builds = any(c.build for c in changes)
    out = [f'<p>Since <span class="mono">{_e(baseline)}</span>: <span class="better">{better} '
           f'better or new</span>, <span class="worse">{worse} worse or gone</span>.</p>{unshared}',
           '<table id="changes"><thead><tr><th>model</th><th>variant</th><th>frontend</th>'
           + ("<th>build</th>" if builds else "")
           + "<th>before</th><th>now</th><th></th></tr></thead><tbody>"]
    for c in changes:
        model, variant, frontend = c.key
        before = _badge(c.before) if c.before else "absent"
        after = _badge(c.after) if c.after else "absent"
        build = f"<td>{_e(c.build)}</td>" if builds else ""
        out.append(f'<tr class="change {c.direction}"><td>{_e(model)}</td><td>{_e(variant)}</td>'
                   f"<td>{_e(frontend)}</td>{build}<td>{before}</td><td>{after}</td>"
                   f'<td class="{c.direction}">{_e(c.direction)}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _crashes(sweep: SweepDir, roots: tuple[Path, ...]) -> str:
    failed = [m.failure for m in sweep.models if m.failure is not None]
    if not failed:
        return ""
    items = "".join(f"<li><b>{_e(f.model)}</b>{_e(' on ' + f.build if f.build else '')}: "
                    f"{_e(f.reason)} after {f.seconds:.0f} s; log "
                    f"{_link(str(sweep.root / f.log), roots, f.log)}</li>" for f in failed)
    return f"<h2>Ports that left no record</h2><ul>{items}</ul>"


def _skipped(sweep: SweepDir) -> str:
    """The types an older ``--all`` listed as not building, without a port: one refused by its
    port is an unsupported row of the table already."""
    rows = {m.model for m in sweep.models}
    skipped = [s for s in sweep.skipped if s.get("model_type") not in rows]
    if not skipped:
        return ""
    items = "".join(f'<tr><td class="mono">{_e(s.get("model_type", ""))}</td><td class="small">'
                    f'{_e(s.get("why", ""))}</td></tr>' for s in skipped)
    return (f"<h2>Skipped by --all ({len(skipped)}: no tiny base model builds on the CPU)</h2>"
            f'<table id="skipped"><tbody>{items}</tbody></table>')


def _versions(sweep: SweepDir) -> str:
    """The packages of the first record; with --builds, each build's torch-mlir-opt."""
    builds = [b for b in sweep.builds if b]
    for m in sweep.models:
        if m.record is not None and m.record.versions:
            versions: dict[str, object] = dict(m.record.versions)  # as read: strings not checked
            return ", ".join(f"{k} {v}" for k, v in versions.items()
                             if isinstance(v, str) and not (builds and k == "torch-mlir-opt"))
    return ""


def _builds(sweep: SweepDir, order: list[str], columns: list[str]) -> str:
    """One line per build: the torch-mlir-opt its records say ran; and, where a column takes
    TOSA on to linalg (TOSA on the RefBackend), that this one step is the wheel's on every
    build: torch-mlir-opt registers none of MLIR's tosa-to-* passes, the wheel's bindings run
    them (pipelines.toml's tosa-to-linalg)."""
    said: dict[str, str] = {}
    for m in sweep.models:
        if m.build and m.record is not None:
            said.setdefault(m.build, m.record.versions.get("torch-mlir-opt", ""))
    items = "".join(f'<li data-build="{_e(b)}"><b>{_e(b)}</b>: <span class="mono">'
                    f'{_e(said.get(b, "") or "no record")}</span></li>' for b in order if b)
    tosa = [c for c in columns if "-tosa" in c and not c.endswith("-iree")]
    if items and tosa:
        items += (f'<li id="tosa-to-linalg">{_e(", ".join(tosa))}: torch-to-tosa ran on each '
                  "build's torch-mlir-opt; tosa-to-linalg, the RefBackend's way on to linalg, on the "
                  "wheel's MLIR bindings for every build (torch-mlir-opt registers no tosa-to-* "
                  "pass), so a difference between builds there is torch-mlir's TOSA, not MLIR's "
                  "TOSA lowering</li>")
    return f'<ul class="small" id="builds">{items}</ul>' if items else ""


def _ordered(rows: list[Row], order: tuple[str, ...]) -> list[Row]:
    """The rows with their builds in ``order`` (the --builds order), the rest after."""
    rank = {b: k for k, b in enumerate(order)}
    return sorted(rows, key=lambda r: rank.get(r.build, len(rank)))


def render(sweep: SweepDir, options: BoardOptions = BoardOptions()) -> str:
    rows = _ordered(rows_of(sweep), options.builds)
    builds = list(dict.fromkeys(r.build for r in rows))
    unshared = ""
    if options.baseline_build:
        changes, since = compare_builds(rows, options.baseline_build), f"build {options.baseline_build}"
    elif options.baseline is not None:
        old = rows_of(options.baseline)
        changes, since, unshared = compare(old, rows), str(options.baseline.root), _unshared(old, rows)
    else:
        changes, since = [], ""
    by_key = {(c.key, c.build): c for c in changes}
    counts: dict[Status, int] = defaultdict(int)
    for row in rows:
        for cell in row.cells.values():
            counts[cell.status] += 1
    summary = "".join(f"<span>{_badge(s)} {counts[s]}</span>" for s in reversed(Status) if counts[s])
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(options.title)}</title>",
        f"<style>{CSS}\n{highlight.css()}</style></head><body>",
        f"<h1>{_e(options.title)}</h1>",
        f'<p class="small">{len(sweep.models)} models, {len(rows)} rows; written {stamp} from '
        f'<span class="mono">{_e(sweep.root)}</span>. {_e(_versions(sweep))}</p>',
        f'<p class="counts">{summary}</p>',
        _builds(sweep, builds, frontends_of(rows)),
        "<h2>By modality</h2>",
        _modalities(_lines(rows), builds, frontends_of(rows)),
        "<h2>Models</h2>",
        _table(rows, sweep.root, by_key),
    ]
    if since:
        parts += ["<h2>Changes since the baseline</h2>", _changes(changes, since, unshared)]
    roots = (sweep.root, *options.roots)
    parts += ["<h2>Blockers</h2>", _blockers(rows, roots), _crashes(sweep, roots), _skipped(sweep),
              f'<p class="small">MLIR highlighted with {_e(highlight.lexer()[1])}. Statuses, worst '
              "first: crashed (no record), unsupported (the harness cannot drive the model: the "
              "reason is in the cell), fails (stopped at a stage), miscompile (lowered, and "
              "the op-level reference check differs), numerics-mismatch (lowered, differs from "
              "eager), partial (the numbers match, but an input the model's modality needs was not "
              "made: a part of the model never ran), lowered (numbers not checked), verified.</p>",
              "</body></html>"]
    return "\n".join(parts) + "\n"


def write(sweep: SweepDir, options: BoardOptions = BoardOptions()) -> Path:
    return write_atomically(sweep.root / "index.html", render(sweep, options))
