"""A miscompile bundle: ``harness report FILE --pipeline P --numerics``.

Where a failure's bundle holds IR that torch-mlir-opt fails on, a miscompile's holds IR that
lowers and runs but computes wrong values, and the values that show it:

- ``reduced.mlir``: the smallest program (at the torch backend contract) that still gives wrong
  values (``harness.diagnose.reduce.miscompile``: the localization first, then the one op that
  computes wrong, whose one-op reproducer it starts from);
- ``inputs.npz`` / ``expected.npz``: its arguments, and the reference evaluator's results;
- ``reduced.linalg.mlir``: what the pipeline to linalg makes of it, which the RefBackend lowers;
- ``repro.py`` (``standalone``): torch, numpy and the torch-mlir wheel only; embeds the IR, the
  arguments and eager's values, lowers, runs and compares, exiting 1 exactly when the numbers
  are wrong or the run dies; ``repro.sh`` runs it;
- ``issue.md``: the chain of ops and their Python lines, the pass choices replayed on it and
  who is at fault (the linalg pipeline or the RefBackend's lowering), the IR, the values;
- ``record.json``: the reduction, the bisection of ``reduced.mlir`` and the self-check.

The bundle is assembled, redacted and published as a failure's is (``bundle``, ``redact``),
and replays its own ``repro.sh`` before it is published.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.compiler import jsonfile
from harness import defaults
from harness.compiler import builds as builds_module
from harness.compiler.binary import OptBinary
from harness.compiler.mlir import new_context
from harness.compiler.runner import RunOptions
from harness.errors import NoMiscompileError, OutputError, ReportError
from harness.execute.check import flatten_outputs
from harness.execute.inputs import RandomInputs, load_npz, save_npz
from harness.execute.levels import split_pipeline
from harness.execute.lowering import run_stage
from harness.execute.closeness import Tolerances
from harness.execute.reference import ReferenceOptions, entry_signature, evaluate
from harness.knowledge.upstream_src import SourceLookup

from ..numerics import NumericsBisectOptions, bisect_numerics
from ..reduce.miscompile import NumericsReduceOptions, reduce_numerics
from . import bundle
from .build import collect_versions
from .miscompile_text import MiscompileFindings, culprit_pass, issue_markdown, title
from .redact import Redactor
from .repro_check import run_repro
from .result import BundleKind, Refusal, SelfCheck
from .sections import (LLVM_PROJECT, PortEvidence, Provenance, given_title, verdict_for, with_evidence,
                       with_source)
from .standalone import WIDE_NPZ, write_standalone
from .upstream_rewrite import UPSTREAM_FILE, upstream_rewrite

if TYPE_CHECKING:
    from .runtime import RuntimeReportResult

MISCOMPILE_FILES = ("issue.md", "repro.sh", "repro.py", "reduced.mlir", "reduced.linalg.mlir", "inputs.npz",
                    "expected.npz", WIDE_NPZ, "actual.npz", "record.json")


@dataclass(frozen=True, kw_only=True)
class NumericsReportOptions:
    out_dir: str | os.PathLike
    opt: str | None = None
    inputs_path: str | None = None
    random: RandomInputs = RandomInputs()
    function: str | None = None
    tolerances: Tolerances = Tolerances()
    redact: bool = True
    reduce: bool = True               # False: the chain the localization cut out, not reduced
    budget_s: float = defaults.REDUCE_BUDGET_S  # wall clock for the reduction
    timeout_s: float = defaults.TIMEOUT_S
    progress: Callable[[str], None] | None = None
    provenance: Provenance = Provenance()  # the frontends tried and what it blocks
    search_upstream: bool = False          # ask GitHub's issue search (said when offline)
    lookup: SourceLookup = field(default_factory=SourceLookup)  # --torch-mlir-src, --root-cause-code
    title: str = ""                        # --title: the bug in one line, as the project found it
    port_evidence: tuple[PortEvidence, ...] = ()  # port and sweep records: frontends, blocks


@dataclass
class NumericsReportResult:
    folder: str
    archive: str
    title: str
    input_path: str
    pipeline: str
    fault: str
    chain: list[str]
    ops_before: int
    ops_after: int
    max_abs_diff: float
    self_check: SelfCheck
    redacted: bool = True
    notes: list[str] = field(default_factory=list)
    culprit: str = ""          # the one op that computes wrong (reduced.mlir starts from its reproducer)
    files: list[str] = field(default_factory=list)
    triage: str = "new"        # new | known #N | by design (the upstream catalog)
    target_repo: str = "llvm/torch-mlir"

    @property
    def reproduced(self) -> bool:
        return self.self_check.reproduced

    def render(self) -> list[str]:
        lines = [f"report: {self.folder}", f"archive: {self.archive}", f"title: {self.title}",
                 f"chain: {' -> '.join(self.chain)} (max abs diff {self.max_abs_diff:.3g})",
                 f"at fault: {self.fault}",
                 f"triage: {self.triage}", f"target repository: {self.target_repo}",
                 *([f"the op that computes wrong: {self.culprit}"] if self.culprit else []),
                 f"ops: {self.ops_before} -> {self.ops_after}",
                 f"paths {'redacted' if self.redacted else 'kept (--no-redact)'}",
                 f"self-check: {self.self_check.describe()}"]
        return lines + [f"note: {n}" for n in self.notes]

    def to_json(self) -> dict:
        d = jsonfile.plain(asdict(self))
        d.update(kind=BundleKind.MISCOMPILE.value, self_check=self.self_check.to_json(),
                 reproduced=self.reproduced)
        return d


def make_numerics_report(path: str | os.PathLike, pipeline: str, *,
                         options: NumericsReportOptions) -> NumericsReportResult | RuntimeReportResult:
    """Builds the miscompile bundle for ``path``, whose values ``pipeline`` (to linalg) and the
    RefBackend get wrong, or the run-time failure bundle (``runtime.py``) when its code dies at
    ``execution``. Raises ReportError when the values are right, or it does not lower."""
    src = Path(path)
    out_dir = Path(options.out_dir)
    bundle.check_out_dir(out_dir, src)
    split_pipeline(pipeline)  # a pipeline that cannot be split fails before any work
    exe = builds_module.resolve(options.opt)
    say = options.progress or (lambda _line: None)
    try:
        with bundle.staging_folder(out_dir, src) as staging, \
                tempfile.TemporaryDirectory(prefix="harness-miscompile-") as scratch:
            if _fails_at_run_time(src, pipeline, exe.path, Path(scratch), options):
                from .runtime import build_runtime_report

                return build_runtime_report(src, pipeline, exe, staging, Path(scratch), out_dir,
                                            options, say)
            return _build(src, pipeline, exe, staging, Path(scratch), out_dir, options, say)
    except NoMiscompileError as e:
        raise ReportError(str(src), Refusal.PASSES, f"nothing to report: {e}") from None
    except OSError as e:
        raise ReportError(str(src), Refusal.OUTPUT,
                          f"cannot write the report for {src} under {out_dir}: {e.strerror or e}. "
                          "Choose a writable --out folder with free space.") from None
    except OutputError as e:
        raise ReportError(str(src), Refusal.OUTPUT, f"cannot write the report for {src}: {e}") from None


def _build(src: Path, pipeline: str, exe: OptBinary, staging: Path, scratch: Path, out_dir: Path,
           options: NumericsReportOptions, say: Callable[[str], None]) -> NumericsReportResult:
    notes: list[str] = []
    say(f"reducing (budget {options.budget_s:g} s)")
    reduced = reduce_numerics(src, pipeline, options=NumericsReduceOptions(
        output_path=staging / "reduced.mlir", budget_s=options.budget_s,
        max_tries=defaults.REDUCE_MAX_TRIES if options.reduce else 1, inputs_path=options.inputs_path,
        random=options.random, function=options.function, opt=exe.path,
        tolerances=options.tolerances, timeout_s=options.timeout_s, out_dir=str(scratch),
        progress=say))
    os.replace(reduced.inputs_path, staging / "inputs.npz")
    os.replace(reduced.expected_path, staging / "expected.npz")
    os.replace(reduced.actual_path, staging / "actual.npz")
    redactor = Redactor.for_machine([staging], enabled=options.redact,
                                    other_dirs=[src.parent, out_dir, scratch])
    redactor.redact_file(staging / "reduced.mlir", ir=True)
    _write_wide(staging)

    say("bisecting reduced.mlir and replaying its chain with each pass choice")
    bisected = bisect_numerics(
        staging / "reduced.mlir", reduced.piece_pipeline, options=NumericsBisectOptions(
            inputs_path=str(staging / "inputs.npz"), opt=exe.path, tolerances=options.tolerances,
            timeout_s=options.timeout_s, out_dir=str(scratch)))
    if not bisected.found:
        notes.append(f"the bisection of reduced.mlir did not localize it: {bisected.detail}")
    linalg = staging / "reduced.linalg.mlir"
    record = run_stage(staging / "reduced.mlir", split_pipeline(reduced.piece_pipeline).to_linalg,
                       output_path=linalg, opt=exe.path, options=RunOptions(timeout_s=options.timeout_s))
    if not record.ok:
        notes.append(f"{reduced.piece_pipeline} failed on reduced.mlir: {record.signature}")
        linalg.write_text("")
    redactor.redact_file(linalg, ir=True)

    summary = (f"wrong values of {' -> '.join(reduced.computing_ops) or 'a function'} through "
               f"{reduced.piece_pipeline} and the RefBackend")
    write_standalone(staging, BundleKind.MISCOMPILE, reduced.piece_pipeline, summary, redactor,
                     options.timeout_s)
    say("self-check: running repro.sh")
    check = run_repro(staging, exe.path, options.timeout_s, BundleKind.MISCOMPILE)
    inputs, expected = _arrays(staging / "inputs.npz"), _arrays(staging / "expected.npz")
    actual = _arrays(staging / "actual.npz")
    provenance = with_evidence(options.provenance, options.port_evidence, list(reduced.computing_ops))
    verdict = with_source(verdict_for(list(reduced.computing_ops), "", culprit_pass(bisected),
                                      options.search_upstream, say), options.lookup, provenance)
    verdict = replace(verdict, crash_or_miscompile=True)  # filed whatever the path
    upstream = None
    if verdict.target_repo == LLVM_PROJECT and record.ok and culprit_pass(bisected):
        say("running the culprit's upstream MLIR passes alone on reduced.linalg.mlir")
        upstream = upstream_rewrite(linalg, culprit_pass(bisected), staging / UPSTREAM_FILE,
                                    options.timeout_s)
        if upstream is not None and upstream.ok:
            redactor.redact_file(staging / UPSTREAM_FILE, ir=True)
    findings = MiscompileFindings(
        src=src, title=given_title(verdict, options.title) or title(reduced, bisected, verdict),
        exe=exe, versions=collect_versions(exe),
        check=check, notes=tuple(notes), redacted=options.redact, provenance=provenance,
        verdict=verdict, pipeline=pipeline, reduced=reduced, bisected=bisected,
        reduced_text=(staging / "reduced.mlir").read_text(), linalg_text=linalg.read_text(),
        inputs=inputs, expected=expected, actual=actual, upstream=upstream)
    bundle.write_texts(staging, findings, issue_markdown(findings, redactor), redactor)
    slug = "miscompile-" + "-".join(op.split(".")[1] if "." in op else op
                                    for op in reduced.computing_ops)[:48].replace("_", "-")
    folder, archive = bundle.publish(staging, out_dir, slug, redacted=options.redact)
    return NumericsReportResult(
        folder=str(folder), archive=str(archive), title=findings.title, input_path=str(src),
        pipeline=pipeline, fault=findings.fault, chain=list(reduced.computing_ops),
        ops_before=reduced.ops_before, ops_after=reduced.ops_after,
        max_abs_diff=reduced.max_abs_diff, self_check=check, redacted=options.redact, notes=notes,
        culprit=redactor.text(reduced.culprit), files=sorted(p.name for p in folder.iterdir()),
        triage=verdict.verdict, target_repo=verdict.target_repo)


def _fails_at_run_time(src: Path, pipeline: str, opt: str, scratch: Path,
                       options: NumericsReportOptions) -> bool:
    """Whether the file's code fails when it runs (``execution``): then the bundle is a run-time
    failure's, not a miscompile's. One ``harness check`` of the whole file (about 2 s); when its
    outputs come out wrong or misshapen, once more with MLIR's runtime op verification, as the
    port does: a bad access that read garbage without it aborts with it (the view-flatten
    bundle's [2, 4] for [6, 4] is a failed memref.cast check)."""
    from harness.execute.check import CheckOptions, CheckOutcome, check_file

    check = CheckOptions(
        pipeline=pipeline, function=options.function, inputs_path=options.inputs_path,
        random=options.random, tolerances=options.tolerances, opt=opt, timeout_s=options.timeout_s,
        out_dir=str(scratch))
    done = check_file(src, check)
    if done.outcome is CheckOutcome.VERIFIED or (done.outcome is CheckOutcome.FAILS
                                                 and done.failed_stage != "comparison"):
        return done.outcome is CheckOutcome.FAILS and done.failed_stage == "execution"
    done = check_file(src, replace(check, runtime_checks=True))
    return done.outcome is CheckOutcome.FAILS and done.failed_stage == "execution"


def _arrays(path: Path) -> list[np.ndarray]:
    with np.load(path) as npz:
        return [npz[name] for name in npz.files]


__all__ = ["MISCOMPILE_FILES", "NumericsReportOptions", "NumericsReportResult",
           "make_numerics_report"]


def _write_wide(staging: Path) -> None:
    """The bundle's float64 evaluation of reduced.mlir on inputs.npz (``standalone.WIDE_NPZ``),
    by which repro.py judges float results as the harness does (nothing when it does not
    evaluate so: repro.py then uses the flat tolerance)."""
    from torch_mlir import ir

    try:
        with new_context():
            module = ir.Module.parseFile(str(staging / "reduced.mlir"))
            inputs = load_npz(str(staging / "inputs.npz"), entry_signature(module.operation, None))
            found = evaluate(module.operation, inputs, ReferenceOptions(check_types=False, widen=True))
    except Exception:  # a float32-only kernel: no float64 values
        return
    values = [v.detach().numpy() if hasattr(v, "detach") else np.asarray(v)
              for v in flatten_outputs(found.outputs)]
    save_npz(staging / WIDE_NPZ, values, prefix="result")
