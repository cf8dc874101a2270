"""A run-time failure bundle: what ``harness report FILE --numerics`` writes when the lowered
code does not compute wrong values but fails when it runs (``execution``: a signal such as a
``cf.assert`` abort, or symbols the ExecutionEngine cannot resolve).

Why the same command and not a sibling mode: the user asked whether the RefBackend gets the
numbers right, with the same inputs and flags; the answer "it cannot run them" is found by the
same check, so the report detects it and writes the matching bundle kind instead of refusing.

- ``reduced.mlir``: the IR reductions on the whole function (``reduce.runtime``), kept while the
  code still fails with the same ``RuntimeFailure``;
- ``inputs.npz`` (and ``expected.npz``, eager PyTorch's values); ``reduced.linalg.mlir``;
- ``repro.py`` (``standalone``) and ``repro.sh``, the one launcher running it: exit 1 exactly
  when it fails the same way;
- ``issue.md``: what happened, where (the torch op whose lowering put the failing ``cf.assert``
  there, read off the linalg's locations), versions, commands; ``record.json``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from harness.compiler import jsonfile
from harness import defaults
from harness import versions as versions_module
from harness.compiler.binary import OptBinary
from harness.compiler.runner import RunOptions
from harness.execute.failure import RuntimeFailure, RuntimeFailureKind
from harness.execute.levels import split_pipeline
from harness.execute.lowering import run_stage

from ..onnx_terms import node_of
from ..reduce.runtime import RuntimeReduceOptions, RuntimeReduceResult, reduce_runtime
from . import bundle
from . import markdown as md
from .build import collect_versions
from .redact import Redactor
from .repro_check import run_repro
from .result import REPRODUCED_STATUS, BundleFindings, BundleKind, SelfCheck
from .provenance import op_lines
from .sections import (TITLE_PREFIX, given_title, root_cause, section_values, verdict_for, with_evidence,
                       with_source)
from .standalone import write_standalone
from .template import render
from .versions import versions_markdown

if TYPE_CHECKING:
    from torch_mlir import ir

RUNTIME_FILES = ("issue.md", "repro.sh", "repro.py", "reduced.mlir", "reduced.linalg.mlir", "inputs.npz",
                 "expected.npz", "record.json")
RECORD_SCHEMA = "harness.runtime-failure-report/1"
INLINE_MAX_CHARS = 12_000


@dataclass
class RuntimeReportResult:
    folder: str
    archive: str
    title: str
    input_path: str
    pipeline: str
    failure: RuntimeFailure
    where: str                    # the torch op whose lowering put the failing check there, or ""
    ops_before: int
    ops_after: int
    self_check: SelfCheck
    redacted: bool = True
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    triage: str = "new"           # new | known #N | by design (the upstream catalog)
    target_repo: str = "llvm/torch-mlir"

    @property
    def reproduced(self) -> bool:
        return self.self_check.reproduced

    def render(self) -> list[str]:
        return [f"report: {self.folder}", f"archive: {self.archive}", f"title: {self.title}",
                f"at run time: {self.failure}", f"where: {self.where or 'undetermined'}",
                f"triage: {self.triage}", f"target repository: {self.target_repo}",
                f"ops: {self.ops_before} -> {self.ops_after}",
                f"paths {'redacted' if self.redacted else 'kept (--no-redact)'}",
                f"self-check: {self.self_check.describe()}"] + [f"note: {n}" for n in self.notes]

    def to_json(self) -> dict:
        d = jsonfile.plain(asdict(self))
        d.update(kind=BundleKind.RUNTIME_FAILURE.value, failure=self.failure.to_json(),
                 self_check=self.self_check.to_json(), reproduced=self.reproduced)
        return d


@dataclass(frozen=True, kw_only=True)
class RuntimeFindings(BundleFindings):
    """A run-time failure's findings: what its issue.md and record.json are written from."""

    kind: ClassVar[BundleKind] = BundleKind.RUNTIME_FAILURE
    schema: ClassVar[str] = RECORD_SCHEMA

    pipeline: str                    # as given
    reduced: RuntimeReduceResult
    where: str                       # the torch op whose lowering put the failing check there, or ""
    shapes: tuple[str, ...]          # inputs.npz's arrays, one markdown item each
    report_command: str              # the command that wrote the bundle (paths cut to names)
    reduced_text: str
    linalg_text: str
    # reduced.mlir run once more under MLIR's runtime op verification (repro.py's lowering has
    # it): a bad access that reads past a buffer (SIGSEGV, or garbage) then names its op. None:
    # no check failed (or the run was not made).
    checked: RuntimeFailure | None = None

    def record(self) -> dict:
        return {**self.header(), "pipeline": self.pipeline,
                "failure": self.reduced.failure.to_json(), "where": self.where or "undetermined",
                "checked_failure": self.checked.to_json() if self.checked else None,
                "reduce": self.reduced.to_json()}


def build_runtime_report(src: Path, pipeline: str, exe: OptBinary, staging: Path, scratch: Path,
                         out_dir: Path, options: Any, say: Callable[[str], None]) -> RuntimeReportResult:
    """The bundle in ``staging``, published under ``out_dir``; ``options`` are the
    ``NumericsReportOptions`` of the report."""
    say(f"the code fails at run time; reducing it (budget {options.budget_s:g} s)")
    reduced = reduce_runtime(src, pipeline, options=RuntimeReduceOptions(
        output_path=staging / "reduced.mlir", budget_s=options.budget_s,
        max_tries=defaults.REDUCE_MAX_TRIES if options.reduce else 1, inputs_path=options.inputs_path,
        random=options.random, function=options.function, opt=exe.path,
        timeout_s=options.timeout_s, out_dir=str(scratch), progress=say))
    Path(reduced.inputs_path).replace(staging / "inputs.npz")
    Path(reduced.expected_path).replace(staging / "expected.npz")
    (staging / "reduced.actual.npz").unlink(missing_ok=True)  # a crash has no actual values
    notes: list[str] = []
    to_linalg = split_pipeline(reduced.piece_pipeline).to_linalg
    located = scratch / "reduced.located.linalg.mlir"
    record = run_stage(staging / "reduced.mlir", to_linalg, output_path=located, opt=exe.path,
                       options=RunOptions(timeout_s=options.timeout_s, extra_args=("-mlir-print-debuginfo",)))
    where = locate(staging / "reduced.mlir", located, reduced.failure) if record.ok else ""
    linalg = staging / "reduced.linalg.mlir"
    plain = run_stage(staging / "reduced.mlir", to_linalg, output_path=linalg, opt=exe.path,
                      options=RunOptions(timeout_s=options.timeout_s))
    if not plain.ok:
        notes.append(f"{reduced.piece_pipeline} failed on reduced.mlir: {plain.signature}")
        linalg.write_text("")
    redactor = Redactor.for_machine([staging], enabled=options.redact,
                                    other_dirs=[src.parent, out_dir, scratch])
    for name in ("reduced.mlir", "reduced.linalg.mlir"):
        redactor.redact_file(staging / name, ir=True)

    checked, node = checked_failure(staging, reduced.piece_pipeline, exe, options.timeout_s, scratch)
    if not where and node:
        where = onnx_node_where(node, checked, op_lines(options.port_evidence))
    write_standalone(staging, BundleKind.RUNTIME_FAILURE, reduced.piece_pipeline,
                     f"{reduced.failure} at run time", redactor, options.timeout_s)
    say("self-check: running repro.sh")
    check = run_repro(staging, exe.path, options.timeout_s, BundleKind.RUNTIME_FAILURE)
    provenance = with_evidence(options.provenance, options.port_evidence, list(reduced.computing_ops))
    verdict = with_source(verdict_for(list(reduced.computing_ops), f"{reduced.failure}\n{where}", "",
                                      options.search_upstream, say), options.lookup, provenance)
    verdict = replace(verdict, crash_or_miscompile=True)  # filed whatever the path
    heading = given_title(verdict, options.title) or title(reduced, where, verdict.title_prefix, checked)
    report_command = shlex.join(["python", "-m", "harness", "report", src.name, "--pipeline", pipeline,
                                 "--numerics", *(["--inputs", Path(options.inputs_path).name]
                                                 if options.inputs_path else [])]) + " --out DIR"
    with np.load(staging / "inputs.npz") as npz:
        shapes = tuple(f"- `{k}`: {npz[k].dtype}{list(npz[k].shape)}" for k in npz.files)
    findings = RuntimeFindings(
        src=src, title=heading, exe=exe, versions=collect_versions(exe), check=check,
        notes=tuple(notes), redacted=options.redact, provenance=provenance,
        verdict=verdict, pipeline=pipeline, reduced=reduced, where=where, shapes=shapes,
        report_command=report_command, reduced_text=(staging / "reduced.mlir").read_text(),
        linalg_text=linalg.read_text(), checked=checked)
    bundle.write_texts(staging, findings, issue_markdown(findings, redactor), redactor)
    slug = "runtime-" + ("-".join(s.lower() for s in reduced.failure.symbols)
                         if reduced.failure.kind is RuntimeFailureKind.MISSING_SYMBOLS
                         else reduced.failure.signal.lower() or "error")
    folder, archive = bundle.publish(staging, out_dir, slug[:48], redacted=options.redact)
    return RuntimeReportResult(
        folder=str(folder), archive=str(archive), title=heading, input_path=str(src),
        pipeline=pipeline, failure=reduced.failure, where=where, ops_before=reduced.ops_before,
        ops_after=reduced.ops_after, self_check=check, redacted=options.redact, notes=notes,
        files=sorted(p.name for p in folder.iterdir()), triage=verdict.verdict,
        target_repo=verdict.target_repo)


def onnx_node_where(node: str, checked: RuntimeFailure | None, lines: dict[str, str]) -> str:
    """Where a failed check is, when its location is a name (an ONNX import names each op's
    location after its node): the node, and the model's line an ONNX port recorded for the
    check's op (``lines``: op -> FILE:LINE, from ``--port-record``)."""
    message = checked.message if checked is not None else ""
    line = next((where for op, where in lines.items() if op and f" {op}:" in f" {message}"), "")
    source = f", exported from {line}" if line else ""
    return f"ONNX node {node} (the failed runtime check's location, loc(\"{node}\"){source})"


#: The location line of a failed runtime check: ``Location: loc("node_softmax")``.
_CHECK_LOCATION = re.compile(r"Location:\s*([^\n]*)")


def checked_failure(staging: Path, pipeline: str, exe: OptBinary, timeout_s: float,
                    scratch: Path) -> tuple[RuntimeFailure | None, str]:
    """reduced.mlir on inputs.npz under MLIR's runtime op verification (``harness check
    --runtime-checks``): the failed check, which names the op and what it found (an
    out-of-bounds ``memref.load``), when the unchecked run only died by a signal; None when no
    check failed. With it, the name its ``Location:`` holds (an ONNX node: ``loc("node_softmax")``),
    "" when none."""
    from harness.execute.check import CheckOptions, CheckOutcome, check_file

    done = check_file(staging / "reduced.mlir", CheckOptions(
        pipeline=pipeline, inputs_path=str(staging / "inputs.npz"), opt=exe.path,
        timeout_s=timeout_s, out_dir=str(scratch), runtime_checks=True))
    if done.outcome is not CheckOutcome.FAILS or done.failed_stage != "execution":
        return None, ""
    signal = done.refbackend.signal if done.refbackend is not None else ""
    found = RuntimeFailure.of(done.error, signal)
    if not found.message.startswith("runtime op verification failed"):
        return None, ""
    at = _CHECK_LOCATION.search(done.error)
    return found, (node_of(at.group(1)) if at else "")


def locate(reduced: Path, located_linalg: Path, failure: RuntimeFailure) -> str:
    """The torch op of ``reduced`` whose lowering put the failing ``cf.assert`` in the linalg:
    the assert keeps that op's location (``-mlir-print-debuginfo``), compared on the bindings.
    For missing symbols, or when it cannot tell, ""."""
    if failure.kind is not RuntimeFailureKind.SIGNAL or not failure.message:
        return ""
    from torch_mlir import ir

    from harness.compiler.mlir import new_context

    with new_context():
        try:
            torch_ops = {str(op.location): op.operation.name
                         for op in _walk(ir.Module.parseFile(str(reduced)))
                         if op.operation.name.startswith("torch.")}
            asserts = [str(op.location) for op in _walk(ir.Module.parseFile(str(located_linalg)))
                       if op.operation.name == "cf.assert" and "msg" in op.attributes
                       and ir.StringAttr(op.attributes["msg"]).value == failure.message]
        except ir.MLIRError:
            return ""
    ops = sorted({torch_ops[loc] for loc in asserts if loc in torch_ops})
    if not ops:
        return ""
    return (f"the lowering of {', '.join(ops)} (convert-torch-to-linalg) puts "
            f"cf.assert ..., \"{failure.message}\" there")


def _walk(module: ir.Module) -> Iterator[ir.Operation]:
    stack = [module.operation]
    while stack:
        op = stack.pop()
        yield op
        for region in op.regions:
            for block in region.blocks:
                stack.extend(child.operation for child in block.operations)


def _root_cause(failure: RuntimeFailure, where: str) -> str:
    if where:
        said = "" if where.startswith("ONNX node ") else " (the assert's location in the linalg)"
        return root_cause(where[:1].upper() + where[1:] + said + ".", [])
    if failure.kind is RuntimeFailureKind.MISSING_SYMBOLS:
        return root_cause(
            f"The RefBackend's lowering to LLVM calls {', '.join(failure.symbols)}, which no library "
            "the ExecutionEngine loads defines: a gap of the RefBackend (MLIR's C runner utilities "
            "are not loaded), not of one torch op's lowering.", [])
    return root_cause("", ["the locations of the cf.assert ops of reduced.linalg.mlir: none "
                           "carries the failure's message at a torch op's location"])


def title(reduced: RuntimeReduceResult, where: str, prefix: str = TITLE_PREFIX,
          checked: RuntimeFailure | None = None) -> str:
    """The bug in one line; a signal that names nothing (SIGSEGV) is said with what the checked
    run named (an out-of-bounds memref.load), which is what a maintainer looks for."""
    f = reduced.failure
    ops = " -> ".join(o.removeprefix("aten.") for o in reduced.computing_ops) or "a function"
    if f.kind is RuntimeFailureKind.MISSING_SYMBOLS:
        text = (f"{ops} lowered through {reduced.piece_pipeline} and the RefBackend calls "
                f"{', '.join(f.symbols)}, which the ExecutionEngine cannot resolve")
    else:
        text = f"{ops} through {reduced.piece_pipeline} and the RefBackend: {f} at run time"
        if checked is not None and checked != f:
            named = checked.message.removeprefix("runtime op verification failed: ")
            text = (f"{ops} through {reduced.piece_pipeline}: {named} at run time ({f.signal} "
                    "without runtime checks)")
    return prefix + text[:150]


def issue_markdown(findings: RuntimeFindings, r: Redactor) -> str:
    reduced, where, check = findings.reduced, findings.where, findings.check
    sections = section_values(findings.verdict, _root_cause(reduced.failure, where),
                              findings.provenance, findings.src.name, md.code)
    packages = versions_module.installed()
    f = reduced.failure
    if f.kind is RuntimeFailureKind.MISSING_SYMBOLS:
        what = (f"The module lowers without an error, but the RefBackend's ExecutionEngine cannot "
                f"load it: \"Symbols not found: [ {', '.join(f.symbols)} ]\". The RefBackend's "
                f"lowering to LLVM emits calls to {', '.join(md.code(s) for s in f.symbols)}, "
                "which no library the engine loads defines.")
    elif f.kind is RuntimeFailureKind.SIGNAL:
        printed = f", after printing: {md.code(f.message)}" if f.message.strip() else ", printing nothing"
        what = (f"The module lowers without an error; the compiled code dies by **{f.signal}** "
                f"when it runs on `inputs.npz`{printed}.")
    else:
        what = f"The compiled code fails when it runs: {md.code(f.message)}."
    if findings.checked is not None and findings.checked != f:
        what += (f" Lowered with MLIR's runtime op verification (`generate-runtime-verification`, "
                 f"which repro.py's lowering runs) it dies by **{findings.checked.signal}** on a "
                 f"failed check instead: {md.code(findings.checked.message)} (`python repro.py` "
                 "shows it).")
    if where.startswith("ONNX node "):  # says where it was read
        where_text = md.prose(r.text(where)) + "."
    elif where:
        where_text = md.prose(r.text(where)) + " (read off the locations of `reduced.linalg.mlir`)."
    elif f.kind is RuntimeFailureKind.MISSING_SYMBOLS:
        where_text = ("Undetermined at the torch level: the call is made by the RefBackend's "
                      "lowering of the linalg below to LLVM, not by one torch op's lowering.")
    else:
        where_text = ("Undetermined: no `cf.assert` of the linalg carries the message at a torch "
                      "op's location.")
    return render("runtime.md.in", {
        "TITLE": md.heading(r.text(findings.title)),
        "WARNING": ("> **Warning: this bundle did NOT reproduce the failure when it was written.** "
                    + md.prose(r.text(check.describe()))) if not check.reproduced else "",
        "SUMMARY": md.prose(r.text(
            f"Lowered with {reduced.pipeline} and run on the RefBackend, the program fails at run "
            f"time: {f}. The function ({reduced.ops_before} ops at the torch backend contract) was "
            f"reduced to {reduced.ops_after} ops that fail the same way on inputs.npz.")),
        "VERSIONS": r.text("\n".join(versions_markdown(findings.exe, packages=packages)).rstrip("\n")),
        "WHAT": what,
        "WHERE": where_text,
        "REDUCE_SUMMARY": md.prose(r.text(reduced.summary())),
        "IR": _inline(r.text(findings.reduced_text), "reduced.mlir"),
        "PIPELINE": md.one_line(reduced.piece_pipeline),
        "LINALG": _inline(r.text(findings.linalg_text), "reduced.linalg.mlir"),
        "INPUTS": "`inputs.npz` holds the arguments; `expected.npz` what eager PyTorch computes on "
                  "them (op by op):\n\n" + "\n".join(findings.shapes),
        "REPRODUCED_STATUS": str(REPRODUCED_STATUS),
        "TORCH": packages.get("torch", "?"),
        "TORCH_MLIR": packages.get("torch-mlir", "?"),
        "SELF_CHECK": md.prose(r.text(check.describe())) + ".",
        "REPRO_OUTPUT": md.fence(r.text(check.repro_output)) if check.repro_output else "",
        "REDACTION": ("Paths are redacted: `~` is the home folder, `<path>/NAME` any other folder, "
                      "`<user>` the user name.") if findings.redacted else "",
        "NOTES": ("## Notes\n\n" + "\n".join(f"- {md.prose(r.text(n))}" for n in findings.notes)
                  if findings.notes else ""),
        **{k: r.text(v) for k, v in sections.items()},
    })


def _inline(text: str, name: str) -> str:
    if len(text) > INLINE_MAX_CHARS:
        return f"(too large to inline: {len(text)} characters; attached as `{name}`)"
    return md.fence(text, "mlir")


__all__ = ["RUNTIME_FILES", "RuntimeFindings", "RuntimeReportResult", "build_runtime_report", "locate"]
