"""The subject of a failure: the op of the input that the failure is about, which no reduction
may remove (int-mm's reduced file kept the crash and lost ``torch.aten._int_mm``,
which the binary's canonicalize had turned into the ``torch.aten.mm`` that then crashed).

The subject is read off the original run, never off a candidate's:

- the op the signature names (a legalization failure's blocker, a backend-contract failure's
  illegal op);
- the op of the input at the first error's location (MLIR points a diagnostic at the start of
  the op it is about), when that location is in the input itself: what the pipeline made of
  the op (``see current operation``) may be another op;
- else the op the first error names, when the input holds it.

A candidate keeps the subject when every one of these op names still occurs in its text.
"""

from __future__ import annotations

import os
import re

from harness.compiler.records import RunRecord

# The op name at the start of an op's text: `%0:2 = torch.aten.x ...`, `"torch.aten.x"(...)`,
# `torch.operator "aten.x"(...)`.
_OP_AT = re.compile(r'\s*(?:(?:%[\w#:.$-]+(?::\d+)?\s*,\s*)*%[\w#:.$-]+(?::\d+)?\s*=\s*)?'
                    r'"?(?P<op>[A-Za-z_][\w$]*\.[\w.$]+)"?(?:\s+"(?P<name>[\w.]+)")?')


def subject_ops(record: RunRecord, text: str, input_names: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The op names a candidate must keep, for the original ``record`` of ``text`` (the input's
    text; ``input_names``: the file names its locations and the diagnostics call it by)."""
    found: list[str] = []
    signature = record.signature
    if signature.op:
        found.append(signature.op)
    first = record.first_error()
    if first is not None:
        at = _op_at(text, first.line, first.col) if _names_input(first.file, input_names) else ""
        if at:
            found.append(at)
        elif first.op and occurs(text, first.op):
            found.append(first.op)
    return tuple(dict.fromkeys(o for o in found if occurs(text, o)))


def keeps_subject(text: str, subject: tuple[str, ...]) -> bool:
    return all(occurs(text, op) for op in subject)


def occurs(text: str, op: str) -> bool:
    """Whether ``op`` (a name, or ``torch.operator "aten.x"``) is an op of ``text``."""
    generic, _, named = op.partition(" ")
    pattern = rf'(?<![\w.$]){re.escape(generic)}(?![\w.$])'
    if named:
        pattern += rf'"?\s*{re.escape(named)}'
    return re.search(pattern, text) is not None


def _names_input(file: str, input_names: tuple[str, ...]) -> bool:
    file = file.strip('"')
    return bool(file) and any(file == n or os.path.basename(file) == os.path.basename(n)
                              for n in input_names if n)


def _op_at(text: str, line: int, col: int) -> str:
    lines = text.splitlines()
    if not 1 <= line <= len(lines) or col < 1:
        return ""
    m = _OP_AT.match(lines[line - 1], col - 1)
    if m is None:
        return ""
    op = m.group("op")
    if op == "torch.operator" and m.group("name"):
        return f'{op} "{m.group("name")}"'
    return op
