"""Small text recognisers the compiler side shares: one of each.

MLIR and LLVM print structured things as text (SSA names, bracketed groups, escaped strings);
these helpers read them the same way everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_SSA = re.compile(r"%[\w.#-]+")
#: A header of MLIR's IR dumps (``--mlir-print-ir-after*``): the pass's class, " Failed" for
#: ``--mlir-print-ir-after-failure``'s, its argument and options, and what it ran on.
DUMP_HEADER_PREFIX = "// -----// IR Dump After "
DUMP_HEADER = re.compile(rf"^{re.escape(DUMP_HEADER_PREFIX)}(?P<cls>.+?)(?P<failed> Failed)?: "
                         r"(?P<arg>[^\s{(]+)(?P<rest>.*?) //----- //$")
_NUMBER = re.compile(r"\b\d+\b")
_HEX = re.compile(r"0x[0-9a-fA-F]+")


#: A terminal's colour codes (torch.onnx.export's errors have them: ``\x1b[96m``).
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def strip_ansi(text: str) -> str:
    """``text`` without terminal colour codes: what a record and a title keep of a message."""
    return _ANSI.sub("", text)


def decimal(digits: str | None) -> int:
    """A line, column or index as printed; 0 (unknown) for none, or for a number no real
    stderr holds (Python refuses to convert over 4,300 digits, and fuzzed stderr has them)."""
    return int(digits) if digits and len(digits) <= 20 else 0


def hexadecimal(digits: str) -> int:
    """An address or offset as printed (64-bit); 0 (unknown) for longer ones, which no real
    stack dump holds and which JSON cannot write out (over 4,300 decimal digits)."""
    return int(digits, 16) if len(digits.lstrip("0")) <= 16 else 0


def drop_ssa_names(text: str) -> str:
    """SSA names (``%12``, ``%arg0``) as ``%_``, so renumbered IR reads the same."""
    return _SSA.sub("%_", text).strip()


def drop_numbers(text: str) -> str:
    """SSA names, hex addresses and decimal numbers blanked: what varies between runs and builds."""
    return _NUMBER.sub("N", _HEX.sub("0x_", _SSA.sub("%_", text))).strip()


def matching_close(text: str, open_at: int, *, pairs: str = "()", quotes: str = "") -> int:
    """The index of the bracket closing ``text[open_at]`` (-1 if none). ``pairs`` is the
    opening and closing character; inside any of ``quotes`` brackets do not count."""
    opening, closing = pairs[0], pairs[1]
    depth, quote = 0, ""
    for i in range(open_at, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in quotes:
            quote = ch
        elif ch == opening:
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i
    return -1


def closing_brackets(text: str, *, pairs: str = "()") -> dict[int, int]:
    """The index of every opening bracket's closing one, in one pass (unclosed ones left out):
    what asking ``matching_close`` for each would give, in linear time on nested text."""
    opening = pairs[0]
    closes: dict[int, int] = {}
    stack: list[int] = []
    for m in re.finditer(f"[{re.escape(pairs)}]", text):
        if m.group() == opening:
            stack.append(m.start())
        elif stack:
            closes[stack.pop()] = m.start()
    return closes


_ESCAPE = re.compile(r"\\(?:([0-9A-Fa-f]{2})|(.))", re.S)
_SIMPLE_ESCAPES = {"n": b"\n", "t": b"\t", "\\": b"\\", '"': b'"'}


def unescape_mlir_string(body: str) -> str:
    """The value of an MLIR string literal's body (between the quotes).

    MLIR escapes ``\\``, ``"``, ``\\n``, ``\\t`` and any other byte as two hex digits
    (``\\C3\\A9`` is UTF-8 ``é``): decoded as bytes, so non-ASCII paths survive.
    """
    out = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(body):
        out += body[pos:m.start()].encode()
        hex_byte, char = m.groups()
        out += bytes([int(hex_byte, 16)]) if hex_byte else _SIMPLE_ESCAPES.get(char, char.encode())
        pos = m.end()
    out += body[pos:].encode()
    return out.decode(errors="replace")


def clip_lines(lines: Iterable[str], *, max_lines: int, max_chars: int) -> tuple[list[str], int]:
    """The first ``max_lines`` lines (an entry holding newlines counts as several), each cut
    to ``max_chars`` with the number of characters left out; and how many lines were left out.
    What a terminal should get of 10 MB of stderr or 200,000 diagnostics."""
    shown: list[str] = []
    hidden = 0
    for entry in lines:
        for line in entry.split("\n"):
            if len(shown) >= max_lines:
                hidden += 1
                continue
            shown.append(f"{line[:max_chars]} ... ({len(line) - max_chars:,} more characters)"
                         if len(line) > max_chars else line)
    return shown, hidden


def split_scope(name: str) -> list[str]:
    """``a::b<c::d>::e`` → ``['a', 'b<c::d>', 'e']`` (``::`` inside brackets kept)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(name):
        ch = name[i]
        if ch in '(<[{':
            depth += 1
        elif ch in ')>]}':
            depth = max(0, depth - 1)
        elif depth == 0 and name.startswith("::", i):
            parts.append(name[start:i])
            start = i + 2
            i += 1
        i += 1
    parts.append(name[start:])
    return parts
