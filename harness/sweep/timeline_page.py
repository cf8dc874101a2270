"""``DIR/index.html`` of ``harness timeline``: one row per pass, with the board's conventions
(inline CSS, no script, no network, MLIR highlighted by ``highlight``). It lives beside the board
because the tools may not import the highlighter (tests/project/test_layout.py); it reads only the
:class:`Timeline` record and the files it names inside its folder."""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from pathlib import Path

from pygments import highlight as _highlight
from pygments.formatters import HtmlFormatter

from harness.compiler.irfile import write_atomically
from harness.diagnose.timeline_record import PassRow, Timeline

from . import highlight
from .board import CSS as BOARD_CSS

PAGE_DIFF_LINES = 50  # diff lines shown (and highlighted: 6 of OPT-125m's 17 s at 300) in a row;
# the whole diff and the IR are linked

CSS = """
tr.changed td.state { color: #1e5fa8; font-weight: 600; } tr.unchanged { color: #777; }
td.state { white-space: nowrap; }
tr.failed { background: #fde8e8; } tr.failed td.state { color: #c62828; font-weight: 700; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.add { background: #e6ffed; display: block; } .del { background: #ffeef0; display: block; }
.hunk { color: #6a737d; display: block; } .error { white-space: pre-wrap; color: #c62828; }
.delta .plus { color: #1e7b34; } .delta .minus { color: #c62828; } .nest { color: #888; font-size: 11px; }
.follow-changed { font-weight: 700; background: #fff3c4; }
#passes td { max-width: 24em; overflow-wrap: anywhere; } #passes td.detail { max-width: 64em; }
#passes pre.mlir { max-width: 64em; max-height: 40em; overflow: auto; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _link(folder: Path, relative: str, text: str) -> str:
    if relative and (folder / relative).is_file():
        return f'<a href="{_e(relative)}">{_e(text)}</a>'
    return ""


def _signed(n: int) -> str:
    return f'<span class="plus">+{n}</span>' if n > 0 else f'<span class="minus">−{-n}</span>'


def _delta(row: PassRow) -> str:
    if not row.delta:
        return ""
    dialects: dict[str, int] = defaultdict(int)
    for name, n in row.delta.items():
        dialects[name.split(".")[0]] += n
    head = " ".join(f"{_e(d)} {_signed(n)}" for d, n in sorted(dialects.items()) if n)
    ops = "<br>".join(f"{_signed(n)} <span class=\"mono\">{_e(name)}</span>"
                      for name, n in sorted(row.delta.items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:12])
    more = f"<br>… {len(row.delta) - 12} more" if len(row.delta) > 12 else ""
    return f'<div class="delta">{head or "0"}</div><div class="delta small">{ops}{more}</div>'


def highlighted_lines(lines: list[str]) -> dict[str, str]:
    """Each distinct line as highlighted HTML, from one lexer run over them all (the same
    function lines recur in diff after diff: OPT-125m's page lexed 219,000 tokens, one per
    line and row)."""
    unique = list(dict.fromkeys(lines))
    try:
        body = _highlight("\n".join(unique) + "\n", highlight.lexer()[0],
                          HtmlFormatter(nowrap=True)).split("\n")
    except Exception:  # a lexer bug must not cost the page: plain text then
        body = []
    if len(body) < len(unique):  # a token across lines: plain text
        body = [html.escape(line) for line in unique]
    return dict(zip(unique, body, strict=False))


def _is_hunk(line: str) -> bool:
    return line.startswith(("+++", "---", "@@"))


def diff_html(lines: list[str], coloured: dict[str, str]) -> str:
    """A unified diff, each line's MLIR highlighted (``coloured``: highlighted_lines of its
    lines without their first character), added and removed lines marked."""
    shown = lines[:PAGE_DIFF_LINES]
    out = []
    for line in shown:
        if _is_hunk(line):
            out.append(f'<span class="hunk">{_e(line)}</span>')
            continue
        body = coloured.get(line[1:], html.escape(line[1:]))
        kind = {"+": "add", "-": "del"}.get(line[:1], "ctx")
        out.append(f'<span class="{kind}">{_e(line[:1])}{body}</span>' if kind != "ctx"
                   else f"{_e(line[:1])}{body}")
    cut = len(lines) - len(shown)
    more = f'<span class="cut">… {cut} more lines in the diff file</span>' if cut > 0 else ""
    return f'<pre class="{highlight.CSS_CLASS}">' + "\n".join(out) + f"{more}</pre>"


def _row(timeline: Timeline, row: PassRow, folder: Path, previous_followed: int | None,
         diff: list[str], coloured: dict[str, str], runs_of: Counter) -> str:
    time, nest = "", ""
    if row.timer is not None and row.timer < len(timeline.timers):
        timer, runs = timeline.timers[row.timer], runs_of[row.timer]
        time = f"{timer.seconds:.4f}" + (f'<div class="small">total of {runs} runs</div>' if runs > 1 else "")
        nest = " › ".join(timer.path[:-1])
    name = (f'<b>{_e(row.pass_name)}</b> <span class="mono small">{_e(row.argument)}</span>'
            + (f'<div class="nest">{_e(nest)}</div>' if nest else ""))
    detail = []
    if row.error:
        detail.append(f'<div class="error">{_e(row.error)}</div>')
    if diff:
        added = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
        removed = sum(1 for line in diff if line.startswith("-") and not line.startswith("---"))
        detail.append(f"<details><summary>diff +{added} −{removed}</summary>"
                      f"{diff_html(diff, coloured)}</details>")
    links = [x for x in (_link(folder, row.ir_file, "IR after"), _link(folder, row.diff_file, "diff file"))
             if x]
    if links:
        detail.append(f'<div class="small">{" · ".join(links)}</div>')
    followed = ""
    if row.followed is not None:
        moved = previous_followed is not None and row.followed != previous_followed
        mark = ' class="num follow-changed"' if moved else ' class="num"'
        followed = f"<td{mark}>{row.followed}</td>"
    return (f'<tr class="pass {row.state.value}" id="pass-{row.index}" data-index="{row.index}" '
            f'data-pass="{_e(row.argument)}" data-state="{row.state.value}"'
            f'{"" if row.followed is None else f" data-followed={row.followed}"}>'
            f'<td class="num">{row.index}</td><td>{name}</td><td class="mono small">{_e(row.anchor)}</td>'
            f'<td class="state">{_e(row.state.value)}</td><td class="num">{time}</td>'
            f'<td>{_delta(row)}</td>{followed}<td class="detail">{"".join(detail)}</td></tr>')


def _summary(timeline: Timeline, folder: Path) -> str:
    failing = timeline.failing
    out = [f'<p id="summary">{len(timeline.rows)} passes run, <b>{len(timeline.changed)}</b> changed the '
           f"module; outcome <b>{_e(timeline.outcome.value)}</b> in {timeline.elapsed_s:.2f} s.</p>"]
    if failing is not None:
        out.append(f'<p id="failing">Failing pass: <a href="#pass-{failing.index}">#{failing.index} '
                   f'{_e(failing.pass_name)}</a> on <span class="mono">{_e(failing.anchor or "?")}</span></p>'
                   f'<div class="error">{_e(failing.error)}</div>')
        out += [f'<p class="onnx">ONNX: {_e(said)}</p>' for said in timeline.onnx]
    slow = "".join(f'<tr><td class="num">{t.seconds:.4f}</td><td class="mono small">{_e(t.label)}</td></tr>'
                   for t in timeline.slowest())
    if slow:
        out.append(f'<h2>Five slowest</h2><table id="slowest"><tbody>{slow}</tbody></table>')
    flow = timeline.op_flow()
    items = [("entered (not in the input, in the output)", flow.entered),
             ("left (in the input, not in the output)", flow.left),
             ("came and went", flow.transient)]
    out.append('<h2>Ops along the way</h2><ul id="opflow">' + "".join(
        f'<li>{_e(what)}: <span class="mono">{_e(", ".join(names)) or "none"}</span></li>'
        for what, names in items) + "</ul>")
    if timeline.follow is not None:
        final = timeline.rows[-1].followed if timeline.rows else timeline.initial_followed
        out.append(f'<p id="follow">Following <span class="mono">{_e(timeline.follow.value)}</span>: '
                   f"{timeline.initial_followed} in the input, {final} at the end; rows where the count "
                   "changes are marked.</p>")
    return "".join(out)


def render(timeline: Timeline, folder: Path) -> str:
    title = f"timeline: {Path(timeline.input_path).name}"
    follow_head = f"<th>{_e(timeline.follow.value)}</th>" if timeline.follow else ""
    diffs = {row.index: (folder / row.diff_file).read_text(errors="replace").splitlines()
             for row in timeline.rows if row.diff_file and (folder / row.diff_file).is_file()}
    coloured = highlighted_lines([line[1:] for lines in diffs.values() for line in lines[:PAGE_DIFF_LINES]
                                  if not _is_hunk(line)])
    rows = []
    previous = timeline.initial_followed
    runs_of = Counter(row.timer for row in timeline.rows)
    for row in timeline.rows:
        rows.append(_row(timeline, row, folder, previous, diffs.get(row.index, []), coloured, runs_of))
        previous = row.followed if row.followed is not None else previous
    input_link = _link(folder, timeline.input_ir, "the input as printed")
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{_e(title)}</title>",
        f"<style>{BOARD_CSS}\n{CSS}\n{highlight.css()}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="small mono">{_e(timeline.pipeline)}<br>{_e(timeline.binary)}'
        f'{"<br>" + input_link if input_link else ""}</p>',
        _summary(timeline, folder),
        "<h2>Passes, in the order they ran</h2>",
        '<table id="passes"><thead><tr><th>#</th><th>pass</th><th>on</th><th>state</th><th>s</th>'
        f"<th>ops</th>{follow_head}<th>diff</th></tr></thead><tbody>",
        *rows, "</tbody></table>",
        f'<p class="small">Times are each pass instance\'s total from -mlir-timing (over every op '
        f"and iteration it ran on). Ops are counted as printed. MLIR highlighted with "
        f"{_e(highlight.lexer()[1])}.</p>",
        "</body></html>"]
    return "\n".join(parts) + "\n"


def write(timeline: Timeline, folder: str | Path) -> Path:
    folder = Path(folder)
    return write_atomically(folder / "index.html", render(timeline, folder),
                            hint="Choose a writable --out folder.")
