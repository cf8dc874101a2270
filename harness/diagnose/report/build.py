"""``make_report``: the runs, in order, then the bundle's files from one ``Findings``.

1. the user's file through the pipeline (a file that passes, or that torch-mlir-opt rejects
   before any pass runs, is refused: there is no compiler bug to report);
2. input.mlir (redacted, weights elided when that keeps the failure), bisect, reduce;
3. the bundle's file replayed, repro.sh and backtrace.txt written, repro.sh run (self-check);
4. record.json and issue.md, then the folder and its archive published together.

A legalization failure is diagnosed from its blocker (``harness.diagnose.blockers``): the title,
the summary and "Expected behaviour" name the op whose conversion failed, and when that op alone
in a function fails the same way, that one-op function is ``reduced.mlir`` (no reduction run).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from harness import versions as versions_module
from harness.compiler import binary as binary_module
from harness.compiler import builds as builds_module
from harness.compiler import pipelines
from harness.compiler.outcomes import Outcome, Signature
from harness.compiler.records import RunRecord
from harness.compiler.runner import ELIDE_PRINTED_WEIGHTS, RunOptions, count_file_ops, run_pipeline
from harness.compiler.irfile import unique_dir
from harness.errors import HarnessError, NothingToReduceError, OutputError, PipelineConfigError, ReportError

from ..bisect import BisectResult, bisect
from ..blockers import BlockerAnalysis, analyze
from ..tool_choice import tool_for
from ..reduce import ReduceOptions, ReduceResult, reduce_file
from ..causes import group_by_cause, shared_cause
from ..reduce.split import DistinctFailure, distinct_failures
from . import bundle
from .diagnosis import Diagnosis
from .inputs import is_bytecode_file, write_input
from .issue import (
    SIGNATURE_MAX_CHARS,
    single_pass_reproduces,
    backtrace_text,
    bounded,
    issue_markdown,
    issue_title,
    pipeline_label,
)
from .redact import Redactor
from .replay import replay, self_check
from .repro import diagnostic_key, repro_script
from .standalone import ReproPy, write_pass_repro
from .provenance import PathOutcome, op_lines
from .sections import (UpstreamVerdict, given_title, pass_broke_valid_ir, root_cause, searched_upstream,
                       triage, with_evidence, with_fx_try, with_source)
from .result import BundleKind, Findings, Refusal, ReportOptions, ReportResult, SameCauseMember, SelfCheck
from .versions import binary_versions

# The reduced IR goes inline into issue.md up to this size; above it, issue.md points to the file.
INLINE_MAX_LINES = 150
INLINE_MAX_CHARS = 12_000
# Failures that may be the input's own fault (it does not parse or verify) rather than a pass's.
_MAYBE_INVALID = (Outcome.PARSE_ERROR, Outcome.VERIFIER_ERROR, Outcome.PASS_FAILURE)
_PARSE_ONLY = "builtin.module()"


def make_report(path: str | os.PathLike, pipeline: str, *, options: ReportOptions) -> ReportResult:
    """Builds the bug-report bundle for ``path``, which fails ``pipeline``.

    ``pipeline`` is a name from pipelines/, an upstream pipeline name, a textual pipeline, or
    pass flags (``-canonicalize``). Raises ReportError when the input passes, is not valid IR
    or the bundle cannot be written, InputFileError / BinaryError for a bad input or binary.
    """
    src = Path(path)
    textual = resolve_pipeline(pipeline)
    out_dir = Path(options.out_dir)
    bundle.check_out_dir(out_dir, src)
    say = options.progress or (lambda _line: None)
    exe = builds_module.resolve(tool_for(pipeline, options.opt, options.driver))
    run_options = RunOptions(timeout_s=options.timeout_s)
    say(f"running {src.name} through {textual}")
    original = run_pipeline(src, textual, opt=exe.path, options=run_options)
    if original.ok:
        raise ReportError(str(src), Refusal.PASSES,
                          f"nothing to report: {src} passes {pipeline} ({exe.tool_name} exited 0 "
                          f"in {original.elapsed_s:.2f} s). A report needs a file and the pipeline "
                          "it fails; 'harness run FILE --pipeline P' shows what a file does.")
    if original.outcome in _MAYBE_INVALID:
        _refuse_invalid_input(src, exe, options.timeout_s)
    try:
        with bundle.staging_folder(out_dir, src) as staging:
            job = _Job(src, textual, original, exe, staging, options, say)
            return _build(job, pipeline, out_dir)
    except OSError as e:
        raise ReportError(str(src), Refusal.OUTPUT,
                          f"cannot write the report for {src} under {out_dir}: "
                          f"{e.strerror or e}. Choose a writable --out folder with free space."
                          ) from None
    except OutputError as e:  # from write_atomically / unique_dir: already names file and cause
        raise ReportError(str(src), Refusal.OUTPUT, f"cannot write the report for {src}: {e}") from None


def make_reports_each(path: str | os.PathLike, pipeline: str, *,
                      options: ReportOptions) -> list[ReportResult]:
    """One bundle per distinct failure of ``path`` (five missing shape functions in one
    module showed as one bug, the first the pipeline met): each failure's bundle is made from the
    module it is met in, the failures before it knocked out (``reduce.split``), in that order."""
    src = Path(path)
    textual = resolve_pipeline(pipeline)
    bundle.check_out_dir(Path(options.out_dir), src)
    exe = builds_module.resolve(tool_for(pipeline, options.opt, options.driver))
    say = options.progress or (lambda _line: None)
    say(f"finding the distinct failures of {src.name} (each one found knocked out)")
    work = unique_dir("report-each-")
    try:
        try:
            failures = distinct_failures(src, textual, work, opt=exe.path, timeout_s=options.timeout_s)
        except NothingToReduceError:
            failures = []
        if len(failures) <= 1:  # one failure (or none: make_report says the input passes)
            return [make_report(src, pipeline, options=options)]
        say(f"{len(failures)} distinct failures: "
            + ", ".join(" ".join(f.subject) or str(f.record.signature) for f in failures))
        groups = group_by_cause(failures, lambda f: str(f.record.signature))
        if len(groups) < len(failures):
            say(f"{len(groups)} root causes: failures with one shared cause make one bundle")
        results = []
        for n, group in enumerate(groups, 1):
            first = group[0]
            say(f"bundle {n} of {len(groups)}: {' '.join(first.subject) or first.record.signature}"
                + (f" and {len(group) - 1} more of the same cause" if len(group) > 1 else ""))
            members = _same_cause_members(group[1:], pipeline, options, work / f"group-{n}")
            results.append(make_report(first.input, pipeline,
                                       options=replace(options, same_cause=members)))
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _same_cause_members(failures: list[DistinctFailure], pipeline: str, options: ReportOptions,
                        scratch: Path) -> tuple[SameCauseMember, ...]:
    """The other failures of a shared cause, each reduced by a report of its own (made in
    ``scratch`` and self-checked there), for the group's one bundle."""
    members = []
    for n, failure in enumerate(failures, 2):
        scratch.mkdir(parents=True, exist_ok=True)
        made = make_report(failure.input, pipeline, options=replace(
            options, out_dir=scratch, progress=None, search_upstream=False, same_cause=()))
        folder = Path(made.folder)
        reduced = folder / ("reduced.mlir" if (folder / "reduced.mlir").is_file() else "input.mlir")
        ops = failure.subject or tuple(_QUOTED_OP.findall(made.signature)[:1])
        members.append(SameCauseMember(ops, made.signature, reduced.read_text(), f"reduced-{n}.mlir",
                                       made.replay_pipeline or made.pipeline))
    return tuple(members)


_QUOTED_OP = re.compile(r"'(torch\.[\w.]+)'")


def group_title(original: RunRecord, members: tuple[SameCauseMember, ...], prefix: str) -> str:
    """A shared cause's title: the cause, then every op it covers; "" for a bundle of one."""
    cause = shared_cause(str(original.signature))
    if not members or cause is None:
        return ""
    ops = [*_QUOTED_OP.findall(str(original.signature))[:1], *(" ".join(m.ops) for m in members)]
    names = [op.removeprefix("torch.") for op in ops if op]
    return prefix + cause.title.format(count=len(names), ops=", ".join(f"`{n}`" for n in names))


def resolve_pipeline(spec: str) -> str:
    """Pass flags (``-canonicalize``) as given; names and textual pipelines resolved."""
    return pipelines.default().resolve(spec)


def _broke_valid_ir(src: Path, textual: str, exe: binary_module.OptBinary, original: RunRecord,
                    timeout_s: float) -> bool:
    """Whether a pass turned ``src`` (valid: checked before) into IR the verifier rejects. A
    verifier error says so; a pass failure may be one too, since many verifiers word their
    error without the op's name ("type of return operand 0 ... doesn't match function result
    type"): the pipeline is run again with the verifier off between passes (``--verify-each=0``)
    and, when it then succeeds, its output is read back with the verifier on."""
    if pass_broke_valid_ir(original.signature.outcome):
        return True
    if original.signature.outcome is not Outcome.PASS_FAILURE:
        return False
    with tempfile.TemporaryDirectory(prefix="harness-verify-each-") as tmp:
        out = Path(tmp) / "unverified.mlir"
        try:
            rerun = run_pipeline(src, textual, opt=exe.path, options=RunOptions(
                timeout_s=timeout_s, extra_args=("--verify-each=0",), output_path=str(out)))
        except PipelineConfigError:  # the bindings tool has no --verify-each: not known to break IR
            return False
        if not rerun.ok or not out.is_file():
            return False  # the pass itself fails (or the tool has no such flag)
        read = run_pipeline(out, _PARSE_ONLY, opt=exe.path,
                            options=RunOptions(timeout_s=timeout_s, extra_args=ELIDE_PRINTED_WEIGHTS))
        return not read.ok and not read.outcome.is_crash


def _refuse_invalid_input(src: Path, exe: binary_module.OptBinary, timeout_s: float) -> None:
    """Raises when torch-mlir-opt (or the bindings tool) rejects ``src`` with no pass at all: the
    file is not valid IR (random bytes, a syntax error, an op that does not verify), which is no
    compiler bug."""
    # It prints its module to /dev/null: without weights (a 50 MB dense literal is printed
    # through a 100 MB hex string).
    parsed = run_pipeline(src, _PARSE_ONLY, opt=exe.path,
                          options=RunOptions(timeout_s=timeout_s, extra_args=ELIDE_PRINTED_WEIGHTS))
    if parsed.ok or parsed.outcome.is_crash:
        return
    first = parsed.first_error()
    where = f"{first.location}: {first.message}" if first is not None else \
        (parsed.stderr.strip().splitlines() or ["(no message)"])[0]
    raise ReportError(str(src), Refusal.INVALID_INPUT,
                      f"cannot report {src}: {exe.tool_name} rejects it before running any pass "
                      f"({bounded(where, 300)}). This is not a torch-mlir bug: the file is not "
                      "valid IR. Fix it at that location or write it again (harness emit, harness "
                      "opt), then run the report again.")


@dataclass(frozen=True)
class _Job:
    """What every phase of one report reads."""

    src: Path                        # the user's file
    textual: str                     # the pipeline it fails, resolved to its text
    original: RunRecord              # the file's run through that pipeline
    exe: binary_module.OptBinary     # the binary (or the bindings tool) that ran it
    staging: Path                    # the bundle's folder until it is published
    options: ReportOptions
    say: Callable[[str], None]       # progress lines


def _build(job: _Job, spec: str, out_dir: Path) -> ReportResult:
    """The bundle in ``job.staging``, published under ``out_dir``: the input, the diagnosis, the
    reduction, the self-check, then the write-up, each phase a function returning its values."""
    src, textual, original, exe, staging = job.src, job.textual, job.original, job.exe, job.staging
    options, say = job.options, job.say
    redactor = Redactor.for_machine([staging], enabled=options.redact,
                                    other_dirs=[src.parent, out_dir])
    input_file = staging / "input.mlir"
    say("writing input.mlir")
    written = write_input(src, input_file, textual, original, opt=exe.path,
                          timeout_s=options.timeout_s, keep_weights=options.keep_weights,
                          redactor=redactor)
    notes = list(written.notes)
    analysis, diagnosis, bisected = _diagnose(job, input_file, written.record, notes)
    cut = _reduce(job, input_file, written.record, analysis, diagnosis, redactor, notes)
    replayed, check, single = _check(job, cut, bisected, redactor)
    for member in options.same_cause:  # the other ops of the cause: their own reduced files
        (staging / member.file).write_text(member.reduced_text)
        redactor.redact_file(staging / member.file, ir=True)
    ir_path = staging / cut.replay_name
    provenance = with_fx_try(with_evidence(
        options.provenance, options.port_evidence,
        [diagnosis.op if diagnosis else "", diagnosis.reported if diagnosis else "",
         str(original.signature)]), options.fx_try, original)
    verdict = with_source(_verdict(original, diagnosis, bisected, options, say), options.lookup,
                          provenance)
    # A crash, or a pass that broke valid IR, stays filed whatever the path (the
    # not-on-the-supported-path rule spares them).
    verdict = replace(verdict, crash_or_miscompile=original.signature.outcome.is_crash,
                      broke_valid_ir=_broke_valid_ir(src, textual, exe, original, options.timeout_s))
    signature = bounded(str(cut.subject.signature), SIGNATURE_MAX_CHARS)
    findings = Findings(
        src=src, pipeline_as_given=spec, textual=textual, signature=signature, exe=exe,
        versions=collect_versions(exe),
        original=cut.subject, bundle_record=written.record, weights=written.weights,
        bisected=bisected, reduced=cut.reduced, replay_name=cut.replay_name, replay=replayed,
        replay_pipeline=cut.pipeline or textual,
        ops_before=cut.ops_before, ops_after=cut.ops_after, check=check,
        title=(given_title(verdict, options.title)
               or group_title(original, options.same_cause, verdict.title_prefix)
               or issue_title(original, bisected, textual, reproduced=check.reproduced,
                              diagnosis=diagnosis, prefix=verdict.title_prefix)),
        notes=tuple(notes), redacted=options.redact, inline_ir=_inline_ir(ir_path),
        ir_size=ir_path.stat().st_size, blockers=analysis, diagnosis=diagnosis,
        blocker_reproducer=cut.blocker_reproducer, single_pass=single,
        provenance=provenance, verdict=verdict, same_cause=options.same_cause,
        root_cause=_root_cause(original, analysis, diagnosis, bisected))
    bundle.write_texts(staging, findings, issue_markdown(findings, redactor), redactor)

    # The folder's name is the signature's slug; the signature may quote a path, so redacted.
    slug = Signature.from_json(redactor.json(cut.subject.signature.to_json())).slug()
    folder, archive = bundle.publish(staging, out_dir, slug, redacted=options.redact)
    return ReportResult(
        folder=str(folder), archive=str(archive), title=findings.title, signature=signature,
        outcome=original.outcome, input_path=str(src), pipeline=textual, binary=exe.path,
        self_check=check, weights=written.weights,
        reduced=cut.reduced is not None or cut.blocker_reproducer,
        ops_before=cut.ops_before, ops_after=cut.ops_after, reduce_summary=cut.summary(diagnosis),
        failing_pass=findings.failing_pass, redacted=options.redact, notes=notes,
        files=sorted(p.name for p in folder.iterdir()),
        blocker=diagnosis.op if diagnosis else "", reported_op=diagnosis.reported if diagnosis else "",
        responsible_pass=diagnosis.responsible_pass if diagnosis else "",
        fix=diagnosis.fix if diagnosis else "", triage=verdict.verdict,
        target_repo=verdict.target_repo, replay_pipeline=cut.pipeline or textual,
        same_cause=[" ".join(m.ops) for m in options.same_cause],
        onnx=diagnosis.onnx if diagnosis else "",
        through=[r.frontend for r in provenance.paths if r.outcome is PathOutcome.HITS])


def _diagnose(job: _Job, input_file: Path, record: RunRecord, notes: list[str]
              ) -> tuple[BlockerAnalysis | None, Diagnosis | None, BisectResult | None]:
    """The op whose conversion failed (a legalization failure) and the failing pass; a tool that
    cannot tell leaves a note, not a failed report."""
    textual, exe, options, say = job.textual, job.exe, job.options, job.say
    analysis: BlockerAnalysis | None = None
    if record.outcome is Outcome.LEGALIZATION_FAILURE:
        say("finding the op whose conversion failed (each left-over op alone)")
        try:
            analysis = analyze(input_file, textual, opt=exe.path, timeout_s=options.timeout_s)
        except HarnessError as e:
            notes.append(f"the blocker analysis failed: {e}")
    diagnosis = Diagnosis.of(analysis, record, pipeline_label(textual), op_lines(options.port_evidence))
    say("bisecting the pipeline")
    bisected: BisectResult | None = None
    try:
        with tempfile.TemporaryDirectory(prefix="harness-report-bisect-") as tmp:
            bisected = bisect(input_file, textual, opt=exe.path, out_dir=tmp,
                              timeout_s=options.timeout_s)
    except HarnessError as e:
        notes.append(f"bisect failed: {e}")
    return analysis, diagnosis, bisected


@dataclass(frozen=True)
class _Reduction:
    """What the bundle replays: reduced.mlir (the blocker alone, or the reducer's result) or
    input.mlir, and the run it must reproduce."""

    subject: RunRecord                 # the run the bundle must reproduce, as its signature groups it
    replay_name: str                   # reduced.mlir | input.mlir
    reduced: ReduceResult | None       # the reducer's result, when it ran
    blocker_reproducer: bool           # reduced.mlir is the blocker alone
    ops_before: int | None
    ops_after: int | None
    # The pipeline reduced.mlir fails: the user's, or the failing pass alone when the reducer
    # cut object-graph IR at that pass.
    pipeline: str = ""

    def summary(self, diagnosis: Diagnosis | None) -> str:
        if self.reduced is not None:
            return _reduce_line(self.reduced)
        if self.blocker_reproducer and diagnosis is not None:
            return f"the blocker {diagnosis.op} alone, no reduction run"
        return ""


def _reduce(job: _Job, input_file: Path, written: RunRecord, analysis: BlockerAnalysis | None,
            diagnosis: Diagnosis | None, redactor: Redactor, notes: list[str]) -> _Reduction:
    """reduced.mlir: the blocker alone when it fails the same way by itself, else the reducer's
    result within the budget (none with --no-reduce)."""
    textual, original, exe, options, say = job.textual, job.original, job.exe, job.options, job.say
    reduced: ReduceResult | None = None
    reduced_file = job.staging / "reduced.mlir"
    subject = original
    blocker_reproducer = False
    if options.reduce and diagnosis is not None and analysis is not None \
            and diagnosis.blocker.reproduces_alone:
        say(f"reduced.mlir: {diagnosis.op} alone")
        bundle.write_text(reduced_file, diagnosis.blocker.isolated_ir)
        redactor.redact_file(reduced_file, ir=True)
        others = [name for name in analysis.names() if name != diagnosis.op]
        subject = replace(original, blockers=[diagnosis.op, *others])
        blocker_reproducer = True
        if others:
            notes.append(f"other ops fail alone too, each its own bug: {', '.join(others)}")
    elif options.reduce:
        say(f"reducing (budget {options.budget_s:g} s)")
        try:  # the pipeline as the original ran it (pass flags too), so signatures compare
            reduced = reduce_file(input_file, textual, options=ReduceOptions(
                output_path=reduced_file, budget_s=options.budget_s, opt=exe.path,
                original=written, at_failing_pass=options.at_failing_pass))
        except HarnessError as e:
            notes.append(f"reduce failed: {e}")
            reduced_file.unlink(missing_ok=True)
        if reduced_file.is_file():
            redactor.redact_file(reduced_file, ir=True)

    def count(path: Path) -> int | None:
        return count_file_ops(path, opt=exe.path, timeout_s=options.timeout_s)

    ops_before = reduced.ops_before if reduced else count(input_file)
    ops_after = (reduced.ops_after if reduced
                 else count(reduced_file) if blocker_reproducer else ops_before)
    replay_name = "reduced.mlir" if reduced_file.is_file() else "input.mlir"
    cut_at = reduced.failing_pass if reduced is not None and replay_name == "reduced.mlir" else ""
    at_pass = reduced.pipeline_text if reduced is not None and cut_at else ""
    if at_pass and at_pass != textual:
        say(f"reduced.mlir fails {at_pass} alone (reduced at the failing pass)")
        notes.append(f"reduced.mlir is the IR just before {cut_at} (object-graph input "
                     f"reduced at its failing pass): it fails {at_pass}, which repro.sh runs")
    return _Reduction(subject, replay_name, reduced, blocker_reproducer, ops_before, ops_after,
                      at_pass or textual)


def _check(job: _Job, cut: _Reduction, bisected: BisectResult | None, redactor: Redactor
           ) -> tuple[RunRecord, SelfCheck, RunRecord | None]:
    """backtrace.txt and repro.sh written, then the self-check: the replayed file through the
    pipeline, repro.sh run; and, for the bindings tool, the failing pass alone."""
    staging, exe, options, say = job.staging, job.exe, job.options, job.say
    say(f"self-check: replaying {cut.replay_name}")
    textual = cut.pipeline or job.textual  # reduced.mlir's own pipeline (the failing pass alone)
    replayed = replay(staging, cut.replay_name, textual, opt=exe.path, timeout_s=options.timeout_s)
    bundle.write_text(staging / "backtrace.txt", redactor.text(backtrace_text(job.original)))
    script = repro_script(cut.subject, replayed, textual, recorded_binary=redactor.text(exe.path),
                          timeout_s=options.timeout_s, bindings=exe.bindings)
    bundle.write_text(staging / "repro.sh", redactor.text(script))
    (staging / "repro.sh").chmod(0o755)
    single = None
    if exe.bindings and bisected is not None and bisected.found and bisected.failing_pass_pipeline:
        say(f"the failing pass alone on {cut.replay_name} (what the mlir-opt command runs)")
        single = replay(staging, cut.replay_name, bisected.failing_pass_pipeline, opt=exe.path,
                        timeout_s=options.timeout_s)
    if exe.bindings:  # an MLIR core pass: through torch_mlir.passmanager, the least pass list
        alone = single is not None and single_pass_reproduces(single, cut.subject)
        write_pass_repro(staging, ReproPy(
            kind=BundleKind.COMPILE_FAILURE, summary=str(cut.subject.signature),
            ir=(staging / cut.replay_name).read_text(), ir_name=cut.replay_name,
            to_linalg=bisected.failing_pass_pipeline if alone and bisected is not None else textual,
            expected_error=diagnostic_key(replayed if not replayed.ok else cut.subject),
            timeout_s=options.timeout_s), redactor)
    check = self_check(staging, cut.replay_name, cut.subject, replayed, opt=exe.path,
                       timeout_s=options.timeout_s)
    return replayed, check, single


def _inline_ir(path: Path) -> str | None:
    """The file's text when it is small enough to quote in issue.md."""
    if path.stat().st_size > INLINE_MAX_CHARS or is_bytecode_file(path):
        return None
    text = path.read_text(errors="replace")
    if len(text) > INLINE_MAX_CHARS or text.count("\n") > INLINE_MAX_LINES:
        return None
    return text


def collect_versions(exe: binary_module.OptBinary) -> dict[str, str]:
    """Package versions from their metadata (nothing is imported), the binary's, the platform's."""
    out = versions_module.installed()
    out.update(binary_versions(exe))  # what ran, and where it came from
    out["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    out["platform"] = platform.platform()
    return out


def _reduce_line(reduced: ReduceResult) -> str:
    stopped = str(reduced.stopped)  # an enum's value, or the text itself
    why = {"budget": ", budget spent", "max-tries": ", max tries reached"}.get(stopped, "")
    return f"reduce: {reduced.tries} tries, {reduced.kept} kept, {reduced.elapsed_s:.1f} s{why}"


def _verdict(original: RunRecord, diagnosis: Diagnosis | None, bisected: BisectResult | None,
             options: ReportOptions, say: Callable[[str], None]) -> UpstreamVerdict:
    """The catalog's matches (and GitHub's, with --search-upstream) for the failure, and for
    the other ops of its cause (``--each``'s group): a report or search about any of them is
    about the bundle."""
    failing = bisected.failing_pass if bisected is not None and bisected.found else ""
    blocker = diagnosis.op if diagnosis else ""
    text = "\n".join(filter(None, [str(original.signature), original.stderr[:20_000],
                                    *(m.signature for m in options.same_cause)]))
    verdict = triage(blocker, diagnosis.reported if diagnosis else "", text, failing)
    return searched_upstream(verdict, say) if options.search_upstream else verdict


def _root_cause(original: RunRecord, analysis: BlockerAnalysis | None, diagnosis: Diagnosis | None,
                bisected: BisectResult | None) -> str:
    """The Root cause section: the conversion that declined (the blocker analysis), the pass
    bisect names and the crash's frame, with what was tried."""
    tried: list[str] = []
    determined = ""
    if diagnosis is not None:
        determined = " ".join(diagnosis.sentences())
        if diagnosis.responsible_pass:
            determined += f" At fault: the conversion `{diagnosis.responsible_pass}` declines it here."
    elif analysis is not None:
        tried.append("the blocker analysis (each left-over op alone through the pipeline): it "
                     "named no op whose conversion failed")
    elif original.outcome is Outcome.LEGALIZATION_FAILURE:
        tried.append("the blocker analysis did not run (see the notes)")
    else:
        tried.append(f"no blocker analysis: the failure is a {original.outcome.value}, not a "
                     "legalization failure")
    if bisected is None:
        tried.append("bisect did not run (see the notes)")
    elif bisected.found:
        responsible = bisected.responsible[0].responsible_pass if bisected.responsible else ""
        where = f"`{bisected.failing_pass}` ({bisected.failing_pass_name})"
        if not determined and (original.crash is not None and original.signature.frame):
            determined = (f"The failing pass is {where} (bisect); it crashes in "
                          f"`{original.signature.frame}`.")
        elif not determined and responsible:
            determined = (f"The failing pass is {where}; `{responsible}` should lower the op "
                          "(bisect's replays).")
        else:
            tried.append(f"bisect: the first failing pass is {where}")
    else:
        tried.append(f"bisect: it named no pass ({bisected.detail})")
    return root_cause(determined, tried)
