"""What a torch-mlir checkout says about a failure before it is filed (``report --torch-mlir-src``):

- **expected upstream**: which of upstream's e2e configs list a test the failure blocks in their
  expected-failure (``*_XFAIL_SET``) or crashing (``*_CRASHING_SET``) sets, and the comment
  upstream wrote beside it. A maintainer closes an issue about a test their CI already expects
  to fail, so the report says so first.
- **introduced by**: the commit (and its PR number) that added the source line at the root cause
  (``git log -S``), and the commit that last changed it (``git blame``).

The checkout is input, never run: ``xfail_sets.py`` is read with :mod:`ast` (its set literals,
unions and differences, and its ``if torch_version_for_comparison() < version.parse(...)``
blocks decided for the installed torch), its comments with :mod:`tokenize`, and every file is
read through ``git show REV:PATH``, so a bare clone serves as well as a work tree.
"""

from __future__ import annotations

import ast
import datetime
import fnmatch
import io
import operator
import re
import subprocess
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from harness.errors import InputFileError

XFAIL_SETS_FILE = "projects/pt1/e2e_testing/xfail_sets.py"
#: ``xfail_sets.py`` imports this set from the test suite's package.
COMMON_XFAILS_FILE = "projects/pt1/python/torch_mlir_e2e_test/test_suite/__init__.py"
#: Where torch-mlir's C++ and Python sources live (``git log -S`` and ``git grep`` look there).
SOURCE_DIRS = ("lib", "include", "python", "projects")
GIT_TIMEOUT_S = 120.0
#: How many entries below a comment it is still shown for (marked with the distance); a
#: comment further up is more likely about another test of a long sorted set.
COMMENT_REACH = 5
#: The longest comment quoted (some hold a pasted traceback).
COMMENT_CHARS = 240

#: upstream e2e config -> (its expected-failure set, its crashing set), as upstream's
#: ``e2e_testing/main.py`` pairs them. The configs upstream's CI runs come first.
CONFIG_SETS: dict[str, tuple[str, str]] = {
    "fx_importer": ("FX_IMPORTER_XFAIL_SET", "FX_IMPORTER_CRASHING_SET"),
    "onnx": ("ONNX_XFAIL_SET", "ONNX_CRASHING_SET"),
    "fx_importer_tosa": ("FX_IMPORTER_TOSA_XFAIL_SET", "FX_IMPORTER_TOSA_CRASHING_SET"),
    "fx_importer_stablehlo": ("FX_IMPORTER_STABLEHLO_XFAIL_SET", "FX_IMPORTER_STABLEHLO_CRASHING_SET"),
    "onnx_tosa": ("ONNX_TOSA_XFAIL_SET", "ONNX_TOSA_CRASHING_SET"),
    "linalg": ("LINALG_XFAIL_SET", "LINALG_CRASHING_SET"),
}
#: The configs ``build_tools/ci/test_posix.sh`` runs (``linalg``, the TorchScript one, is not).
CI_CONFIGS = frozenset({"fx_importer", "onnx", "fx_importer_tosa", "fx_importer_stablehlo"})
#: The linalg-on-tensors configs and the frontend (by name) each imports through.
CONFIG_FRONTEND = {"fx_importer": "fx", "onnx": "onnx", "linalg": "torchscript"}

_PR_NUMBER = re.compile(r"\(#(\d+)\)\s*$")
_TEST_COUNT = re.compile(r"\s*\(\d+ tests?\)\s*$")
#: What upstream appends to a test's name; a bundle's Blocks often leaves it out.
_TEST_SUFFIX = r"(Module)?(_basic|_dynamic|_static|_differentiable)?"


@dataclass(frozen=True)
class Expectation:
    """One upstream config that expects one e2e test to fail."""

    test: str          # the full test name (``ToDtypeConstModule_basic``)
    config: str        # upstream's e2e config (``linalg``)
    set_name: str      # the set that lists it (``LINALG_XFAIL_SET``)
    crashing: bool     # in the crashing set (not run at all) rather than the xfail set
    comment: str       # upstream's comment above (or beside) the entry, "" when none

    @property
    def in_ci(self) -> bool:
        return self.config in CI_CONFIGS

    def describe(self) -> str:
        comment = self.comment if len(self.comment) <= COMMENT_CHARS else \
            self.comment[:COMMENT_CHARS].rstrip() + " [...]"
        how = "skipped as crashing" if self.crashing else "expected to fail"
        ci = "" if self.in_ci else ", a config upstream's CI does not run"
        if not comment:
            because = " (no comment beside or directly above it)"
        elif comment.startswith("["):
            up, _, text = comment.partition("] ")
            because = f"; the nearest comment above it, {up[1:]}: \"{text}\""
        else:
            because = f" because \"{comment}\""
        return f"`{self.test}`: {how} in `{self.config}` ({self.set_name}{ci}){because}"


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str          # YYYY-MM-DD
    subject: str

    @property
    def pr(self) -> int:
        """The PR number GitHub's squash merge puts at the end of the subject, or 0."""
        found = _PR_NUMBER.search(self.subject)
        return int(found.group(1)) if found else 0

    def describe(self, repo: str = "llvm/torch-mlir") -> str:
        pr = f"{repo}#{self.pr}, " if self.pr else ""
        return f"{pr}commit {self.sha[:12]} ({self.date}): \"{self.subject}\""


@dataclass(frozen=True)
class Origin:
    """Where a root cause's source line is and which commits put it there."""

    text: str                      # the text searched for
    found_at: str                  # ``FILE:LINE`` at the checkout's revision, "" when not found
    introduced: Commit | None      # the first commit whose diff adds the text (git log -S)
    last_changed: Commit | None    # the commit git blame gives for the line

    def describe(self, repo: str = "llvm/torch-mlir") -> list[str]:
        if self.introduced is None and not self.found_at:
            return [f"`{self.text}` was not found in the checkout's sources "
                    f"({', '.join(SOURCE_DIRS)}): no commit to name."]
        lines = []
        if self.introduced is not None:
            lines.append(f"Introduced by {self.introduced.describe(repo)}: the first commit "
                         f"whose diff adds `{self.text}` (`git log -S`).")
        if self.found_at:
            lines.append(f"At `{self.found_at}`"
                         + (f"; last changed by {self.last_changed.describe(repo)} (`git blame`)."
                            if self.last_changed is not None and self.last_changed != self.introduced
                            else "."))
        return lines


class UpstreamSource:
    """A torch-mlir git checkout (or bare clone) read at one revision."""

    def __init__(self, path: str | Path, rev: str = "HEAD"):
        self.path = Path(path)
        self.rev = rev
        if not self.path.is_dir():
            raise self._error("is not a folder")
        done = self._git_run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        if done.returncode != 0:
            raise self._error(f"is not a git checkout holding revision {rev!r}")
        self.sha = done.stdout.strip()
        self.date = self._git("log", "-1", "--format=%ad", "--date=short", self.sha).strip()
        if self.read(XFAIL_SETS_FILE) is None:
            raise self._error(f"has no {XFAIL_SETS_FILE} at {self.sha[:12]}: it is not torch-mlir")

    def _error(self, what: str) -> InputFileError:
        return InputFileError(
            f"--torch-mlir-src {self.path}: {what}. Give a clone of llvm/torch-mlir (`git clone "
            "https://github.com/llvm/torch-mlir`; a bare clone works too): the report reads its "
            "e2e expected-failure sets and the history of the root cause's source line from it.")

    def _git_run(self, *args: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(["git", "-C", str(self.path), *args], capture_output=True,
                                  text=True, timeout=GIT_TIMEOUT_S, check=False,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise self._error(f"could not be read by git ({type(e).__name__}: {e})") from None

    def _git(self, *args: str) -> str:
        return self._git_run(*args).stdout

    def describe(self) -> str:
        return f"llvm/torch-mlir at {self.sha[:12]} ({self.date})"

    def read(self, relpath: str) -> str | None:
        done = self._git_run("show", f"{self.sha}:{relpath}")
        return done.stdout if done.returncode == 0 else None

    def expectations(self, tests: Iterable[str], torch_version: str) -> list[Expectation]:
        """Every (config, set) that lists one of ``tests`` (names as a bundle's Blocks gives
        them: full names, names without the ``_basic`` suffix, or globs such as ``ToDtypeConst*``)."""
        sets = read_sets(self.read(XFAIL_SETS_FILE) or "", self.read(COMMON_XFAILS_FILE) or "",
                         torch_version)
        found: list[Expectation] = []
        for config, names in CONFIG_SETS.items():
            for crashing, set_name in zip((False, True), names, strict=True):
                entries = sets.get(set_name, {})
                for test in sorted(t for t in entries if any(_names(t, b) for b in tests)):
                    found.append(Expectation(test, config, set_name, crashing, entries[test]))
        return found

    def origin(self, text: str) -> Origin:
        """Where ``text`` is in the sources and the commits that added and last changed it."""
        grep = self._git("grep", "-n", "-F", "-e", text, self.sha, "--", *SOURCE_DIRS)
        found_at, last = "", None
        if grep:
            _rev, file, line = grep.splitlines()[0].split(":", 3)[:3]
            found_at = f"{file}:{line}"
            blame = self._git("blame", "--porcelain", "-L", f"{line},{line}", self.sha, "--", file)
            last = _blamed(blame)
        log = self._git("log", "-S", text, "--reverse", "--format=%H%x00%ad%x00%s", "--date=short",
                        self.sha, "--", *SOURCE_DIRS)
        first = log.splitlines()[0].split("\0") if log else []
        introduced = Commit(*first) if len(first) == 3 else None
        return Origin(text, found_at, introduced, last)


def _blamed(porcelain: str) -> Commit | None:
    lines = porcelain.splitlines()
    if not lines:
        return None
    sha = lines[0].split()[0]
    fields = dict(line.split(" ", 1) for line in lines[1:] if " " in line and not line.startswith("\t"))
    date = ""
    if fields.get("committer-time", "").isdigit():
        date = datetime.datetime.fromtimestamp(int(fields["committer-time"]),
                                               datetime.UTC).strftime("%Y-%m-%d")
    return Commit(sha, date, fields.get("summary", ""))


def _names(test: str, blocked: str) -> bool:
    """Whether upstream's ``test`` is the ``blocked`` name a bundle gives."""
    name = _TEST_COUNT.sub("", blocked).strip().strip("`")
    if not name:
        return False
    if any(c in name for c in "*?["):
        return fnmatch.fnmatchcase(test, name)
    return re.fullmatch(re.escape(name) + _TEST_SUFFIX, test) is not None


# ---------------------------------------------------------------------------------------------
# xfail_sets.py, read and never run

_SET_OPS: dict[type[ast.operator], Callable[[frozenset[str], frozenset[str]], frozenset[str]]] = {
    ast.BitOr: operator.or_, ast.Sub: operator.sub, ast.BitAnd: operator.and_}
_COMPARE: dict[type[ast.cmpop], Callable[[Version, Version], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne}


@dataclass(frozen=True)
class _Text:
    comments: dict[int, str]   # line -> comment
    blank: set[int]            # blank lines


def read_sets(text: str, common_text: str, torch_version: str) -> dict[str, dict[str, str]]:
    """Each top-level set of ``xfail_sets.py`` (``{name: {test: comment}}``), with its version
    conditions decided for ``torch_version``; an expression it cannot read leaves that
    assignment out rather than guess."""
    env: dict[str, dict[str, str]] = {}
    for source in (common_text, text):  # the set xfail_sets.py imports, then its own
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        blank = {n for n, line in enumerate(source.splitlines(), 1) if not line.strip()}
        _assignments(tree.body, _Text(_comments(source), blank), env, torch_version)
    return env


def _assignments(body: list[ast.stmt], text: _Text, env: dict[str, dict[str, str]],
                 torch_version: str) -> dict[str, dict[str, str]]:
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], ast.Name):
            value = _value(stmt.value, env, text)
            if value is not None:
                env[stmt.targets[0].id] = value
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) \
                and stmt.target.id in env:
            value = _combine(stmt.op, env[stmt.target.id], _value(stmt.value, env, text))
            if value is not None:
                env[stmt.target.id] = value
        elif isinstance(stmt, ast.If):
            decided = _version_test(stmt.test, torch_version)
            if decided is not None:
                _assignments(stmt.body if decided else stmt.orelse, text, env, torch_version)
    return env


def _value(node: ast.expr, env: dict[str, dict[str, str]], text: _Text) -> dict[str, str] | None:
    if isinstance(node, ast.Set):
        return _literal(node, text.comments, text.blank)
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "set" \
            and not node.args:
        return {}
    if isinstance(node, ast.BinOp):
        return _combine(node.op, _value(node.left, env, text), _value(node.right, env, text))
    return None


def _combine(op: ast.operator, left: dict[str, str] | None, right: dict[str, str] | None
             ) -> dict[str, str] | None:
    apply = _SET_OPS.get(type(op))
    if apply is None or left is None or right is None:
        return None
    kept = apply(frozenset(left), frozenset(right))
    return {name: left.get(name) or right.get(name, "") for name in sorted(kept)}


def _literal(node: ast.Set, comments: dict[int, str], blank: set[int]) -> dict[str, str]:
    """A set literal's strings, each with the comment on its line, else the comment block above
    it inside the literal. Upstream writes one comment over a group of tests, but also one over
    a single entry of a sorted list, so a comment further up is marked with how many entries
    it is above this one (``[3 entries up] ...``); a blank line ends a comment's reach."""
    entries: dict[str, str] = {}
    block, since = "", 0
    line = node.lineno
    for element in node.elts:
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            continue
        gap = range(line + 1, element.lineno)
        above = [comments[n] for n in gap if n in comments]
        if above:
            block, since = " ".join(above), 0
        elif any(n in blank for n in gap) or element.lineno - 1 in blank:
            block = ""
        inline = comments.get(element.lineno, "")
        if inline or not block or not since:
            entries[element.value] = inline or block
        else:  # further down a group, or past a one-entry comment of a sorted list
            entries[element.value] = (f"[{since} {'entry' if since == 1 else 'entries'} up] {block}"
                                      if since <= COMMENT_REACH else "")
        since += 1
        line = element.lineno
    return entries


def _comments(text: str) -> dict[int, str]:
    """Line number -> the comment's text, for every comment in ``text``."""
    found: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found[token.start[0]] = token.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def _version_test(node: ast.expr, torch_version: str) -> bool | None:
    """``torch_version_for_comparison() OP version.parse("X")`` decided for ``torch_version``;
    None for any other test (its block is left out)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and len(node.comparators) == 1):
        return None
    left, right, op = node.left, node.comparators[0], node.ops[0]
    if not (isinstance(left, ast.Call) and isinstance(left.func, ast.Name)
            and left.func.id == "torch_version_for_comparison"):
        return None
    if not (isinstance(right, ast.Call) and right.args and isinstance(right.args[0], ast.Constant)
            and isinstance(right.args[0].value, str)):
        return None
    compare = _COMPARE.get(type(op))
    if compare is None:
        return None
    # torch_version_for_comparison() drops the local part ("+cpu").
    return compare(Version(torch_version.split("+")[0]), Version(right.args[0].value))


# ---------------------------------------------------------------------------------------------
# What a report says of it

@dataclass(frozen=True)
class SourceLookup:
    """What ``report`` asks of a checkout: ``--torch-mlir-src`` and ``--root-cause-code``."""

    source: UpstreamSource | None = None
    code: str = ""     # a line of torch-mlir's source at the root cause, for git log -S / blame


@dataclass(frozen=True)
class SourceTriage:
    """A checkout's answers for one bundle: upstream's expectations of the tests it blocks and
    the history of the root cause's line."""

    checkout: str                        # "llvm/torch-mlir at 0029fc2e102c (2026-08-20)"
    torch_version: str                   # the version the sets' conditions were decided for
    tests: tuple[str, ...]               # the blocked names asked about
    expectations: tuple[Expectation, ...]
    origin: Origin | None
    # The frontends (by name) seen to pass the blocked tests (the report's paths): an xfail
    # entry of their config is then stale, and the report says so.
    passing: tuple[str, ...] = ()

    def expected_by_torchscript_config(self) -> bool:
        """Whether upstream's TorchScript config (``linalg``, which its CI no longer runs)
        already lists every blocked test as failing: a TorchScript-only failure of those tests
        is a known gap, not an issue to file."""
        listed = {e.test for e in self.expectations if e.config == "linalg"}
        return bool(self.tests) and all(any(_names(t, b) for t in listed) for b in self.tests)

    def describe(self, torchscript_only: bool | None = None) -> list[str]:
        """The section's lines; ``torchscript_only`` says whether only the TorchScript path
        hits the failure (None: not known), which decides what upstream's expectation means."""
        lines = [f"Upstream's e2e expectations ({self.checkout}, `{XFAIL_SETS_FILE}` read for "
                 f"torch {self.torch_version}):", ""]
        if not self.tests:
            lines.append("- no e2e test named in Blocks: nothing to look up.")
        elif not self.expectations:
            lines.append(f"- none of the {len(self.tests)} blocked test names is in an "
                         "expected-failure or crashing set of any config "
                         f"({', '.join(CONFIG_SETS)}).")
        groups: dict[tuple[str, str, bool, str], list[str]] = {}
        for e in self.expectations:
            groups.setdefault((e.config, e.set_name, e.crashing, e.comment), []).append(e.test)
        for (config, set_name, crashing, _comment), tests in groups.items():
            first = next(e for e in self.expectations
                         if (e.config, e.set_name, e.crashing) == (config, set_name, crashing)
                         and e.test == tests[0])
            names = ", ".join(f"`{t}`" for t in tests)
            lines.append(f"- {first.describe().replace(f'`{first.test}`', names, 1)}")
        stale = [e for e in self.expectations if CONFIG_FRONTEND.get(e.config) in self.passing]
        for e in stale:
            lines.append(f"- `{e.config}`'s entry for `{e.test}` looks stale: that path passes the test "
                         "(Reproduces through).")
        unlisted = [b for b in self.tests
                    if not any(_names(e.test, b) for e in self.expectations)]
        if self.expectations and unlisted:
            lines.append(f"- in no set of any config: {', '.join(f'`{b}`' for b in unlisted)}.")
        if self.expected_by_torchscript_config():
            lines += ["", "**Expected upstream:** the TorchScript config (`linalg`) lists every "
                      "test this blocks as failing, and upstream's CI does not run that config"
                      + {True: ": only the TorchScript path hits it, so it belongs in a list of "
                               "known gaps, not in a new issue.",
                         False: ", but another path hits it too: file it for that path.",
                         None: ": if only the TorchScript path hits it, it belongs in a list of "
                               "known gaps, not in a new issue."}[torchscript_only]]
        if self.origin is not None:
            lines += ["", "Source history:", ""] + [f"- {line}" for line in self.origin.describe()]
        return lines


def triage_source(lookup: SourceLookup, blocks: Iterable[str], torch_version: str
                  ) -> SourceTriage | None:
    """The checkout's answers for a bundle that blocks ``blocks`` (None without a checkout)."""
    if lookup.source is None:
        return None
    tests = tuple(blocks)
    return SourceTriage(lookup.source.describe(), torch_version.split("+")[0], tests,
                        tuple(lookup.source.expectations(tests, torch_version)),
                        lookup.source.origin(lookup.code) if lookup.code else None)
