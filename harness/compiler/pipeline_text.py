"""Textual pass pipelines (``builtin.module(func.func(cse),canonicalize{max-iterations=3})``):
one lexer with typed tokens and offsets, one parser on top.

Read by the runner (a one-pass pipeline names the pass to blame), by bisect (the pipeline of a
crash reproducer, the ``--dump-pass-pipeline`` listing) and by report. The grammar is MLIR's:
a comma-separated list of elements; an element is a name, then either ``(`` a nested list
``)`` (the name is an op anchor) or an optional ``{options}`` group (a pass or a registered
pipeline). Option groups nest braces and may quote strings.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from harness.errors import PipelineConfigError

from .text import matching_close


class TokenKind(Enum):
    NAME = "name"
    LPAREN = "("
    RPAREN = ")"
    OPTIONS = "{...}"  # a whole brace group, its text without the outer braces
    COMMA = ","
    END = "end"


@dataclass(frozen=True)
class Token:
    kind: TokenKind
    text: str
    offset: int


_NAME = re.compile(r"[\w.\-+$]+")
_SPACE = " \t\r\n"
_DUMP_HEADER = re.compile(r"^\s*Pass Manager with \d+ passes:\s*")


def _error(text: str, offset: int, what: str, fix: str) -> PipelineConfigError:
    return PipelineConfigError(f"cannot read the pass pipeline {text!r}: {what} at offset "
                               f"{offset}. {fix}")


def tokenize(text: str) -> Iterator[Token]:
    """The tokens of ``text``, ending with one ``END`` token."""
    pos = 0
    while True:
        while pos < len(text) and text[pos] in _SPACE:
            pos += 1
        if pos >= len(text):
            yield Token(TokenKind.END, "", pos)
            return
        ch = text[pos]
        if ch in "(),":
            yield Token({"(": TokenKind.LPAREN, ")": TokenKind.RPAREN, ",": TokenKind.COMMA}[ch], ch, pos)
            pos += 1
        elif ch == "{":
            end = matching_close(text, pos, pairs="{}", quotes="\"'")
            if end < 0:
                raise _error(text, pos, "an options group '{' is not closed", "Balance the braces.")
            yield Token(TokenKind.OPTIONS, text[pos + 1:end], pos)
            pos = end + 1
        else:
            m = _NAME.match(text, pos)
            if not m:
                raise _error(text, pos, f"unexpected {text[pos:pos + 20]!r}",
                             "Write it as 'builtin.module(pass1,func.func(pass2))'.")
            yield Token(TokenKind.NAME, m.group(0), pos)
            pos = m.end()


@dataclass(frozen=True)
class PassRef:
    """One pass of a textual pipeline, with the ops it is nested under."""

    name: str
    options: str = ""
    anchors: tuple[str, ...] = ()

    @property
    def is_pipeline(self) -> bool:
        """A registered pipeline name (``...-pipeline``) rather than a single pass."""
        return self.name.endswith("-pipeline")

    def textual(self) -> str:
        """The pass alone as a ``-pass-pipeline`` value, nested as it was."""
        body = self.name + (f"{{{self.options}}}" if self.options else "")
        for anchor in reversed(self.anchors):
            body = f"{anchor}({body})"
        return body


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = list(tokenize(text))
        self.i = 0

    def peek(self) -> Token:
        return self.tokens[self.i]

    def take(self) -> Token:
        token = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return token

    def elements(self, anchors: tuple[str, ...], out: list[PassRef]) -> None:
        while self.peek().kind is TokenKind.NAME:
            name = self.take()
            if self.peek().kind is TokenKind.LPAREN:
                self.take()
                self.elements((*anchors, name.text), out)
                close = self.take()
                if close.kind is not TokenKind.RPAREN:
                    raise _error(self.text, close.offset, f"'{name.text}(' is not closed",
                                 "Balance the parentheses.")
            elif self.peek().kind is TokenKind.OPTIONS:
                out.append(PassRef(name.text, " ".join(self.take().text.split()), anchors))
            else:
                out.append(PassRef(name.text, "", anchors))
            if self.peek().kind is not TokenKind.COMMA:
                return
            self.take()


def parse_pipeline(text: str) -> list[PassRef]:
    """The passes of ``builtin.module(func.func(a{x=1}), b)``, in order.

    Accepts ``--dump-pass-pipeline`` output too (its ``Pass Manager with N passes:`` header is
    skipped). Raises PipelineConfigError, with the offset, on text that is not a pipeline.
    """
    text = _DUMP_HEADER.sub("", text.strip())
    parser = _Parser(text)
    passes: list[PassRef] = []
    parser.elements((), passes)
    rest = parser.peek()
    if rest.kind is not TokenKind.END:
        raise _error(text, rest.offset, f"unexpected {text[rest.offset:rest.offset + 20]!r}",
                     "Write it as 'builtin.module(pass1,func.func(pass2))'.")
    return passes


def pipeline_prefix(text: str) -> str:
    """The first complete ``anchor(...)`` group at the start of ``text`` (as
    ``--dump-pass-pipeline`` prints it before other output), or "" when there is none."""
    start = text.find("(")
    if start < 0:
        return ""
    end = matching_close(text, start, pairs="()", quotes="\"'")
    return text[:end + 1] if end > 0 else ""


# What ``--dump-pass-pipeline`` prints before the pipeline it ran.
_DUMP_HEADER_LINE = re.compile(r"^Pass Manager with \d+ passes:\s*$", re.MULTILINE)


def dumped_pipeline(stderr: str) -> list[PassRef]:
    """The passes ``--dump-pass-pipeline`` printed, as run (registered pipelines expanded)."""
    m = _DUMP_HEADER_LINE.search(stderr)
    listing = pipeline_prefix(stderr[m.end():]) if m else ""
    if not listing:
        return []
    try:
        return parse_pipeline(listing)
    except PipelineConfigError:  # a dump we cannot read only costs the pass positions
        return []


# A pass flag as torch-mlir-opt takes it: ``-name`` or ``--name``, then ``=value`` if any.
_FLAG = re.compile(r"--?[A-Za-z][\w.\-+$]*(?:=.*)?", re.DOTALL)


def check_pipeline(text: str) -> str:
    """``text`` when torch-mlir-opt can take it as one ``-pass-pipeline`` value or as a list of
    pass flags; else PipelineConfigError (a usage error, raised before any run).

    Why: the pipeline is split into argv and printed in the commands users paste; a positional
    word, a control character or a shell operator in it would be another program's argument or
    another shell command, never a pass.
    """
    bad = next((ch for ch in text if ord(ch) < 32 or ord(ch) == 127), None)
    if bad is not None:
        raise PipelineConfigError(
            f"the pass pipeline {text!r} holds the control character {bad!r}: torch-mlir-opt takes "
            "a pipeline on one line. Write it on one line, e.g. "
            "--pipeline='builtin.module(canonicalize)' or --pipeline='-canonicalize -cse'.")
    if not text.lstrip().startswith("-"):
        parse_pipeline(text)
        return text
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise PipelineConfigError(
            f"cannot read the pass flags {text!r}: {e}. Balance the quotes, e.g. "
            "--pipeline='-canonicalize -cse'.") from None
    stray = next((w for w in words if not _FLAG.fullmatch(w)), None)
    if stray is not None:
        raise PipelineConfigError(
            f"the pass flags {text!r} hold {stray!r}, which is not a flag: torch-mlir-opt would "
            "read it as a second input file, and a shell as a command. Give only pass flags "
            "(--pipeline='-canonicalize -cse') or a textual pipeline "
            "(--pipeline='builtin.module(canonicalize,cse)').")
    return text
