"""What a report is made from and what it returns: options, the findings every bundle file is
written from, the self-check, the result, and record.json, each a dataclass."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from harness import defaults
from harness.compiler.binary import OptBinary
from harness.compiler.outcomes import Outcome
from harness.compiler.records import RunRecord
from harness.enums import ParsableEnum as Parsable  # the closed-set base, one for all

from ..bisect import BisectResult
from ..blockers import BlockerAnalysis
from ..reduce import ReduceResult
from .diagnosis import Diagnosis
from .sections import FxTry, PortEvidence, Provenance, Verdict

REPORT_SCHEMA = "harness.report/1"
BUNDLE_FILES = ("issue.md", "repro.sh", "input.mlir", "reduced.mlir", "backtrace.txt", "record.json")
# repro.sh's exit status when the bug reproduces; 0 when it does not; CANNOT_RUN_STATUS when it
# could not tell (no binary, no Python with the harness, no temp folder): neither verdict, so a
# bundle run where nothing is installed never reads as "fixed".
REPRODUCED_STATUS = 1
CANNOT_RUN_STATUS = 2
#: The statuses as every repro.sh template's placeholders.
EXIT_STATUSES = {"REPRODUCED_STATUS": str(REPRODUCED_STATUS),
                 "CANNOT_RUN_STATUS": str(CANNOT_RUN_STATUS)}


class Weights(Parsable):
    """What input.mlir holds of the input's weights (resource blobs, inline literals of over
    16 elements)."""

    NONE = "none"                          # the input has none
    ELIDED = "elided"                      # left out; the failure stays the same without them
    KEPT = "kept"                          # --keep-weights
    KEPT_CHANGES_FAILURE = "kept-changes-failure"  # eliding them changed the failure
    KEPT_UNPARSABLE = "kept-unparsable"    # the bindings cannot parse the input to elide them

    def describe(self) -> str:
        return {Weights.NONE: "none (no resource blobs or large literals)",
                Weights.ELIDED: "elided",
                Weights.KEPT: "kept (--keep-weights)",
                Weights.KEPT_CHANGES_FAILURE: "kept (eliding them changed the failure)",
                Weights.KEPT_UNPARSABLE: "kept (the input could not be reprinted without them)"}[self]


class Refusal(Parsable):
    """Why ``harness report`` made no bundle: ``ReportError.reason``."""

    PASSES = "passes"                # the input passes the pipeline
    INVALID_INPUT = "invalid-input"  # the input does not parse or verify: not a compiler bug
    OUTPUT = "output"                # the bundle cannot be written


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """Where the bundle goes and how much work goes into it."""

    out_dir: str | os.PathLike            # parent of the bundle folder and its .tar.gz
    opt: str | None = None                # torch-mlir-opt (default: $TORCH_MLIR_OPT, the wheel's)
    driver: str | None = None             # torch-mlir-opt | bindings (default: the pipeline's own)
    keep_weights: bool = False            # input.mlir keeps resource blobs
    redact: bool = True                   # home, user name, absolute paths
    reduce: bool = True                   # False: no reduced.mlir, repro.sh runs input.mlir
    budget_s: float = defaults.REDUCE_BUDGET_S  # wall clock for the reduction
    timeout_s: float = defaults.TIMEOUT_S  # per torch-mlir-opt run (a hang's report needs less)
    progress: Callable[[str], None] | None = None  # one line per step, for the CLI
    provenance: Provenance = Provenance()  # the frontends tried and what it blocks (port, sweep)
    search_upstream: bool = False         # ask GitHub's issue search (said when offline)
    port_evidence: tuple[PortEvidence, ...] = ()  # port and sweep records: frontends, blocks
    fx_try: FxTry | None = None           # --module: the FX path run by the report (port.fx_try)
    # TorchScript object-graph input is reduced at its failing pass: its own
    # reduction through torchscript-to-torch barely shrinks it. "never" keeps the user's pipeline.
    at_failing_pass: str = "object-graph"


@dataclass
class SelfCheck:
    """Whether the written bundle reproduces: its IR through the runner, and repro.sh."""

    replayed_file: str          # reduced.mlir | input.mlir
    signature: str              # of that file through the pipeline
    signature_reproduced: bool  # equal to the original run's signature
    repro_exit_status: int | None
    repro_output: str
    detail: str = ""

    @property
    def repro_detected(self) -> bool:
        """The one rule of every bundle kind (``repro_check.ReproCheck``): exit REPRODUCED_STATUS."""
        return self.repro_exit_status == REPRODUCED_STATUS

    @property
    def reproduced(self) -> bool:
        return self.signature_reproduced and self.repro_detected

    def describe(self) -> str:
        if self.reproduced:
            return (f"reproduced: {self.replayed_file} fails with the same signature and "
                    f"'bash repro.sh' exits {self.repro_exit_status}")
        parts = []
        if not self.signature_reproduced:
            parts.append(f"{self.replayed_file} gives '{self.signature}' instead")
        if not self.repro_detected:
            parts.append(f"'bash repro.sh' exits {self.repro_exit_status} (it did not detect the bug)")
        return "NOT REPRODUCED: " + "; ".join(parts) + (f" ({self.detail})" if self.detail else "")

    def to_json(self) -> dict:
        return {**asdict(self), "reproduced": self.reproduced}


@dataclass(frozen=True, kw_only=True)
class Findings:
    """Everything the bundle's files are written from: the one context of issue.md, repro.sh,
    backtrace.txt and record.json. Built once, after the runs, and never changed."""

    src: Path                        # the user's file
    pipeline_as_given: str           # a name, a textual pipeline or pass flags
    textual: str                     # as run
    exe: OptBinary
    versions: dict[str, str]
    original: RunRecord              # the user's file through the pipeline
    bundle_record: RunRecord         # input.mlir through it
    weights: Weights
    bisected: BisectResult | None
    reduced: ReduceResult | None
    replay_name: str                 # reduced.mlir | input.mlir: what repro.sh runs
    replay: RunRecord                # that file through the pipeline
    # What repro.sh runs it through: ``textual``, or the failing pass alone for object-graph
    # input reduced at that pass ("" read as ``textual``).
    replay_pipeline: str = ""
    ops_before: int | None
    ops_after: int | None
    check: SelfCheck
    title: str
    notes: tuple[str, ...] = ()
    redacted: bool = True
    inline_ir: str | None = None     # the replayed file when small enough to quote
    ir_size: int = 0                 # its size in bytes
    blockers: BlockerAnalysis | None = None  # legalization failures: the op whose conversion failed
    diagnosis: Diagnosis | None = None       # the blocker the report is about
    blocker_reproducer: bool = False         # reduced.mlir is that blocker alone (no reduce run)
    # The bindings tool: the bundle's file through the failing pass alone (what the mlir-opt
    # command of issue.md runs), so that command is stated as checked or not.
    single_pass: RunRecord | None = None
    provenance: Provenance = Provenance()
    verdict: Verdict = Verdict()           # the catalog's matches, the label, the target repo
    root_cause: str = ""                   # the Root cause section

    @property
    def failing_pass(self) -> str:
        return self.bisected.failing_pass if self.bisected is not None and self.bisected.found else ""


@dataclass
class ReportSummary:
    """record.json's "report": the report's own facts."""

    title: str
    signature: str
    outcome: Outcome
    input: str
    pipeline: str
    pipeline_as_given: str
    weights: Weights
    redacted: bool
    versions: dict[str, str]
    self_check: SelfCheck
    notes: list[str]
    schema: str = REPORT_SCHEMA

    def to_json(self) -> dict:
        return {"schema": self.schema, "title": self.title, "signature": self.signature,
                "outcome": self.outcome.value, "input": self.input, "pipeline": self.pipeline,
                "pipeline_as_given": self.pipeline_as_given, "weights": self.weights.value,
                "redacted": self.redacted, "versions": dict(self.versions),
                "self_check": self.self_check.to_json(), "notes": list(self.notes)}


@dataclass
class ReportRecord:
    """record.json: the report, and every record it was made from."""

    report: ReportSummary
    record: RunRecord                # the run on the user's file
    bundle_input_record: RunRecord   # the run on input.mlir
    bisect: BisectResult | None
    reduce: ReduceResult | None
    replay_record: RunRecord         # the bundle's file, as the self-check ran it
    blockers: BlockerAnalysis | None = None
    single_pass_record: RunRecord | None = None  # the bindings tool: the failing pass alone

    @classmethod
    def of(cls, findings: Findings, signature: str) -> ReportRecord:
        f = findings
        summary = ReportSummary(
            title=f.title, signature=signature, outcome=f.original.outcome, input=str(f.src),
            pipeline=f.textual, pipeline_as_given=f.pipeline_as_given, weights=f.weights,
            redacted=f.redacted, versions=f.versions, self_check=f.check, notes=list(f.notes))
        return cls(report=summary, record=f.original, bundle_input_record=f.bundle_record,
                   bisect=f.bisected, reduce=f.reduced, replay_record=f.replay,
                   blockers=f.blockers, single_pass_record=f.single_pass)

    def to_json(self) -> dict:
        return {"report": self.report.to_json(),
                "record": self.record.to_json(),
                "bundle_input_record": self.bundle_input_record.to_json(),
                "bisect": self.bisect.to_json() if self.bisect else None,
                "reduce": _jsonable(asdict(self.reduce)) if self.reduce else None,
                "replay_record": self.replay_record.to_json(),
                "blockers": self.blockers.to_json() if self.blockers else None,
                "single_pass_record": (self.single_pass_record.to_json()
                                       if self.single_pass_record else None)}


@dataclass
class ReportResult:
    folder: str
    archive: str
    title: str
    signature: str              # the grouping key, cut to a readable length
    outcome: Outcome
    input_path: str
    pipeline: str               # as run (textual, or pass flags)
    binary: str
    self_check: SelfCheck
    weights: Weights
    reduced: bool
    ops_before: int | None
    ops_after: int | None
    reduce_summary: str = ""
    failing_pass: str = ""
    redacted: bool = True
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    blocker: str = ""                # the op whose conversion failed, when found
    reported_op: str = ""            # the op the error names, when that is another one
    responsible_pass: str = ""       # the conversion that should lower the blocker
    fix: str = ""                    # the harness fix that works around it
    triage: str = "new"              # new | known #N | by design (the upstream catalog)
    target_repo: str = "llvm/torch-mlir"

    @property
    def reproduced(self) -> bool:
        return self.self_check.reproduced

    def to_json(self) -> dict:
        """What ``harness report --json`` prints."""
        d = asdict(self)
        d.update(outcome=self.outcome.value, weights=self.weights.value,
                 self_check=self.self_check.to_json(), reproduced=self.reproduced)
        return d

    def render(self) -> list[str]:
        """What ``harness report`` prints."""
        lines = [f"report: {self.folder}", f"archive: {self.archive}", f"title: {self.title}",
                 f"signature: {self.signature}",
                 f"triage: {self.triage}" + ("" if self.triage == "new" else
                                            " (not new: see issue.md's Upstream section)"),
                 f"target repository: {self.target_repo}"]
        if self.blocker:
            named = (f" (the error names {self.reported_op}, left only because of it)"
                     if self.reported_op else "")
            lines.append(f"blocker: {self.blocker}{named}")
            if self.responsible_pass:
                lines.append(f"should be lowered by: {self.responsible_pass}")
            if self.fix:
                lines.append(f"fix (harness): {self.fix}")
        if self.failing_pass:
            lines.append(f"failing pass: {self.failing_pass}")
        if self.reduced:
            lines.append(f"ops: {self.ops_before} -> {self.ops_after} ({self.reduce_summary})")
        else:
            lines.append(f"ops: {self.ops_before if self.ops_before is not None else '?'} (not reduced)")
        lines.append(f"weights: {self.weights.describe()}; "
                     f"paths {'redacted' if self.redacted else 'kept (--no-redact)'}")
        lines.append(f"self-check: {self.self_check.describe()}")
        lines += [f"note: {n}" for n in self.notes]
        return lines


def _jsonable(value):
    """Enums as their values, in a plain dict for the redactor and for readers."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value
