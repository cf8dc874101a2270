"""Markdown that text from the input cannot escape.

issue.md quotes what the compiler printed and the IR itself, both of which the input controls:
a line of backticks would close a ``` fence, a carriage return would end a heading, and what
follows (a heading, a remote image) would render in the issue. So fences are longer than any
backtick run in their text, inline code is one line, and prose is escaped.
"""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")
# CommonMark ends a line at LF, CR or CR LF; on one line these and the other controls are
# shown as escapes.
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")
_BREAKS = re.compile(r"\r\n|\r|\n")
# Mid-line, these start the inline markup that could inject something (code, links, images,
# HTML); emphasis only restyles. Prose is never at the start of a line, where "#", "-" or ">"
# would matter.
_SPECIAL = re.compile(r"([\\`\[\]<])")


def _longest_run(text: str) -> int:
    return max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)


def _visible(ch: str) -> str:
    return {"\r": "\\r", "\n": "\\n", "\t": "\\t"}.get(ch, f"\\x{ord(ch):02x}" if ord(ch) < 256
                                                       else f"\\u{ord(ch):04x}")


def one_line(text: str) -> str:
    """``text`` on one line: line breaks and control characters shown as escapes."""
    return _CONTROL.sub(lambda m: _visible(m.group()), text)


def fence(text: str, info: str = "") -> str:
    """A fenced code block holding ``text`` verbatim (line breaks normalised to LF)."""
    body = _BREAKS.sub("\n", text).rstrip("\n")
    marker = "`" * max(3, _longest_run(body) + 1)
    return f"{marker}{info}\n{body}\n{marker}"


def code(text: str) -> str:
    """Inline code holding ``text`` on one line, delimited by more backticks than it holds."""
    body = one_line(text)
    marker = "`" * (_longest_run(body) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{marker}{pad}{body}{pad}{marker}"


_HEADING_SPECIAL = re.compile(r"([\\<])")


def heading(text: str) -> str:
    """A title on one line as it should read in a GitHub title too: its code spans kept (the
    text between balanced backticks), and brackets left alone (a bare ``[torch-mlir]`` is no
    link); only a backslash and ``<`` escaped outside code. Unbalanced backticks: :func:`prose`."""
    line = one_line(text)
    parts = line.split("`")
    if len(parts) % 2 == 0:
        return prose(line)
    return "`".join(part if i % 2 else _HEADING_SPECIAL.sub(r"\\\1", part) for i, part in enumerate(parts))


def prose(text: str) -> str:
    """Plain text on one line, markdown's punctuation escaped so it renders as written."""
    return _SPECIAL.sub(r"\\\1", one_line(text))
