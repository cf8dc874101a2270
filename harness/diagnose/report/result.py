"""What a report is made from and what it returns: options, the findings every bundle file is
written from, the self-check, the result, and record.json, each a dataclass."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import ClassVar

from harness.compiler import jsonfile
from harness import defaults
from harness.compiler.binary import OptBinary
from harness.compiler.outcomes import Outcome
from harness.compiler.records import RunRecord
from harness.enums import ParsableEnum as Parsable  # the closed-set base, one for all
from harness.knowledge.upstream_src import SourceLookup

from ..bisect import BisectResult
from ..blockers import BlockerAnalysis
from ..reduce import ReduceResult
from .diagnosis import Diagnosis
from .sections import FxTry, PortEvidence, Provenance, UpstreamVerdict

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


@dataclass(frozen=True)
class SameCauseMember:
    """Another op's failure with the bundle's root cause (``report --each`` groups them,
    ``harness.diagnose.causes``): its reduced IR goes into the bundle as ``file``."""

    ops: tuple[str, ...]             # the op(s) it is about
    signature: str
    reduced_text: str                # its own report's reduced file (self-checked there)
    file: str                        # the bundle's name for it: reduced-2.mlir, ...
    pipeline: str                    # what that file fails through (textual)

    def to_json(self) -> dict:
        return {"ops": list(self.ops), "signature": self.signature, "file": self.file,
                "pipeline": self.pipeline}


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
    lookup: SourceLookup = field(default_factory=SourceLookup)  # --torch-mlir-src, --root-cause-code
    port_evidence: tuple[PortEvidence, ...] = ()  # port and sweep records: frontends, blocks
    same_cause: tuple[SameCauseMember, ...] = ()  # --each: the other ops of this root cause
    title: str = ""                        # --title: the bug in one line, as the project found it
    fx_try: FxTry | None = None           # --module: the FX path run by the report (port.fx_try)
    # TorchScript object-graph input is reduced at its failing pass: its own
    # reduction through torchscript-to-torch barely shrinks it. "never" keeps the user's pipeline.
    at_failing_pass: str = "object-graph"


class BundleKind(Parsable):
    """The three bundle kinds: record.json's and repro.py's ``kind``, one spelling each."""

    COMPILE_FAILURE = "compile-failure"  # a pass fails, crashes or hangs (harness report)
    MISCOMPILE = "miscompile"            # the code runs and computes wrong values (--numerics)
    RUNTIME_FAILURE = "runtime-failure"  # the code dies when it runs (--numerics)

    @property
    def bug(self) -> str:
        """What repro.sh's REPRODUCED_STATUS means for this kind (the self-check's words)."""
        return {BundleKind.COMPILE_FAILURE: "the failure",
                BundleKind.MISCOMPILE: "wrong numbers",
                BundleKind.RUNTIME_FAILURE: "fails at run time the same way"}[self]


class ReproVerdict(Parsable):
    """What one run of a bundle's repro.sh says, by the one rule of every kind
    (:meth:`of_exit`)."""

    REPRODUCED = "reproduced"          # exit REPRODUCED_STATUS
    NOT_REPRODUCED = "not-reproduced"  # exit 0
    CANNOT_TELL = "cannot-tell"        # CANNOT_RUN_STATUS, a signal, any other status, no status

    @classmethod
    def of_exit(cls, status: int | None) -> ReproVerdict:
        """The one rule: REPRODUCED_STATUS reproduces, 0 does not, and anything else (the
        launcher's CANNOT_RUN_STATUS, a crash of bash or Python by a signal, a time-out with no
        status) tells nothing, so it never reads as "fixed" nor as "reproduced"."""
        if status == REPRODUCED_STATUS:
            return cls.REPRODUCED
        if status == 0:
            return cls.NOT_REPRODUCED
        return cls.CANNOT_TELL


@dataclass(frozen=True, kw_only=True)
class SelfCheck:
    """Whether the written bundle reproduces, the same object for every kind: its repro.sh run
    and read by :meth:`ReproVerdict.of_exit`; a compile failure's bundle also replays its IR
    through the runner (``replayed_file``, ``signature``, ``signature_reproduced``)."""

    repro_exit_status: int | None     # None: repro.sh could not start or did not finish
    repro_output: str                 # its verdict lines
    bug: str = BundleKind.COMPILE_FAILURE.bug  # what REPRODUCED_STATUS means (BundleKind.bug)
    detail: str = ""                  # why it could not run
    replayed_file: str = ""           # reduced.mlir | input.mlir ("": no replay, a numerics kind)
    signature: str = ""               # of that file through the pipeline
    signature_reproduced: bool | None = None  # equal to the original run's (None: no replay)

    @property
    def verdict(self) -> ReproVerdict:
        return ReproVerdict.of_exit(self.repro_exit_status)

    @property
    def reproduced(self) -> bool:
        return self.verdict is ReproVerdict.REPRODUCED and self.signature_reproduced is not False

    def describe(self) -> str:
        ran = f"'bash repro.sh' exits {self.repro_exit_status}"
        if self.reproduced:
            same = (f"{self.replayed_file} fails with the same signature and "
                    if self.signature_reproduced else "")
            return f"reproduced: {same}{ran} ({self.bug})"
        parts = []
        if self.signature_reproduced is False:
            parts.append(f"{self.replayed_file} gives '{self.signature}' instead")
        if self.verdict is ReproVerdict.NOT_REPRODUCED:
            parts.append(f"{ran} (it did not detect the bug)")
        elif self.verdict is ReproVerdict.CANNOT_TELL:
            parts.append(self.detail or f"{ran} (it could not tell)")
        return "NOT REPRODUCED: " + "; ".join(parts)

    def to_json(self) -> dict:
        return {**jsonfile.plain(asdict(self)), "verdict": self.verdict.value, "reproduced": self.reproduced}


@dataclass(frozen=True, kw_only=True)
class BundleFindings:
    """What every kind's issue.md and record.json are written from: the fields all three
    share; each kind's subclass adds its own (``Findings``, ``MiscompileFindings``,
    ``RuntimeFindings``). Built once, after the runs, and never changed."""

    kind: ClassVar[BundleKind]
    schema: ClassVar[str]            # record.json's

    src: Path                        # the user's file
    title: str                       # the issue's
    exe: OptBinary
    versions: dict[str, str]         # packages, the binary's, the platform's (build.collect_versions)
    check: SelfCheck                 # the bundle's self-check
    notes: tuple[str, ...] = ()
    redacted: bool = True
    provenance: Provenance = Provenance()  # the frontends tried and what it blocks
    verdict: UpstreamVerdict = UpstreamVerdict()  # the upstream catalog's matches, label, repo

    def header(self) -> dict:
        """record.json's common fields (before redaction), the same keys for every kind."""
        return {"schema": self.schema, "kind": self.kind.value, "title": self.title,
                "input": str(self.src), "versions": dict(self.versions),
                "triage": self.verdict.verdict, "filing": self.verdict.filing,
                "threads": list(self.verdict.threads),
                "broke_valid_ir": self.verdict.broke_valid_ir,
                "target_repo": self.verdict.target_repo, "self_check": self.check.to_json(),
                "notes": list(self.notes)}

    def record(self) -> dict:
        """record.json (before redaction): ``header()`` and the kind's own parts."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class Findings(BundleFindings):
    """A compile failure's findings: the one context of issue.md, repro.sh, backtrace.txt and
    record.json."""

    kind: ClassVar[BundleKind] = BundleKind.COMPILE_FAILURE
    schema: ClassVar[str] = REPORT_SCHEMA

    pipeline_as_given: str           # a name, a textual pipeline or pass flags
    textual: str                     # as run
    signature: str                   # the grouping key of ``original``, cut to a readable length
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
    inline_ir: str | None = None     # the replayed file when small enough to quote
    ir_size: int = 0                 # its size in bytes
    blockers: BlockerAnalysis | None = None  # legalization failures: the op whose conversion failed
    diagnosis: Diagnosis | None = None       # the blocker the report is about
    blocker_reproducer: bool = False         # reduced.mlir is that blocker alone (no reduce run)
    # The bindings tool: the bundle's file through the failing pass alone (what the mlir-opt
    # command of issue.md runs), so that command is stated as checked or not.
    single_pass: RunRecord | None = None
    root_cause: str = ""                   # the Root cause section
    same_cause: tuple[SameCauseMember, ...] = ()  # the other ops' failures of this root cause

    @property
    def failing_pass(self) -> str:
        return self.bisected.failing_pass if self.bisected is not None and self.bisected.found else ""

    def record(self) -> dict:
        """record.json: "report" (the common header and this kind's facts), then every record
        the report was made from."""
        return {"report": {**self.header(), "signature": self.signature,
                           "outcome": self.original.outcome.value, "pipeline": self.textual,
                           "pipeline_as_given": self.pipeline_as_given,
                           "weights": self.weights.value, "redacted": self.redacted},
                "record": self.original.to_json(),
                "bundle_input_record": self.bundle_record.to_json(),
                "bisect": self.bisected.to_json() if self.bisected else None,
                "reduce": _jsonable(asdict(self.reduced)) if self.reduced else None,
                "replay_record": self.replay.to_json(),
                "blockers": self.blockers.to_json() if self.blockers else None,
                "single_pass_record": self.single_pass.to_json() if self.single_pass else None,
                "same_cause": [m.to_json() for m in self.same_cause]}


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
    replay_pipeline: str = ""        # what the reduced file fails through ("": ``pipeline``)
    same_cause: list[str] = field(default_factory=list)  # the other ops the bundle covers
    onnx: str = ""                   # an ONNX op blocker in ONNX's terms (onnx_terms' wording)
    through: list[str] = field(default_factory=list)  # the frontends seen to hit it (onnx, fx)

    @property
    def reproduced(self) -> bool:
        return self.self_check.reproduced

    def to_json(self) -> dict:
        """What ``harness report --json`` prints."""
        d = jsonfile.plain(asdict(self))
        d.update(kind=BundleKind.COMPILE_FAILURE.value, outcome=self.outcome.value,
                 weights=self.weights.value, self_check=self.self_check.to_json(),
                 reproduced=self.reproduced)
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
            if self.onnx:
                lines.append(f"onnx: {self.onnx}")
            if self.responsible_pass:
                lines.append(f"should be lowered by: {self.responsible_pass}")
            if self.fix:
                lines.append(f"fix (harness): {self.fix}")
        if self.failing_pass:
            lines.append(f"failing pass: {self.failing_pass}")
        if self.through:
            lines.append(f"reproduces through: {', '.join(self.through)}")
        if self.reduced:
            lines.append(f"ops: {self.ops_before} -> {self.ops_after} ({self.reduce_summary})")
        else:
            lines.append(f"ops: {self.ops_before if self.ops_before is not None else '?'} (not reduced)")
        lines.append(f"weights: {self.weights.describe()}; "
                     f"paths {'redacted' if self.redacted else 'kept (--no-redact)'}")
        lines.append(f"self-check: {self.self_check.describe()}")
        lines += [f"note: {n}" for n in self.notes]
        return lines


def _jsonable(value: object) -> object:
    """Enums as their values, in a plain dict for the redactor and for readers."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value
