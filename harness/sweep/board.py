"""``DIR/index.html``: the status board of a sweep, one static page (inline CSS, no script, no
network): the model x frontend table, the blockers with the models each stops, what changed
since a baseline sweep, the models that crashed and the ones ``--all`` skipped."""

from __future__ import annotations

import datetime
import html
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from harness.compiler.irfile import write_atomically
from harness.port.record import Blocker

from . import highlight
from .records import SweepDir, read_capped, within
from .status import Cell, Change, Row, Status, compare, frontends_of, rows_of

COLOURS = {  # background, text: the word is always printed too (colour is never the only sign)
    Status.VERIFIED: ("#1e7b34", "#fff"),
    Status.LOWERED: ("#7fbf7f", "#000"),
    Status.NUMERICS_MISMATCH: ("#e69500", "#000"),
    Status.MISCOMPILE: ("#8e24aa", "#fff"),
    Status.FAILS: ("#c62828", "#fff"),
    Status.CRASHED: ("#424242", "#fff"),
}
STAGE_ABBREV = {"torchscript-to-torch": "ts→torch", "fx-to-torch": "fx→torch",
                "torch-to-linalg": "→linalg", "refbackend-lowering": "refback", "execution": "run"}

CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin-bottom: .2em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; } th, td { border: 1px solid #ccc; padding: 4px 6px; vertical-align: top; }
th { background: #f3f3f3; text-align: left; }
.status { display: inline-block; padding: 1px 6px; border-radius: 3px; font-weight: 600; }
.small { font-size: 12px; color: #555; } .mono { font-family: ui-monospace, monospace; font-size: 12px; }
.better { color: #1e7b34; font-weight: 600; } .worse { color: #c62828; font-weight: 600; }
.counts span { margin-right: .6em; }
pre.mlir { background: #f8f8f8; padding: 6px; overflow-x: auto; font-size: 12px; margin: 4px 0; }
pre.mlir .err { border: none; color: inherit; } .cut { color: #888; }
"""


@dataclass(frozen=True)
class BoardOptions:
    title: str = "torch-mlir-harness sweep"
    baseline: SweepDir | None = None
    roots: tuple[Path, ...] = ()  # more folders of this sweep (--merge's shards: their ports)


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


def _cell(cell: Cell | None, root: Path, change: Change | None) -> str:
    if cell is None:
        return '<td class="cell" data-status="none"></td>'
    parts = [_badge(cell.status)]
    if cell.status is Status.FAILS:
        parts.append(f'<div>at <b>{_e(cell.failed_stage or "?")}</b></div>')
    elif cell.reached:
        parts.append(f'<div class="small">reached {_e(cell.reached)}</div>')
    if cell.blockers:
        b = min(cell.blockers, key=lambda x: x.rank)
        what = b.op or b.message[:120]
        where = b.called_from or b.location
        parts.append(f'<div class="mono">{_e(what)}</div>')
        if where:
            parts.append(f'<div class="small mono">{_e(_short(where))}</div>')
    if cell.fixes:
        parts.append(f'<div class="small">fixes: {_e(", ".join(cell.fixes))}</div>')
    if cell.max_abs_diff is not None:
        parts.append(f'<div class="small">max abs diff {_diff(cell.max_abs_diff)}</div>')
    if cell.check is not None:
        parts.append(f'<div class="small">op-level check: {_e(cell.check.get("outcome", "?"))}'
                     f'{_check_diff(cell.check)}</div>')
    if cell.culprit and cell.status in (Status.MISCOMPILE, Status.NUMERICS_MISMATCH):
        parts.append(f'<div class="small">the op that computes wrong: {_e(cell.culprit[:300])}</div>')
    if cell.stage_seconds:
        times = ", ".join(f"{STAGE_ABBREV.get(k, k)} {v:.1f}" for k, v in cell.stage_seconds.items())
        parts.append(f'<div class="small">s: {_e(times)}</div>')
    if cell.detail:
        parts.append(f'<div class="small">{_e(cell.detail[:300])}</div>')
    timeline = Path(cell.folder) / "timeline" / "index.html" if cell.folder else None
    if timeline is not None and timeline.is_file():  # sweep --timelines
        parts.append(f'<div class="small">{_link(str(timeline), (root,), "timeline")}</div>')
    if change is not None:
        before = change.before.value if change.before else "absent"
        parts.append(f'<div class="{change.direction}">{_e(change.direction)} (was {_e(before)})</div>')
    return (f'<td class="cell" data-status="{_e(cell.status.value)}" '
            f'data-frontend="{_e(cell.frontend)}">{"".join(parts)}</td>')


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


def _table(rows: list[Row], root: Path, changes: dict) -> str:
    frontends = frontends_of(rows)
    head = "".join(f"<th>{_e(f)}</th>" for f in frontends)
    out = ['<table id="board"><thead><tr><th>model</th><th>variant</th>', head, "</tr></thead><tbody>"]
    for row in rows:
        out.append(f'<tr class="model" data-model="{_e(row.model)}" data-variant="{_e(row.variant)}">'
                   f"<td><b>{_e(row.model)}</b></td><td>{_e(row.variant)}</td>")
        if "-" in row.cells:  # the port left no record: one cell across the frontends
            cell = row.cells["-"]
            out.append(_cell(cell, root, changes.get(cell.key)).replace(
                "<td ", f'<td colspan="{max(1, len(frontends))}" ', 1))
        else:
            for f in frontends:
                got = row.cells.get(f)
                out.append(_cell(got, root, changes.get(got.key) if got else None))
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _blockers(rows: list[Row], roots: tuple[Path, ...]) -> str:
    groups: dict[str, list[tuple[Cell, Blocker]]] = defaultdict(list)
    for row in rows:
        for cell in row.cells.values():
            for b in cell.blockers:
                groups[b.signature].append((cell, b))
    if not groups:
        return "<p>No blockers: every port reached its last stage.</p>"
    out = ['<table id="blockers"><thead><tr><th>blocker</th><th>stops</th><th>where, and what to run'
           "</th></tr></thead><tbody>"]
    for signature, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        cell, b = items[0]
        stopped = sorted({f"{c.variant} ({c.frontend})" for c, _ in items})
        detail = [f'<div class="mono">{_e(b.op or b.stage)}</div>',
                  f'<div class="small">{_e(b.message[:300])}</div>']
        if b.fixes:
            detail.append(f'<div class="small">fix: {_e(", ".join(b.fixes))}</div>')
        where = [f'<div class="mono">{_e(_short(b.location))}</div>'] if b.location else []
        if b.failing_pass:
            where.append(f'<div class="small">failing pass: {_e(b.failing_pass)}</div>')
        text = read_capped(b.reproducer, roots, REPRODUCER_MAX_BYTES) if b.reproducer else None
        if text is not None:
            where.append("<div>reproducer: " + _link(b.reproducer, roots, Path(b.reproducer).name) + "</div>")
            where.append(highlight.mlir_html(text))
        for c, _ in items:
            bundle = within(Path(c.folder) / "report", roots) if c.folder else None
            if bundle is not None and bundle.is_dir():
                where.append("<div>report bundle: " + _link(str(bundle), roots, f"{c.variant} {c.frontend}") + "</div>")
        if cell.report_command:
            where.append(f'<div class="small mono">{_e(cell.report_command)}</div>')
        out.append(f'<tr class="blocker" data-signature="{_e(signature)}"><td>{"".join(detail)}</td>'
                   f'<td data-count="{len(stopped)}">{len(stopped)}: {_e(", ".join(stopped))}</td>'
                   f'<td>{"".join(where)}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _changes(changes: list[Change], baseline: SweepDir) -> str:
    if not changes:
        return f"<p>No change since <span class=\"mono\">{_e(baseline.root)}</span>.</p>"
    better = sum(c.direction in ("better", "new") for c in changes)
    worse = len(changes) - better
    out = [f'<p>Since <span class="mono">{_e(baseline.root)}</span>: <span class="better">{better} '
           f'better or new</span>, <span class="worse">{worse} worse or gone</span>.</p>',
           '<table id="changes"><thead><tr><th>model</th><th>variant</th><th>frontend</th>'
           "<th>before</th><th>now</th><th></th></tr></thead><tbody>"]
    for c in changes:
        model, variant, frontend = c.key
        before = _badge(c.before) if c.before else "absent"
        after = _badge(c.after) if c.after else "absent"
        out.append(f'<tr class="change {c.direction}"><td>{_e(model)}</td><td>{_e(variant)}</td>'
                   f"<td>{_e(frontend)}</td><td>{before}</td><td>{after}</td>"
                   f'<td class="{c.direction}">{_e(c.direction)}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _crashes(sweep: SweepDir, roots: tuple[Path, ...]) -> str:
    failed = [m.failure for m in sweep.models if m.failure is not None]
    if not failed:
        return ""
    items = "".join(f"<li><b>{_e(f.model)}</b>: {_e(f.reason)} after {f.seconds:.0f} s; log "
                    f"{_link(str(sweep.root / f.log), roots, f.log)}</li>" for f in failed)
    return f"<h2>Ports that left no record</h2><ul>{items}</ul>"


def _skipped(sweep: SweepDir) -> str:
    if not sweep.skipped:
        return ""
    items = "".join(f'<tr><td class="mono">{_e(s.get("model_type", ""))}</td><td class="small">'
                    f'{_e(s.get("why", ""))}</td></tr>' for s in sweep.skipped)
    return (f"<h2>Skipped by --all ({len(sweep.skipped)}: no tiny base model builds on the CPU)</h2>"
            f'<table id="skipped"><tbody>{items}</tbody></table>')


def _versions(sweep: SweepDir) -> str:
    for m in sweep.models:
        if m.record is not None and m.record.versions:
            versions: dict[str, object] = dict(m.record.versions)  # as read: strings not checked
            return ", ".join(f"{k} {v}" for k, v in versions.items() if isinstance(v, str))
    return ""


def render(sweep: SweepDir, options: BoardOptions = BoardOptions()) -> str:
    rows = rows_of(sweep)
    changes = compare(rows_of(options.baseline), rows) if options.baseline else []
    by_key = {c.key: c for c in changes}
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
        _table(rows, sweep.root, by_key),
    ]
    if options.baseline is not None:
        parts += ["<h2>Changes since the baseline</h2>", _changes(changes, options.baseline)]
    roots = (sweep.root, *options.roots)
    parts += ["<h2>Blockers</h2>", _blockers(rows, roots), _crashes(sweep, roots), _skipped(sweep),
              f'<p class="small">MLIR highlighted with {_e(highlight.lexer()[1])}. Statuses, worst '
              "first: crashed (no record), fails (stopped at a stage), miscompile (lowered, and "
              "the op-level reference check differs), numerics-mismatch (lowered, differs from "
              "eager), lowered (numbers not checked), verified.</p>",
              "</body></html>"]
    return "\n".join(parts) + "\n"


def write(sweep: SweepDir, options: BoardOptions = BoardOptions()) -> Path:
    return write_atomically(sweep.root / "index.html", render(sweep, options))
