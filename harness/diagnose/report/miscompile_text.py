"""The texts of a miscompile bundle: its findings (record.json), issue.md
(``templates/miscompile.md.in``) and the title (repro.sh and repro.py are ``standalone.py``'s,
as for the run-time failure bundle).

As for a failure's bundle, everything from the input or the machine is redacted first, then
quoted for markdown (``markdown.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from harness import versions as versions_module

from ..numerics import NumericsBisectResult
from ..numerics.blame import ChoiceKind, Fault
from ..numerics.result import render_frame
from ..reduce.miscompile import NumericsReduceResult
from . import markdown as md
from .issue import bounded
from .redact import Redactor, shell_words
from .result import REPRODUCED_STATUS, BundleFindings, BundleKind
from .sections import UpstreamVerdict, root_cause, section_values
from .template import render
from .upstream_rewrite import UPSTREAM_FILE, UpstreamRewrite
from .versions import versions_markdown

TITLE_MAX_CHARS = 160
INLINE_MAX_CHARS = 12_000
VALUES_MAX_ELEMENTS = 16  # arrays up to this size are quoted in issue.md


RECORD_SCHEMA = "harness.miscompile-report/1"


@dataclass(frozen=True, kw_only=True)
class MiscompileFindings(BundleFindings):
    """A miscompile's findings: what its issue.md and record.json are written from."""

    kind: ClassVar[BundleKind] = BundleKind.MISCOMPILE
    schema: ClassVar[str] = RECORD_SCHEMA

    pipeline: str                     # as given
    reduced: NumericsReduceResult
    bisected: NumericsBisectResult    # of reduced.mlir: the chain, its lines, the blame
    reduced_text: str
    linalg_text: str
    inputs: list[np.ndarray]
    expected: list[np.ndarray]
    actual: list[np.ndarray]
    upstream: UpstreamRewrite | None = None  # the culprit is upstream MLIR's: its rewrite alone

    @property
    def fault(self) -> str:
        return self.bisected.blame.fault.value if self.bisected.blame else "undetermined"

    def record(self) -> dict:
        return {**self.header(), "pipeline": self.pipeline, "fault": self.fault,
                "culprit": self.reduced.culprit, "reduce": self.reduced.to_json(),
                "bisect": self.bisected.to_json(),
                "upstream_rewrite": self.upstream.to_json() if self.upstream else None}


def culprit_pass(bisected: NumericsBisectResult) -> str:
    """The RefBackend pass whose removal makes the values right ("" when none)."""
    blame = bisected.blame
    if blame is not None and blame.fixes and blame.fixes[0].kind is ChoiceKind.DROP_REFBACKEND_PASS:
        return _bare(blame.fixes[0].what)
    return ""


def root_cause_text(f: MiscompileFindings) -> str:
    blame = f.bisected.blame
    tried = []
    if not f.bisected.found:
        tried.append(f"the numerics bisection of reduced.mlir: {f.bisected.detail}")
    culprit = f.bisected.one_op.culprit if f.bisected.one_op is not None else None
    lowered = culprit.lowered.finding(culprit.name) if culprit is not None and culprit.lowered else ""
    if lowered:  # the one op's own linalg shows it: an op that folds away or into a copy
        return root_cause(lowered, [c.describe() for c in blame.choices] if blame is not None else [])
    if blame is None:
        tried.append("the pass-choice replays did not run (no localized chain)")
        return root_cause("", tried)
    if blame.fault is Fault.UNDETERMINED:
        tried += [f"replayed: {c.describe()}" for c in blame.choices] or ["no pass choice was replayed"]
        return root_cause("", tried)
    return root_cause(f"At fault: {blame.fault.value}: {blame.reason}.",
                      [c.describe() for c in blame.choices])


def title(reduced: NumericsReduceResult, bisected: NumericsBisectResult, verdict: UpstreamVerdict) -> str:
    chain = " -> ".join(op.removeprefix("aten.") for op in reduced.computing_ops) or "a function"
    blame = bisected.blame
    culprit = ""
    if blame is not None and blame.fixes:
        fix = blame.fixes[0]
        culprit = f"'s {_bare(fix.what)}" if fix.kind is ChoiceKind.DROP_REFBACKEND_PASS else ""
    text = (f"Miscompile: {chain}: wrong values through {reduced.piece_pipeline} and the "
            f"RefBackend{culprit}")
    prefix = verdict.title_prefix
    return prefix + bounded(text, TITLE_MAX_CHARS - len(prefix))


def _bare(pass_text: str) -> str:
    """``linalg-fuse-elementwise-ops`` for ``func.func(linalg-fuse-elementwise-ops)``."""
    return re.sub(r"^(?:[\w.]+\()+([^()]*?)\)+(?= |$)", r"\1", pass_text)


def issue_markdown(f: MiscompileFindings, redactor: Redactor) -> str:
    r = redactor
    packages = versions_module.installed()
    values = {
        "TITLE": md.heading(r.text(f.title)),
        "WARNING": ("> **Warning: this bundle did NOT reproduce the wrong numbers when it was "
                    "written.** " + md.prose(r.text(f.check.describe()))) if not f.check.reproduced else "",
        "SUMMARY": _summary(f, r),
        "VERSIONS": r.text("\n".join(versions_markdown(f.exe, packages=packages)).rstrip("\n")),
        "WHERE": _where(f, r),
        "AT_FAULT": _at_fault(f, r),
        "REDUCE_SUMMARY": md.prose(r.text(f.reduced.summary())),
        "IR": _inline(r.text(f.reduced_text), "reduced.mlir"),
        "PIPELINE": md.one_line(f.reduced.piece_pipeline),
        "LINALG": _inline(r.text(f.linalg_text), "reduced.linalg.mlir"),
        "VALUES": _values(f),
        "REPRODUCED_STATUS": str(REPRODUCED_STATUS),
        "TORCH": packages.get("torch", "?"),
        "TORCH_MLIR": packages.get("torch-mlir", "?"),
        "SELF_CHECK": md.prose(r.text(f.check.describe())) + ".",
        "REPRO_OUTPUT": md.fence(r.text(f.check.repro_output)) if f.check.repro_output else "",
        "UPSTREAM_ONLY": _upstream_only(f),
        "REDACTION": ("Paths are redacted: `<site-packages>` is Python's site-packages folder, "
                      "`<venv>` the virtual environment, `<python>` the Python installation, "
                      "`<repo>` the harness checkout, `~` the home folder, `<path>/NAME` any other "
                      "folder, `<user>` the user name.") if f.redacted else "",
        "NOTES": "## Notes\n\n" + "\n".join(f"- {md.prose(r.text(n))}" for n in f.notes) if f.notes else "",
        **{k: r.text(v) for k, v in section_values(f.verdict, root_cause_text(f), f.provenance,
                                                   f.src.name, md.code).items()},
    }
    return render("miscompile.md.in", values)


def _at_fault(f: MiscompileFindings, r: Redactor) -> str:
    """The At fault section: which side the pass choices blame, the replays behind it. Left
    out when they blame no side and the root cause was found by hand (--root-cause): "at
    fault: undetermined" would contradict the cause the issue states."""
    blame = f.bisected.blame
    if f.provenance.finding and (blame is None or blame.fault is Fault.UNDETERMINED):
        return ""
    reason = (md.prose(r.text(blame.reason[:1].upper() + blame.reason[1:])) + "."
              if blame else "The chain was not replayed.")
    return "\n\n".join(p for p in (f"## At fault: {f.fault}", reason, _choices(f)) if p)


def _upstream_only(f: MiscompileFindings) -> str:
    """How to reproduce's part for an upstream MLIR culprit: which part of the check is
    torch-mlir's, and the culprit's rewrite through upstream passes alone, as it was run."""
    u = f.upstream
    if u is None:
        return ""
    torch_part = ("The wrong numbers need an execution, and that part is torch-mlir's: `repro.py` "
                  "lowers with the RefBackend's passes (some are torch-mlir's `refback-*`) and runs "
                  "the torch-mlir wheel's `ExecutionEngine`; that run is the part of this check that "
                  "needs torch-mlir.")
    if not u.ok:
        return (torch_part + " The culprit's passes alone, " + md.code(u.pipeline) + ", failed "
                "through the wheel's MLIR Python bindings on `reduced.linalg.mlir`: "
                + md.code(u.detail) + ".")
    return "\n".join([
        torch_part + " The rewrite at fault is upstream MLIR's and shows without torch-mlir: the "
        "RefBackend's passes up to and including it are all upstream MLIR passes, and on "
        f"`reduced.linalg.mlir` (linalg, tensor and arith only) they give `{UPSTREAM_FILE}`:", "",
        "```sh", shell_words(["mlir-opt", f"--pass-pipeline={u.pipeline}", "reduced.linalg.mlir"]),
        "```", "",
        "This bundle ran that pass-pipeline string through the torch-mlir wheel's MLIR Python "
        "bindings (`torch_mlir.passmanager.PassManager.parse` of the same string, on the same "
        f"file; no `mlir-opt` ships with the wheel) and kept the output as `{UPSTREAM_FILE}`; an "
        "LLVM build's `mlir-opt` takes the string as it is. Left out of the RefBackend's lowering, "
        "the last pass of it makes the numbers right (\"At fault\" above)."])


def _summary(f: MiscompileFindings, r: Redactor) -> str:
    red = f.reduced
    chain = " -> ".join(md.code(op) for op in red.computing_ops)
    return (f"Lowered with {md.code(r.text(red.pipeline))} and run on the RefBackend, the model "
            f"computes wrong values (no error, no crash): {chain} gives results off by up to "
            f"{red.max_abs_diff:.3g} from the same ops run in eager PyTorch. The model's function "
            f"({red.ops_before} ops at the torch backend contract) was localized in "
            f"{red.localization_runs} RefBackend runs and reduced to {red.ops_after} ops "
            f"({red.computing_after} computing), which still give wrong values on `inputs.npz`."
            + (f" The op that computes wrong: {md.prose(r.text(red.culprit))}." if red.culprit else ""))


def _where(f: MiscompileFindings, r: Redactor) -> str:
    b = f.bisected
    if not b.found:
        return md.prose(r.text(f"The bisection of reduced.mlir did not localize it: {b.detail}"))
    lines = [f"Fed right values, the chain {md.code(b.chain_text())} computes wrong ones; "
             "started one op later or ended one op earlier it computes right ones. Where each op "
             "came from (the Python line of its location, innermost first):", ""]
    for op in b.chain:
        mark = " **(first wrong value)**" if op.wrong else ""
        where = md.code(r.text(op.where())) if op.frames else "no location"
        lines.append(f"- {md.code(op.name)}{mark} at {where}")
        for caller in op.frames[1:]:
            lines.append(f"  - called from {md.code(r.text(render_frame(caller)))}")
    return "\n".join(lines)


def _choices(f: MiscompileFindings) -> str:
    blame = f.bisected.blame
    if blame is None or not blame.choices:
        return ""
    lines = [f"Replayed on the chain, one pass choice at a time ({blame.runs} RefBackend runs):", ""]
    lines += [f"- {md.prose(c.describe())}" for c in blame.choices]
    return "\n".join(lines)


def _inline(text: str, name: str) -> str:
    if len(text) > INLINE_MAX_CHARS:
        return f"(too large to inline: {len(text)} characters; attached as `{name}`)"
    return md.fence(text, "mlir")


def _values(f: MiscompileFindings) -> str:
    lines = ["`inputs.npz` holds the arguments, `expected.npz` the reference's results (eager "
             "PyTorch, op by op), `actual.npz` the RefBackend's:", ""]
    for i, a in enumerate(f.inputs):
        lines.append(f"- `arg{i}`: {a.dtype}{list(a.shape)}")
    # the reducer keeps a miscompile only while both sides have the same results; were they
    # ever to differ in number, the pairs both have are shown
    for i, (e, a) in enumerate(zip(f.expected, f.actual, strict=False)):
        lines.append(f"- `result{i}`: {e.dtype}{list(e.shape)}")
        if e.size <= VALUES_MAX_ELEMENTS:
            lines.append(f"  - expected: `{np.array2string(e.ravel(), precision=6)}`")
            lines.append(f"  - RefBackend: `{np.array2string(a.ravel(), precision=6)}`")
    return "\n".join(lines)
