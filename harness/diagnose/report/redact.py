"""Redaction: the home folder, the user name and the bundle's own paths leave no trace.

Two passes, each a regular expression applied to a stream of chunks, so a file of any size (a
100 MB line of hex weights included) is redacted in linear time and memory bounded by the
chunk size plus the longest match:

1. known folders, matched literally whatever characters they hold (spaces, quotes,
   non-ASCII), in each form they are printed in: as is, escaped the way MLIR prints string
   literals (``\\C3\\A9``, ``\\22``) and inside shell single quotes. The bundle's staging
   folder becomes relative; the others become placeholders that keep the rest of the path
   (``<site-packages>/``, ``<venv>/``, ``<python>/``, ``<repo>/``, ``~/``, ``<path>/``);
2. any other absolute path outside the system folders becomes ``<path>/BASENAME`` (such paths
   are found by their usual characters only), and the user name becomes ``<user>``.

In IR files only string literals (locations, file attributes) are touched, so the IR means the
same thing; report's self-check proves it by replaying the redacted files.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import shlex
import site
import sys
import sysconfig
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from harness.compiler.irfile import write_atomically

CHUNK_CHARS = 1 << 20
TOKENS = ("<site-packages>", "<venv>", "<python>", "<repo>", "<path>", "<user>")

#: Accounts whose name identifies nobody (CI runners, containers). Their homes are still
#: redacted as ``~``; the bare word is not, or "root cause", ``--root-cause`` and TorchScript's
#: ``<root>`` in a bundle written as root would read "<user> cause".
SYSTEM_ACCOUNTS = frozenset({"root", "admin", "user", "runner", "ubuntu", "nobody", "builder"})


def names_someone(user: str) -> bool:
    """Whether the bare user name is worth redacting: a personal account, not a short or
    system one."""
    return len(user) >= 3 and user not in SYSTEM_ACCOUNTS
_SYSTEM_DIRS = frozenset({"usr", "lib", "lib32", "lib64", "libx32", "bin", "sbin", "dev", "proc",
                          "sys", "etc", "run", "System", "Library"})
# A path found by its characters: at most 64 parts of at most 255 characters (PATH_MAX is
# 4096), so every match is bounded and a stream needs to hold back only that much. Patterns
# start with a literal so the regex engine skips ahead at C speed; what a lookbehind would
# say is checked in code instead (a leading lookbehind defeats that skipping: 13 vs 600 MB/s).
# A folder's name may hold spaces ("/opt/Jane Doe/train.py" is one path, redacted whole to
# "<path>/train.py"): every component but the last may, inside it (the "/" after it says the
# path goes on; "a /b" is two paths).
_PATH = re.compile(r"/(?:[\w.+@~-](?:[\w.+@~ -]{0,253}[\w.+@~-])?/){0,63}[\w.+@~-]{1,255}/?")
_NOT_BEFORE_PATH = frozenset(".+~:/\\-")
_PATH_MAX_CHARS = 64 * 256 + 1
_CONTEXT = max(len(t) for t in TOKENS) + 1  # kept before a chunk: lookbehinds, tokens
# A known folder ends where a name could not go on: not before a word character or "-",
# and not before "." + a word character (``/home/jane.bak`` is another folder).
_FOLDER_END = r"(?![\w-]|\.\w)"


def mlir_escaped(text: str, *, upper: bool = True) -> str:
    """``text`` as MLIR prints it inside a string literal: printable ASCII as is but ``"`` and
    ``\\``, every other byte of its UTF-8 as ``\\XX``."""
    out = []
    for byte in text.encode("utf-8", errors="surrogateescape"):
        ch = chr(byte)
        if ch == "\\":
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and ch != '"':
            out.append(ch)
        else:
            out.append(f"\\{byte:02X}" if upper else f"\\{byte:02x}")
    return "".join(out)


def llvm_arg(text: str) -> str:
    """``text`` as LLVM's ``sys::printArg`` prints a program argument: ``"``, ``\\`` and ``$``
    behind a backslash (``h\\"ome/Jane Doe``)."""
    return re.sub(r'(["\\$])', r"\\\1", text)


def llvm_escaped(text: str) -> str:
    """``text`` as LLVM's ``raw_ostream::write_escaped`` prints it (the crash handler's
    ``Program arguments:``): ``\\``, ``"``, tab and newline escaped, every other byte outside
    printable ASCII as three octal digits (``\\303\\251`` for "é")."""
    named = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "\n": "\\n"}
    out = []
    for byte in text.encode("utf-8", errors="surrogateescape"):
        ch = chr(byte)
        out.append(named.get(ch) or (ch if 0x20 <= byte < 0x7F else f"\\{byte:03o}"))
    return "".join(out)


def _printed(folder: str) -> set[str]:
    forms = {folder, mlir_escaped(folder), mlir_escaped(folder, upper=False), llvm_arg(folder),
             llvm_escaped(folder), json.dumps(folder)[1:-1], json.dumps(folder, ensure_ascii=False)[1:-1]}
    if "'" in folder:  # inside a shell word quoted by shlex.quote
        forms.add(folder.replace("'", "'\"'\"'"))
    return forms


def _forms(folder: str) -> set[str]:
    """The ways a folder's path is printed in the bundle's files: as is, in MLIR string
    literals, in LLVM's program arguments, in JSON and C-style strings (``\\"``, ``\\n``),
    in shell single quotes; for a name with a newline, each line of it too (a reader of
    compiler output, the diagnostics parser included, splits the path there)."""
    forms = _printed(folder)
    for piece in folder.split("\n")[1:] if "\n" in folder else []:
        if len(piece.strip("/")) >= 3:
            forms |= _printed(piece)
    return forms


@dataclass
class _Pass:
    """One substitution over a stream: ``hold`` bounds a match's length plus its lookahead, so
    a match that starts more than ``hold`` characters before the end of the text seen so far
    is final."""

    pattern: re.Pattern
    replace: Callable[[re.Match], str]
    hold: int

    def apply(self, text: str, start: int, limit: int) -> tuple[str, int]:
        """``text[start:]`` with every match that starts before ``limit`` replaced; returns the
        new text up to where it stopped (``limit``, or the end of a match past it)."""
        out, last = [], start
        for m in self.pattern.finditer(text, start):
            if m.start() >= limit:
                break
            out.append(text[last:m.start()])
            out.append(self.replace(m))
            last = m.end()
        if last < limit:
            out.append(text[last:limit])
            last = limit
        return "".join(out), last


class _Stream:
    """Feeds chunks through passes in order; each pass holds back what a later chunk could
    still change."""

    def __init__(self, passes: Iterable[_Pass]):
        self._passes = list(passes)
        self._bufs = ["" for _ in self._passes]
        self._seen = [0 for _ in self._passes]  # context characters at the start of each buffer

    def feed(self, chunk: str) -> str:
        for i, p in enumerate(self._passes):
            chunk = self._step(i, p, chunk, final=False)
        return chunk

    def flush(self) -> str:
        out = ""
        for i, p in enumerate(self._passes):
            out = self._step(i, p, out, final=True)
        return out

    def _step(self, i: int, p: _Pass, chunk: str, *, final: bool) -> str:
        buf = self._bufs[i] + chunk
        start = self._seen[i]
        limit = len(buf) if final else len(buf) - p.hold
        if limit <= start:
            self._bufs[i] = buf
            return ""
        out, end = p.apply(buf, start, limit)
        keep = max(0, end - _CONTEXT)
        self._bufs[i] = buf[keep:]
        self._seen[i] = end - keep
        return out


class _IRStream:
    """Routes the bodies of string literals through a text stream; the rest of the IR passes
    unchanged. A literal ends at its closing quote (not one escaped by an odd run of
    backslashes) or at the end of the line."""

    def __init__(self, make_text: Callable[[], _Stream], before: _Stream | None = None):
        self._make_text = make_text
        self._before = before
        self._inner: _Stream | None = None
        self._backslashes = 0  # run of backslashes at the end of the literal so far

    def feed(self, chunk: str) -> str:
        if self._before is not None:
            chunk = self._before.feed(chunk)
        return self._scan(chunk)

    def flush(self) -> str:
        out = self._scan(self._before.flush()) if self._before is not None else ""
        if self._inner is not None:
            out += self._inner.flush()
            self._inner = None
        return out

    def _scan(self, chunk: str) -> str:
        out: list[str] = []
        i, n = 0, len(chunk)
        newline = -1  # the next newline at or after i (str.find: memchr speed)
        while i < n:
            if self._inner is None:
                j = chunk.find('"', i)
                if j < 0:
                    out.append(chunk[i:])
                    break
                out.append(chunk[i:j + 1])
                self._inner, self._backslashes = self._make_text(), 0
                i = j + 1
                continue
            if newline < i:
                newline = chunk.find("\n", i)
                if newline < 0:
                    newline = n
            quote = chunk.find('"', i, newline)
            j = quote if quote >= 0 else newline
            if j >= n:
                self._body(self._inner, out, chunk[i:])
                break
            self._body(self._inner, out, chunk[i:j])
            if j == quote and self._backslashes % 2:  # an escaped quote
                self._body(self._inner, out, '"')
            else:
                out.append(self._inner.flush() + chunk[j])
                self._inner = None
            i = j + 1
        return "".join(out)

    def _body(self, inner: _Stream, out: list[str], text: str) -> None:
        if not text:
            return
        stripped = text.rstrip("\\")
        run = len(text) - len(stripped)
        self._backslashes = self._backslashes + run if not stripped else run
        out.append(inner.feed(text))


@dataclass
class Redactor:
    """Rewrites paths (and the user name) in the bundle's text files.

    ``prefixes`` map a folder to its placeholder ("" makes the path relative: the bundle's own
    folder); with ``enabled`` False only those bundle prefixes apply.
    """

    prefixes: list[tuple[str, str]]
    user: str = ""
    enabled: bool = True
    _tokens: dict[str, str] = field(init=False, repr=False)
    _passes: list[_Pass] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._tokens = {}
        for folder, token in sorted(self.prefixes, key=lambda pt: len(pt[0]), reverse=True):
            for form in _forms(folder):
                self._tokens.setdefault(form, token)
        self._passes = [p for p in (self._folders_pass(), self._paths_pass(), self._user_pass())
                        if p is not None]

    @classmethod
    def for_machine(cls, bundle_dirs: Iterable[str | os.PathLike], *, enabled: bool,
                    other_dirs: Iterable[str | os.PathLike] = ()) -> Redactor:
        """The bundle's folders (made relative), and when ``enabled`` the machine's: Python's
        site-packages, the venv, the Python installation, this checkout, the home folder, and
        ``other_dirs`` (the input's folder, the output folder) as ``<path>`` unless a known
        folder holds them."""
        pairs: list[tuple[str, str]] = []

        def add(path: str | os.PathLike | None, token: str) -> None:
            if not path:
                return
            for variant in {os.path.abspath(path), os.path.realpath(path)}:
                parts = variant.split("/")
                if variant == "/" or (token and len(parts) > 1 and parts[1] in _SYSTEM_DIRS):
                    continue  # system folders are not private; never redact "/" itself
                if all(p != variant for p, _ in pairs):
                    pairs.append((variant, token))

        for d in bundle_dirs:
            add(d, "")
        user = ""
        if enabled:
            site_dirs = [sysconfig.get_paths().get(k) for k in ("purelib", "platlib")]
            try:
                site_dirs += [*site.getsitepackages(), site.getusersitepackages()]
            except AttributeError:  # some embedded interpreters lack them
                pass
            for site_dir in site_dirs:
                add(site_dir, "<site-packages>")
            add(sys.prefix, "<venv>" if sys.prefix != sys.base_prefix else "<python>")
            add(sys.base_prefix, "<python>")
            add(Path(__file__).resolve().parents[3], "<repo>")
            add(os.path.expanduser("~"), "~")
            known = [p for p, _ in pairs]
            for d in other_dirs:
                if not any(_under(os.path.abspath(d), k) for k in known):
                    add(d, "<path>")
            try:
                user = getpass.getuser()
            except (KeyError, OSError):
                user = os.environ.get("USER", "")
        return cls(prefixes=pairs, user=user if names_someone(user) else "", enabled=enabled)

    # --- the two passes ---------------------------------------------------------------------

    def _folders_pass(self) -> _Pass | None:
        if not self._tokens:
            return None
        forms = sorted(self._tokens, key=len, reverse=True)
        absolute, lines = [], []
        for form in forms:  # absolute paths: "/" is factored out; the lines of a split one not
            relative = self._tokens[form] == ""
            end = f"(?:/|{_FOLDER_END})" if relative else _FOLDER_END
            if form.startswith("/"):
                absolute.append(re.escape(form[1:]) + end)
            else:
                lines.append(r"(?<![\w.-])" + re.escape(form) + end)
        pattern = re.compile("/(?:" + "|".join(absolute) + ")" + "".join("|" + a for a in lines))
        return _Pass(pattern, self._folder, hold=len(forms[0]) + 3)

    def _folder(self, m: re.Match) -> str:
        token = self._tokens.get(m.group())
        if token is None:  # a relative one, matched with its slash
            return ""
        return "." if token == "" else token

    def _paths_pass(self) -> _Pass | None:
        return _Pass(_PATH, self._path, hold=_PATH_MAX_CHARS + 2) if self.enabled else None

    def _path(self, m: re.Match) -> str:
        path, at = m.group(), m.start()
        before = m.string[at - 1] if at else ""
        if before and (before.isalnum() or before == "_" or before in _NOT_BEFORE_PATH):
            return path  # inside a word or another path
        if m.string.endswith(TOKENS, max(0, at - _CONTEXT), at):
            return path  # already redacted: redaction is idempotent
        trail = "/" if path.endswith("/") else ""
        p = path.rstrip("/")
        if p.split("/")[1] in _SYSTEM_DIRS or p.startswith("/path/to/"):
            return path
        return f"<path>/{p.rsplit('/', 1)[1]}{trail}"

    def _user_pass(self) -> _Pass | None:
        if not (self.enabled and self.user):
            return None
        return _Pass(re.compile(re.escape(self.user) + r"(?!\w)"), self._user_word,
                     hold=len(self.user) + 2)

    def _user_word(self, m: re.Match) -> str:
        at = m.start()
        before = m.string[at - 1] if at else ""
        return m.group() if before and (before.isalnum() or before == "_") else "<user>"

    def _text_stream(self) -> _Stream:
        return _Stream(self._passes)

    # --- what callers use -------------------------------------------------------------------

    def text(self, text: str) -> str:
        """Any text: known folders, then every other absolute path and the user name."""
        stream = self._text_stream()
        return stream.feed(text) + stream.flush()

    def words(self, words: Iterable[str]) -> list[str]:
        """Each word of a command, before it is shell-quoted."""
        return [self.text(w) for w in words]

    def json(self, value: Any) -> Any:
        """Every string in a JSON-able value (before dumping: escapes would hide paths)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {k: self.json(v) for k, v in value.items()}
        return value

    def ir_chunks(self, chunks: Iterable[str], *, rename: tuple[str, str] | None = None) -> Iterator[str]:
        """IR text in chunks, redacted inside string literals only. ``rename`` is (the file
        name the bindings printed in locations of re-printed IR, the name to show instead)."""
        before = None
        if rename is not None:
            printed, shown = (f'loc("{mlir_escaped(name)}":' for name in rename)
            before = _Stream([_Pass(re.compile(re.escape(printed)), lambda _m: shown,
                                    hold=len(printed) + 1)])
        stream = _IRStream(self._text_stream, before)
        for chunk in chunks:
            yield stream.feed(chunk)
        yield stream.flush()

    def text_chunks(self, chunks: Iterable[str]) -> Iterator[str]:
        stream = self._text_stream()
        for chunk in chunks:
            yield stream.feed(chunk)
        yield stream.flush()

    def copy_file(self, src: Path, dest: Path, *, ir: bool) -> None:
        """``src`` to ``dest`` in chunks (files may be large), redacted."""
        with open(dest, "w", newline="") as fout:
            self._copy(src, fout, ir=ir)

    def redact_file(self, path: Path, *, ir: bool, rename: tuple[str, str] | None = None) -> None:
        """``path`` redacted in place (atomically: a failure leaves the unredacted file whole)."""
        write_atomically(path, lambda f: self._copy(path, f, ir=ir, rename=rename))

    def _copy(self, src: Path, fout: IO[str], *, ir: bool, rename: tuple[str, str] | None = None) -> None:
        with open(src, errors="replace", newline="") as fin:
            chunks = iter(lambda: fin.read(CHUNK_CHARS), "")
            out = self.ir_chunks(chunks, rename=rename) if ir else self.text_chunks(chunks)
            for piece in out:
                fout.write(piece)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def shell_words(words: Iterable[str]) -> str:
    """A command line a user can paste into a POSIX shell."""
    return " ".join(shlex.quote(w) for w in words)
