"""Known upstream reports and torch-mlir's documented design limits: the catalog a report
triages a failure against before it is filed, kept as data in ``upstream.toml``.

- ``known``: a matching failure is labelled ``known #N`` and not presented as new;
- ``by design``: torch-mlir does it on purpose (e.g. no dynamic size-1 broadcasting, PR #240,
  tracked by #2149);
- ``context``: a PR or RFC behind a decision, listed beside a match, no label;
- ``unsupported-path``: a maintainer's word that upstream will not act on this construct of the
  TorchScript path (e.g. #2363, #1896); it labels a failure ``not on the supported path`` only
  together with the frontends' results (the report's ``--path``: FX and ONNX seen not to hit it).
  An entry marked ``general`` is upstream's word on the whole TorchScript path (#3693 took its
  importer off by default; #3033 and #4387 call the path deprecated and unmaintained): it matches
  no op or message and labels every TorchScript-only failure that is not a crash or a miscompile.

Titles and states were checked by hand (``checked``); one not verified stays empty and is
shown as such, never guessed. A match is a lead for the reader, not proof of a duplicate.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources

from harness.enums import ParsableEnum
from harness.errors import InputFileError

CATALOG_FILE = "upstream.toml"


class UpstreamKind(ParsableEnum):
    ISSUE = "issue"
    PULL_REQUEST = "pull request"


class Triage(ParsableEnum):
    KNOWN = "known"
    BY_DESIGN = "by-design"
    CONTEXT = "context"
    UNSUPPORTED_PATH = "unsupported-path"


@dataclass(frozen=True)
class UpstreamReport:
    repo: str                      # llvm/torch-mlir
    number: int
    kind: UpstreamKind
    state: str                     # when last checked by hand: "open", "merged", "closed", "unknown"
    title: str                     # "" when not verified
    triage: Triage = Triage.KNOWN
    blocker_ops: tuple[str, ...] = ()   # the blocker (or the failing op) it is about
    reported_ops: tuple[str, ...] = ()  # when set, the op MLIR named must be one of these too
    messages: tuple[str, ...] = ()      # substrings of the error or run-time failure
    note: str = ""                 # how it relates, in one clause
    checked: str = ""              # the date title and state were seen on GitHub
    related: tuple[int, ...] = ()  # numbers of the same repository behind it
    general: bool = False          # unsupported-path: about every TorchScript-only failure

    @property
    def ref(self) -> str:
        return f"{self.repo}#{self.number}"

    @property
    def url(self) -> str:
        part = "pull" if self.kind is UpstreamKind.PULL_REQUEST else "issues"
        return f"https://github.com/{self.repo}/{part}/{self.number}"

    @property
    def label(self) -> str:
        """``known #N``, ``by design`` or "" (context; unsupported-path needs the frontends' results
        too, so the report's verdict gives that label)."""
        if self.triage is Triage.KNOWN:
            return f"known #{self.number}"
        if self.triage is Triage.BY_DESIGN:
            return "by design"
        return ""

    def matches(self, blocker: str, reported: str = "", text: str = "") -> bool:
        """The blocker (and the op MLIR named, when ``reported_ops``) or a message; an entry
        with both ops and messages needs both (``aten.view`` alone is too many bugs). A
        ``general`` entry matches no failure by itself (:func:`path_statements` gives it)."""
        if self.general:
            return False
        said = bool(text) and any(m in text for m in self.messages)
        if blocker and blocker in self.blocker_ops:
            named = not self.reported_ops or reported in self.reported_ops
            return named and (said or not self.messages)
        return said and not self.blocker_ops

    def describe(self) -> str:
        title = f"\"{self.title}\"" if self.title else "title not verified"
        state = f"{self.state} when last checked" if self.state != "unknown" else "state not verified"
        note = f"; {self.note}" if self.note else ""
        return f"{self.ref} ({self.kind.value}, {state}: {title}{note}) {self.url}"


@dataclass(frozen=True)
class SearchRecord:
    """A search of an upstream tracker done by hand for one failure, kept so that a bundle says
    what was searched and when, match or not (``[[search]]`` in the catalog)."""

    repo: str
    searched: str                       # the date, YYYY-MM-DD
    queries: tuple[str, ...]
    where: str = ""                     # what was searched ("" : the repository's issues and PRs)
    blocker_ops: tuple[str, ...] = ()   # the failure it was about (matched like a report)
    messages: tuple[str, ...] = ()
    matches: tuple[int, ...] = ()       # the same bug, as [[report]] numbers of ``repo``
    note: str = ""

    def about(self, blocker: str, text: str) -> bool:
        """Matched as a report is (:meth:`UpstreamReport.matches`): op, message, or both."""
        said = bool(text) and any(m in text for m in self.messages)
        if blocker and blocker in self.blocker_ops:
            return said or not self.messages
        return said and not self.blocker_ops

    def describe(self) -> str:
        queries = "; ".join(f"`{q}`" for q in self.queries)
        found = (", ".join(f"#{n}" for n in self.matches) + " (above)") if self.matches else "no match"
        note = f" {self.note}" if self.note else ""
        where = self.where or f"{self.repo}'s issues and pull requests"
        return f"Searched {where} on {self.searched}: {found} (queries: {queries}).{note}"


def _search(entry: dict) -> SearchRecord:
    try:
        return SearchRecord(
            repo=str(entry["repo"]), searched=str(entry["searched"]),
            queries=tuple(str(q) for q in entry["queries"]), where=str(entry.get("where", "")),
            blocker_ops=tuple(entry.get("blocker_ops", ())), messages=tuple(entry.get("messages", ())),
            matches=tuple(int(n) for n in entry.get("matches", ())), note=str(entry.get("note", "")))
    except (KeyError, ValueError, TypeError) as e:
        raise InputFileError(f"harness/knowledge/{CATALOG_FILE}: a [[search]] entry is malformed "
                             f"({type(e).__name__}: {e}); each needs repo, searched and queries.") from None


def _report(entry: dict) -> UpstreamReport:
    try:
        return UpstreamReport(
            repo=str(entry["repo"]), number=int(entry["number"]),
            kind=UpstreamKind.parse(entry["kind"]), state=str(entry["state"]),
            title=str(entry.get("title", "")), triage=Triage.parse(entry.get("triage", "known")),
            blocker_ops=tuple(entry.get("blocker_ops", ())),
            reported_ops=tuple(entry.get("reported_ops", ())),
            messages=tuple(entry.get("messages", ())), note=str(entry.get("note", "")),
            checked=str(entry.get("checked", "")), related=tuple(int(n) for n in entry.get("related", ())),
            general=bool(entry.get("general", False)))
    except (KeyError, ValueError, TypeError) as e:
        raise InputFileError(f"harness/knowledge/{CATALOG_FILE}: entry {entry.get('number', '?')} is "
                           f"malformed ({type(e).__name__}: {e}); every [[report]] needs repo, "
                           "number, kind and state.") from None


def load(text: str | None = None) -> tuple[UpstreamReport, ...]:
    """The catalog (``upstream.toml`` of this package, or ``text``)."""
    if text is None:
        text = resources.files(__package__).joinpath(CATALOG_FILE).read_text()
    return tuple(_report(e) for e in tomllib.loads(text).get("report", ()))


def load_searches(text: str | None = None) -> tuple[SearchRecord, ...]:
    """The catalog's ``[[search]]`` records (of this package's ``upstream.toml``, or ``text``)."""
    if text is None:
        text = resources.files(__package__).joinpath(CATALOG_FILE).read_text()
    return tuple(_search(e) for e in tomllib.loads(text).get("search", ()))


KNOWN_UPSTREAM: tuple[UpstreamReport, ...] = load()
SEARCHES: tuple[SearchRecord, ...] = load_searches()


def searched(blocker: str, text: str = "") -> list[SearchRecord]:
    """The hand searches kept for a blocker (or failing op) or a failure's text."""
    return [s for s in SEARCHES if s.about(blocker, text)]


def matching(blocker: str, reported: str = "", text: str = "") -> list[UpstreamReport]:
    """The catalog's reports for a blocker (and the op MLIR named) or a failure's text, in the
    catalog's order."""
    return [r for r in KNOWN_UPSTREAM if r.matches(blocker, reported, text)]


def path_statements(reports: tuple[UpstreamReport, ...] | None = None) -> tuple[UpstreamReport, ...]:
    """Upstream's word on the TorchScript path as a whole: the ``general`` unsupported-path
    entries, then the reports they rest on (``related``: the deprecation statements)."""
    reports = KNOWN_UPSTREAM if reports is None else reports
    general = [r for r in reports if r.general and r.triage is Triage.UNSUPPORTED_PATH]
    behind = [r for g in general for n in g.related
              for r in reports if r.repo == g.repo and r.number == n]
    return tuple(dict.fromkeys([*general, *behind]))


def by_number(repo: str, number: int) -> UpstreamReport | None:
    return next((r for r in KNOWN_UPSTREAM if r.repo == repo and r.number == number), None)


def triage_label(reports: list[UpstreamReport] | tuple[UpstreamReport, ...]) -> str:
    """``by design`` when any match is a design limit, else ``known #N`` of the first known
    report, else "" (new)."""
    if any(r.triage is Triage.BY_DESIGN for r in reports):
        return "by design"
    return next((r.label for r in reports if r.triage is Triage.KNOWN), "")
