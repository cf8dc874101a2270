"""The issue.md sections a torch-mlir maintainer triages by: Root cause, Reproduces
through, Blocks, Upstream; and the triage label (``known #N``, ``by design``) from the catalog
of known upstream reports (``harness.knowledge.upstream``).

Each section says what the tools found, or says plainly that it was not determined and what was
tried: "Not determined", "TorchScript only", "no known duplicate".
"""

from __future__ import annotations

import datetime
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from harness.compiler.outcomes import Outcome
from harness.knowledge import upstream
from harness.knowledge.upstream_src import SourceLookup, SourceTriage, triage_source

from .provenance import (  # noqa: F401 (re-exported: callers import them from here)
    FxTry, PathOutcome, PathResult, PortEvidence, Provenance, Through, same_failure, with_evidence,
    with_fx_try,
)

#: Titles start with the project the bug is in: torch-mlir's, or upstream MLIR's (llvm-project).
TITLE_PREFIX = "[torch-mlir] "
MLIR_TITLE_PREFIX = "[mlir] "
LLVM_PROJECT = "llvm/llvm-project"

GITHUB_SEARCH = "https://api.github.com/search/issues"
SEARCH_TIMEOUT_S = 10.0
_TORCH_MLIR_PREFIXES = ("torch-", "refback-", "tm-tensor-", "convert-torch-")
# MLIR passes that run the ops' own folds, canonicalization patterns or interfaces.
_GENERIC_DRIVERS = ("canonicalize", "cse", "inline", "sccp")


#: The most queries one --search-upstream makes (GitHub allows 10 a minute without a token).
SEARCH_MAX_QUERIES = 3


@dataclass(frozen=True)
class UpstreamSearch:
    """``--search-upstream``: GitHub's issue search, one query per term, or why it was skipped."""

    queries: tuple[str, ...]
    ran: bool
    date: str = ""
    hits: tuple[tuple[int, str, str, str], ...] = ()  # number, title, state, url
    skipped_because: str = ""

    def describe(self) -> list[str]:
        asked = "; ".join(f"`{q}`" for q in self.queries)
        if not self.ran:
            return [f"GitHub's issue search could not run ({self.skipped_because}): search by "
                    f"hand before filing ({asked})."]
        if not self.hits:
            return [f"Searched: no match (GitHub's issue search on {self.date}: {asked})."]
        return [f"GitHub's issue search on {self.date} ({asked}) found:"] + [
            f"- #{n} ({state}): \"{title}\" {url}" for n, title, state, url in self.hits]


def search_terms(*terms: str) -> list[str]:
    """The distinct non-empty terms, in order, at most :data:`SEARCH_MAX_QUERIES`."""
    return [t for t in dict.fromkeys(t.strip() for t in terms) if t][:SEARCH_MAX_QUERIES]


def search_upstream(terms: list[str], repo: str = "llvm/torch-mlir", *,
                    timeout_s: float = SEARCH_TIMEOUT_S) -> UpstreamSearch:
    """GitHub's issue search (issues and pull requests of ``repo``), one query per term, the
    hits merged; offline (or refused) it says so."""
    queries = tuple(f'repo:{repo} "{t}"' for t in search_terms(*terms))
    hits: dict[int, tuple[int, str, str, str]] = {}
    for query in queries:
        url = f"{GITHUB_SEARCH}?{urllib.parse.urlencode({'q': query, 'per_page': 5})}"
        request = urllib.request.Request(url, headers={"Accept": "application/vnd.github+json",
                                                       "User-Agent": "torch-mlir-harness"})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                data = json.loads(response.read().decode())
            items = [(int(i["number"]), str(i["title"]), str(i["state"]), str(i["html_url"]))
                     for i in data.get("items", [])[:5]]
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError) as e:
            reason = getattr(e, "reason", e)
            return UpstreamSearch(queries, False, skipped_because=f"offline or refused: {reason}")
        for item in items:
            hits.setdefault(item[0], item)
    return UpstreamSearch(queries, True, datetime.date.today().isoformat(), tuple(hits.values()))


def search_hint(terms: list[str], repo: str = "llvm/torch-mlir") -> str:
    """What issue.md says when nobody searched: the searches to make, as links."""
    links = ", ".join(
        f"[`{t}`](https://github.com/{repo}/issues?{urllib.parse.urlencode({'q': f'is:issue OR is:pr {t}'})})"
        for t in search_terms(*terms))
    return (f"Not searched yet: search {repo}'s issues and pull requests before filing "
            f"({links or 'for the op and the pass'}), or rerun with `--search-upstream`.")


EXPECTED_UPSTREAM = "expected upstream"
NOT_ON_SUPPORTED_PATH = "not on the supported path"
BY_DESIGN = "by design"
# How a bundle goes upstream (record.json's "filing"): a new issue, a comment on the threads its
# triage names, or not at all (listed in reports/upstream/README.md only).
FILE_NEW = "new issue"
FILE_COMMENT = "comment on the known thread"
FILE_NONE = "not filed"


@dataclass(frozen=True)
class UpstreamVerdict:
    """The catalog's matches for a failure and the label they give it."""

    matches: tuple[upstream.UpstreamReport, ...] = ()
    search: UpstreamSearch | None = None
    target_repo: str = "llvm/torch-mlir"
    related: tuple[upstream.UpstreamReport, ...] = field(default=())
    source: SourceTriage | None = None    # --torch-mlir-src: upstream's expectations, history
    searched: tuple[upstream.SearchRecord, ...] = ()  # the catalog's hand searches for it
    terms: tuple[str, ...] = ()           # what to search for when nobody has
    only_torchscript: bool | None = None  # only the TorchScript path hits it (None: not known)
    crash_or_miscompile: bool = False     # a crash on valid IR, a run-time failure or wrong values
    broke_valid_ir: bool = False          # a pass turned verifier-valid input into IR the verifier rejects

    @property
    def expected(self) -> bool:
        """TorchScript only, and upstream's TorchScript config already lists every test it
        blocks as failing."""
        return (self.only_torchscript is True and self.source is not None
                and self.source.expected_by_torchscript_config())

    @property
    def construct_unsupported(self) -> bool:
        """A catalog entry gives upstream's word that it will not act on this construct of the
        TorchScript path, and the frontends' results agree: only that path hits it."""
        return self.only_torchscript is True and any(
            m.triage is upstream.Triage.UNSUPPORTED_PATH for m in self.matches)

    @property
    def path_unsupported(self) -> bool:
        """The general rule: only the TorchScript path hits it (FX and ONNX pass or fail
        elsewhere), upstream's word on that path (#3693, the deprecation statements) is in the
        catalog, the failure is torch-mlir's, and it is no crash, no miscompile and no pass that
        broke valid IR (those are pass bugs whatever frontend made the input: filed, the text
        saying which frontends produce that input today). What stays unfiled by this rule is a
        missing lowering or an op left illegal that only TorchScript's IR reaches."""
        return (self.only_torchscript is True and not self.crash_or_miscompile and not self.broke_valid_ir
                and self.target_repo != LLVM_PROJECT and bool(upstream.path_statements()))

    @property
    def unsupported_path(self) -> bool:
        """Not on upstream's supported path: a construct upstream said it will not act on, or
        any TorchScript-only failure that is not a crash or a miscompile."""
        return self.construct_unsupported or self.path_unsupported

    @property
    def path_reports(self) -> tuple[upstream.UpstreamReport, ...]:
        """The catalog's reports the ``not on the supported path`` label rests on: upstream's
        word on the construct, else its word on the whole TorchScript path."""
        if self.construct_unsupported:
            return tuple(m for m in self.matches if m.triage is upstream.Triage.UNSUPPORTED_PATH)
        return upstream.path_statements() if self.path_unsupported else ()

    @property
    def label(self) -> str:
        """``known #N``, ``by design``, ``not on the supported path``, ``expected upstream`` or
        "" (new)."""
        return (upstream.triage_label(self.matches)
                or (NOT_ON_SUPPORTED_PATH if self.construct_unsupported else "")
                or (EXPECTED_UPSTREAM if self.expected else "")
                or (NOT_ON_SUPPORTED_PATH if self.path_unsupported else ""))

    @property
    def filing(self) -> str:
        """How the bundle goes upstream: :data:`FILE_NEW` (a new issue); :data:`FILE_COMMENT`
        (known #N: a reproducer for the thread the catalog names, not a new issue);
        :data:`FILE_NONE` (by design, expected upstream, not on the supported path: listed in
        the README with upstream's reason, not filed)."""
        if not self.label:
            return FILE_NEW
        return (FILE_NONE if self.label in (EXPECTED_UPSTREAM, NOT_ON_SUPPORTED_PATH, BY_DESIGN)
                else FILE_COMMENT)

    @property
    def threads(self) -> tuple[str, ...]:
        """The upstream threads the label rests on: the catalog's reports that gave it and the
        open ones it relates to them (the open PR that fixes a known issue); () for new."""
        if not self.label or self.label == EXPECTED_UPSTREAM:
            return ()
        if self.label == NOT_ON_SUPPORTED_PATH:
            return tuple(m.ref for m in self.path_reports)  # upstream's word, not the threads beside it
        kind = upstream.Triage.BY_DESIGN if self.label == BY_DESIGN else upstream.Triage.KNOWN
        base = [m for m in self.matches if m.triage is kind]
        if kind is upstream.Triage.KNOWN:
            base = base[:1]  # the one the label names
        known = {m.number for m in base}
        extra = [r for r in (*self.matches, *self.related) if r.state == "open" and r.number not in known
                 and any(r.number in m.related for m in base)]
        return tuple(dict.fromkeys(r.ref for r in (*base, *extra)))

    @property
    def verdict(self) -> str:
        return self.label or "new"

    @property
    def title_prefix(self) -> str:
        """``[torch-mlir] ``, or ``[mlir] `` for a bug in an upstream MLIR pass (filed in
        llvm-project), then the triage label: ``[torch-mlir] [known #590] ``."""
        repo = MLIR_TITLE_PREFIX if self.target_repo == LLVM_PROJECT else TITLE_PREFIX
        return repo + (f"[{self.label}] " if self.label else "")


def pass_broke_valid_ir(outcome: Outcome) -> bool:
    """A verifier error in a report's run is a pass's output: the report refuses input that
    does not parse and verify before any pass runs (build.py), so the IR was valid going in."""
    return outcome is Outcome.VERIFIER_ERROR


def without_title_prefix(title: str) -> tuple[str, str]:
    """(the repository prefix, the rest) of a bundle's title."""
    for prefix in (TITLE_PREFIX, MLIR_TITLE_PREFIX):
        if title.startswith(prefix):
            return prefix, title[len(prefix):]
    return "", title


def triage(blocker: str, reported: str, text: str, failing_pass: str = "",
           search: UpstreamSearch | None = None) -> UpstreamVerdict:
    """The catalog's matches for a blocker or failing op and the failure's text; the target
    repository from the failing pass (an upstream MLIR pass: llvm/llvm-project)."""
    found = upstream.matching(blocker, reported, text)
    related = tuple(r for m in found for n in m.related
                    if (r := upstream.by_number(m.repo, n)) is not None and r not in found)
    target = (LLVM_PROJECT
              if failing_pass and not failing_pass.startswith(_TORCH_MLIR_PREFIXES)
              and _is_mlir_core(failing_pass)
              and not _torch_code_at_fault(failing_pass, blocker, reported, text)
              else "llvm/torch-mlir")
    searched = tuple(r for r in upstream.searched(blocker, text) if r.repo == target) \
        or tuple(upstream.searched(blocker, text))
    terms = tuple(search_terms(blocker.removeprefix("torch."), failing_pass,
                               text.splitlines()[0] if text else ""))
    return UpstreamVerdict(tuple(found), search, target, related, searched=searched, terms=terms)


def _torch_code_at_fault(failing_pass: str, blocker: str, reported: str, text: str) -> bool:
    """MLIR's generic drivers (canonicalize, cse, inline) run the ops' own folds and patterns:
    a failure there is torch-mlir's when the crash is in torch-mlir's code or the op is a torch op
    (AtenAnyDimsOp::fold crashing under canonicalize is no MLIR bug)."""
    if not failing_pass.startswith(_GENERIC_DRIVERS):
        return False
    return "mlir::torch::" in text or any(op.startswith("torch.") for op in (blocker, reported))


def _is_mlir_core(pass_name: str) -> bool:
    """An upstream MLIR pass: one of MLIR's dialect prefixes (the RefBackend's lowering runs them)."""
    return pass_name.startswith(("linalg-", "one-shot-", "convert-", "finalize-", "expand-",
                                 "sparse", "buffer", "lower-affine", "arith-", "canonicalize",
                                 "cse", "inline", "reconcile-", "generate-runtime-"))


def root_cause(determined: str, tried: list[str]) -> str:
    """The section: what the tools found, and what was tried; "Not determined" with the list
    when they found nothing."""
    tried_text = "\n".join(f"- {t}" for t in tried)
    if determined:
        return determined + (("\n\nAlso tried:\n\n" + tried_text) if tried else "")
    return "Not determined. Tried:\n\n" + (tried_text or "- nothing (no tool could run)")


def _stated(p: Provenance) -> bool:
    """Whether any frontend's result is known (a --path, or a port record that hit it)."""
    return any(r.outcome is not PathOutcome.NOT_TRIED for r in p.paths)


def reproduces_through(p: Provenance, input_name: str) -> str:
    if _stated(p):
        return _each_path(p.paths)
    if p.through is Through.NOT_DETERMINED and p.how:
        return (f"Not determined ({p.how}): the FX path (torch.export + fx_importer) was not "
                "seen to reach this failure or to pass it.")
    if p.through is Through.NOT_DETERMINED:
        return (f"Not determined: the report started from a bare IR file (`{input_name}`), so "
                "the PyTorch source is unknown and the FX path (torch.export + fx_importer) "
                "could not be tried.")
    how = f" ({p.how})" if p.how else ""
    if p.through is Through.FX_FAILS_DIFFERENTLY:
        return (f"TorchScript: yes. FX: not this failure{how}: the FX path (torch.export + "
                f"fx_importer) fails differently first, with `{p.fx_failure}`, so whether it "
                "would also hit this one is not known.")
    fx = f" The FX run failed alike: `{p.fx_failure}`." if p.fx_failure else ""
    return {
        Through.TORCHSCRIPT_ONLY: f"TorchScript only{how}: the FX path (torch.export + "
                                  "fx_importer) does not hit it. Upstream no longer runs the "
                                  "TorchScript e2e config (llvm/torch-mlir#3693).",
        Through.FX_ONLY: f"FX only{how}: the FX path (torch.export + fx_importer) hits it; the "
                         "TorchScript path does not.",
        Through.BOTH: f"Both{how}: the TorchScript path and the FX path (torch.export + "
                      "fx_importer) hit it.",
    }[p.through] + fx


def _each_path(paths: tuple[PathResult, ...]) -> str:
    """Every frontend's result, in the order given (upstream's supported paths first), and
    what they add up to."""
    lines = [f"- {r.label}: **{r.outcome.value}**" + (f" ({r.detail})" if r.detail else "")
             for r in paths]
    hit = [r for r in paths if r.outcome is PathOutcome.HITS]
    supported = [r.short for r in hit if r.upstream_ci]
    if supported:
        word = "paths" if len(supported) > 1 else "path"
        summary = f"Upstream's supported {word} hit it: {', '.join(supported)}."
    elif hit:
        did = {PathOutcome.PASSES: "passes it", PathOutcome.NOT_TRIED: "was not tried",
               PathOutcome.FAILS_OTHERWISE: "stops earlier at another failure",
               PathOutcome.HITS: "hits it"}
        others = [f"{r.short} {did[r.outcome]}" for r in paths if r.upstream_ci]
        summary = f"{' and '.join(r.short for r in hit)} only: {', '.join(others)}."
        if off_ci_only(paths):
            notes = [r.note for r in hit if r.note]
            summary += "".join(f" {n[0].upper()}{n[1:]}." for n in notes)
    else:
        summary = "No path was seen to hit it."
    return summary + "\n\n" + "\n".join(lines)


def off_ci_only(paths: tuple[PathResult, ...]) -> bool | None:
    """Whether only paths upstream's CI does not run hit the failure: True when one hits and
    every CI path was seen not to reach it (it passes, or stops at another failure first);
    False when a CI path hits it; None when not known."""
    ci = [r for r in paths if r.upstream_ci]
    if any(r.outcome is PathOutcome.HITS for r in ci):
        return False
    hit = any(r.outcome is PathOutcome.HITS for r in paths if not r.upstream_ci)
    seen = bool(ci) and all(r.outcome in (PathOutcome.PASSES, PathOutcome.FAILS_OTHERWISE) for r in ci)
    return True if hit and seen else None


def torchscript_only(p: Provenance) -> bool | None:
    """Whether only the TorchScript path (the one upstream's CI does not run) hits the failure
    (None: not known)."""
    if _stated(p):
        return off_ci_only(p.paths)
    return {Through.TORCHSCRIPT_ONLY: True, Through.FX_ONLY: False, Through.BOTH: False}.get(p.through)


def blocks(p: Provenance) -> str:
    if not p.blocks:
        return "Not determined: no model, e2e test or lit test run was recorded as stopped by it."
    return "\n".join(f"- `{name}`" for name in p.blocks)


def upstream_section(t: UpstreamVerdict) -> str:
    lines = [f"Target repository: **{t.target_repo}**"
             + (" (the failing pass is upstream MLIR's)" if t.target_repo == LLVM_PROJECT else "")
             + ".", ""]
    if t.filing == FILE_COMMENT:
        lines += [f"Filing: **not a new issue**: a reproducer to add to {', '.join(t.threads)} "
                  "(below).", ""]
    elif t.filing == FILE_NONE and t.label == NOT_ON_SUPPORTED_PATH and t.construct_unsupported:
        lines += ["Filing: **not filed**: only the TorchScript path hits it (see Reproduces "
                  f"through), and upstream's word on this construct ({', '.join(t.threads)}, "
                  "below) is that it will not act on it there.", ""]
    elif t.filing == FILE_NONE and t.label == NOT_ON_SUPPORTED_PATH:
        lines += ["Filing: **not filed**: only the TorchScript path hits it (FX and ONNX pass or "
                  "fail elsewhere: see Reproduces through), it is not a crash or a miscompile, and "
                  f"upstream has switched that path off and does not maintain it ({', '.join(t.threads)}, "
                  "below).", ""]
    elif t.filing == FILE_NONE and t.label == BY_DESIGN:
        lines += [f"Filing: **not filed**: by design upstream ({', '.join(t.threads)}, below).", ""]
    if t.label == NOT_ON_SUPPORTED_PATH:
        lines.append(f"Triage: **{t.label}**. What upstream said:")
        lines.append("")
        shown = tuple(dict.fromkeys((*t.path_reports, *t.matches, *t.related)))
        lines += [f"- {m.describe()}" for m in shown]
    elif t.matches and t.label:
        lines.append(f"Triage: **{t.label}**{_fixed_by(t)}. Upstream reports of it:")
        lines.append("")
        lines += [f"- {m.describe()}" for m in (*t.matches, *t.related)]
    elif t.matches:
        lines.append("Triage: **new**: no known duplicate; related upstream reports (none reports "
                     "this failure):")
        lines.append("")
        lines += [f"- {m.describe()}" for m in (*t.matches, *t.related)]
    else:
        lines.append("Triage: **new**: no known duplicate (searches below).")
    lines.append("")
    if t.search is not None:
        lines += t.search.describe()
    elif t.searched:
        lines += [s.describe() for s in t.searched]
    else:
        lines.append(search_hint(list(t.terms), t.target_repo))
    if t.source is not None:
        lines += ["", *t.source.describe(torchscript_only=t.only_torchscript)]
    return "\n".join(lines)


def given_title(verdict: UpstreamVerdict, title: str) -> str:
    """``--title``: the bug as the project states it, after the repository and triage labels;
    "" when none was given (the title then comes from the failure's signature)."""
    return verdict.title_prefix + " ".join(title.split()) if title.strip() else ""


def _fixed_by(t: UpstreamVerdict) -> str:
    """`` (open PR #M fixes it)`` when the known report is an issue and an open pull request
    the catalog relates to it would fix it; "" otherwise."""
    known = next((m for m in t.matches if m.triage is upstream.Triage.KNOWN), None)
    if known is None or known.kind is not upstream.UpstreamKind.ISSUE:
        return ""
    prs = [r for r in (*t.matches, *t.related) if r.kind is upstream.UpstreamKind.PULL_REQUEST
           and r.state == "open" and r.number in known.related]
    return f" (open PR {', '.join(f'#{r.number}' for r in prs)} fixes it)" if prs else ""


def with_source(verdict: UpstreamVerdict, lookup: SourceLookup, provenance: Provenance
                ) -> UpstreamVerdict:
    """``verdict`` with what a torch-mlir checkout (--torch-mlir-src) says of the tests the
    failure blocks and of the root cause's source line; unchanged without a checkout. A
    TorchScript-only failure of tests upstream's TorchScript config already expects to fail is
    labelled ``expected upstream``: a known gap, not an issue to file."""
    from importlib.metadata import version

    verdict = replace(verdict, only_torchscript=torchscript_only(provenance))
    found = triage_source(lookup, provenance.blocks, version("torch"))
    if found is None:
        return verdict
    passing = tuple(r.frontend for r in provenance.paths if r.outcome is PathOutcome.PASSES)
    return replace(verdict, source=replace(found, passing=passing),
                   only_torchscript=torchscript_only(provenance))


def triage_ops(ops: list[str] | tuple[str, ...], text: str, failing_pass: str = "",
               search: UpstreamSearch | None = None) -> UpstreamVerdict:
    """``triage`` over several ops (a miscompile's or run-time failure's chain): the matches of
    each op (``aten.x`` and ``torch.aten.x`` alike) and of the text, once each."""
    found: list[upstream.UpstreamReport] = []
    searched: list[upstream.SearchRecord] = []
    for op in ops or ("",):
        names = {op, op.removeprefix("torch."), "torch." + op.removeprefix("torch.")} if op else {""}
        for name in sorted(names):
            each = triage(name, "", text, failing_pass)
            found += [m for m in each.matches if m not in found]
            searched += [r for r in each.searched if r not in searched]
    base = triage("", "", "", failing_pass)
    related = tuple(r for m in found for n in m.related
                    if (r := upstream.by_number(m.repo, n)) is not None and r not in found)
    terms = tuple(search_terms(*(op.removeprefix("torch.") for op in ops[:2]), failing_pass,
                               text.splitlines()[0] if text else ""))
    return UpstreamVerdict(tuple(found), search, base.target_repo, related,
                           searched=tuple(searched), terms=terms)


def section_values(verdict: UpstreamVerdict, root: str, provenance: Provenance, input_name: str,
                   code: Callable[[str], str]) -> dict[str, str]:
    """The four sections' template values; ``code`` quotes a user-given name for markdown."""
    if provenance.finding:
        # The cause as found by hand stands alone: the tools' "Not determined. Tried:" list
        # would contradict it; what they did find follows it.
        root = provenance.finding + ("" if root.startswith("Not determined")
                                     else "\n\nThe tools' own analysis:\n\n" + root)
    elif root.startswith("Not determined") and verdict.matches:
        root += ("\n\nUpstream reports that point at it (a lead, not a tool's finding):\n\n"
                 + "\n".join(f"- {m.ref}: {m.note}" for m in verdict.matches if m.note))
    return {
        "ROOT_CAUSE": root,
        "REPRODUCES_THROUGH": reproduces_through(provenance, input_name),
        "BLOCKS": ("\n".join(f"- {code(name)}" for name in provenance.blocks)
                   if provenance.blocks else blocks(provenance)),
        "UPSTREAM": upstream_section(verdict),
    }


def verdict_for(ops: list[str], text: str, failing_pass: str, search: bool,
                say: Callable[[str], None] = lambda _line: None) -> UpstreamVerdict:
    """The catalog's matches for a miscompile's or run-time failure's ops and text, and GitHub's
    when ``search`` (--search-upstream)."""
    verdict = triage_ops(ops, text, failing_pass)
    return searched_upstream(verdict, say) if search else verdict


def searched_upstream(verdict: UpstreamVerdict, say: Callable[[str], None]) -> UpstreamVerdict:
    """``verdict`` with GitHub's issue search for its terms (--search-upstream)."""
    say("searching GitHub's issues (--search-upstream)")
    return replace(verdict, search=search_upstream(list(verdict.terms), verdict.target_repo))
