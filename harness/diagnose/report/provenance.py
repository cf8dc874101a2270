"""Each frontend's result for a failure, as the report's Reproduces through section states it:
the paths (``--path``), what ports and an FX try showed (``--port-record``, ``--fx-try``), and
the provenance they add up to. Split out of ``sections`` (which re-exports these names).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from harness.compiler.records import RunRecord
from harness.enums import ParsableEnum


class Through(ParsableEnum):
    """The frontends that reach the failure."""

    NOT_DETERMINED = "not-determined"  # a bare IR file: the PyTorch source is unknown
    TORCHSCRIPT_ONLY = "torchscript-only"
    FX_ONLY = "fx-only"
    BOTH = "both"
    # --module: the TorchScript path hits it; the FX path stops at another failure first, so
    # whether FX would hit this one is not known
    FX_FAILS_DIFFERENTLY = "fx-fails-differently"


class PathOutcome(ParsableEnum):
    """What one frontend's path does with the failure (``report --path FRONTEND=OUTCOME``)."""

    HITS = "hits"                        # the same failure
    PASSES = "passes"
    FAILS_OTHERWISE = "fails-otherwise"  # stops at another failure first
    NOT_TRIED = "not-tried"


@dataclass(frozen=True)
class PathResult:
    """One frontend's result for the failure, as a port or upstream's e2e config showed it; the
    caller names the path (``harness.frontends.names.PATHS``): the report does not branch on
    which frontend it is."""

    frontend: str                        # its name (torchscript, fx, onnx)
    label: str                           # "FX (torch.export + fx_importer)"
    upstream_ci: bool                    # upstream's CI runs an e2e config through it
    outcome: PathOutcome
    detail: str = ""                     # how it was seen ("upstream's fx_importer config passes X")
    note: str = ""                       # said when only paths like this one hit it

    @property
    def short(self) -> str:
        return self.label.split(" ")[0]


@dataclass(frozen=True)
class Provenance:
    """What is known of where the IR came from: the frontends tried, and what the failure stops
    (models, e2e tests, lit tests, from port and sweep records)."""

    through: Through = Through.NOT_DETERMINED
    how: str = ""                     # how it was found ("harness port opt-125m: both frontends")
    blocks: tuple[str, ...] = ()      # model names, e2e test names, lit test paths
    # What the project found of the cause by hand (--root-cause: read from source, lit tests,
    # bisecting releases), which no tool of the report can find; quoted as such in Root cause.
    finding: str = ""
    fx_failure: str = ""              # --module: the FX path's own failure (its stage, signature)
    paths: tuple[PathResult, ...] = ()  # --path: each frontend's result, when shown


@dataclass(frozen=True)
class FxTry:
    """``--module FILE.py:CLASS``: the FX path run by the report itself (torch.export, the
    wheel's fx_importer, then the stages to where the report's pipeline ends). The flow that
    has torch makes it (``harness.port.fx_try``); the report compares it with its failure."""

    source: str                        # "model.py:Net", as given
    stages: tuple[str, ...] = ()       # the FX stages run ("fx-to-torch", "torch-to-linalg")
    failed_stage: str = ""             # the stage that failed ("" when all passed)
    record: RunRecord | None = None    # that stage's run (the last stage's when all passed)
    import_error: str = ""             # torch.export or the FX importer failed: why

    @property
    def passed(self) -> bool:
        return not self.import_error and self.record is not None and self.record.ok

    def failure(self) -> str:
        """The FX path's failure in one line: where it stopped, and its signature."""
        if self.import_error:
            return f"torch.export / fx_importer: {self.import_error}"
        if self.record is None or self.record.ok:
            return ""
        return f"{self.failed_stage}: {self.record.signature}"


def _failure_keys(record: RunRecord) -> set[str]:
    """What names a failure beyond its signature's text: the op it is about (the blocker, the
    op MLIR named, every op left illegal) and, for a crash, its pass and frame."""
    sig = record.signature
    keys = {sig.op, sig.reported, *record.illegal_ops()}
    if sig.pass_name and (sig.frame or sig.assertion):
        keys.add(f"{sig.pass_name}@{sig.frame or sig.assertion}")
    return {k for k in keys if k}


def same_failure(a: RunRecord, b: RunRecord) -> bool:
    """Two runs fail alike: the same signature, or the same op (an op torch.operator names
    counts as that op), or a crash in the same pass at the same frame."""
    if a.ok or b.ok:
        return False
    if str(a.signature) == str(b.signature):
        return True

    def norm(key: str) -> str:  # `torch.operator "aten.x"` and `torch.aten.x` are one op
        return key.replace('torch.operator "', "torch.").rstrip('"')
    return bool({norm(k) for k in _failure_keys(a)} & {norm(k) for k in _failure_keys(b)})


def with_fx_try(base: Provenance, fx: FxTry | None, original: RunRecord) -> Provenance:
    """``base`` with Reproduces through from the report's own FX run (``--module``): the given
    IR is the TorchScript path's; FX hitting the same failure is both, FX passing is
    TorchScript only, FX failing otherwise is said with its failure."""
    if fx is None:
        return base
    ran = " -> ".join(("torch.export", *fx.stages))
    how = f"tried by the report: `{fx.source}` through {ran}"
    if fx.passed:
        through, failure = Through.TORCHSCRIPT_ONLY, ""
    elif fx.record is not None and not fx.import_error and same_failure(original, fx.record):
        through, failure = Through.BOTH, fx.failure()
    else:
        through, failure = Through.FX_FAILS_DIFFERENTLY, fx.failure()
    return Provenance(through, how, base.blocks, base.finding, failure, base.paths)


@dataclass(frozen=True)
class PortEvidence:
    """One frontend's port of one model (from a port or sweep record), as the report reads it."""

    model: str                     # "opt-125m (stock)"
    frontend: str                  # torchscript | fx | onnx
    ops: tuple[str, ...] = ()      # its blockers' ops, the ops MLIR named, their signatures
    reached_pipelines: bool = False  # it got past trace/export and import: a miss means something
    path: PathResult | None = None   # how a report names this frontend's path (its outcome unused)
    locations: tuple[tuple[str, str], ...] = ()  # (op, FILE:LINE): the model's line behind a blocker


def op_lines(evidence: tuple[PortEvidence, ...]) -> dict[str, str]:
    """Each op's Python line as the port and sweep records given (``--port-record``) say:
    where a blocker or a run-time check's op came from in the model."""
    return {op: where for e in evidence for op, where in e.locations}


def with_evidence(base: Provenance, evidence: tuple[PortEvidence, ...], keys: list[str]) -> Provenance:
    """``base`` with Reproduces through and Blocks read off port records: the ports whose
    blockers name one of ``keys`` (the op, the failure's signature) hit it; a frontend whose
    port reached the pipelines without it does not."""
    keys = [k for k in keys if k]
    if not evidence or not keys:
        return base
    hits = [e for e in evidence if any(k == op or k in op for op in e.ops for k in keys)]
    hit = {e.frontend for e in hits}
    missed = {e.frontend for e in evidence if e.reached_pipelines and e.frontend not in hit}
    models = ", ".join(sorted({e.model for e in evidence}))
    how = f"port records of {models}"
    if {"torchscript", "fx"} <= hit:
        through = Through.BOTH
    elif "torchscript" in hit and "fx" in missed:
        through = Through.TORCHSCRIPT_ONLY
    elif "fx" in hit and "torchscript" in missed:
        through = Through.FX_ONLY
    else:
        through = base.through
        how = (f"{how}: {', '.join(sorted(hit)) or 'no frontend'} hits it; the other frontend's "
               "port did not reach the pipelines or did not run")
    blocks = tuple(dict.fromkeys([*base.blocks, *sorted({e.model for e in hits})]))
    seen = _evidence_paths(evidence, hit, missed, models)
    return Provenance(through, how if through is not Through.NOT_DETERMINED or hit else base.how, blocks,
                      base.finding, paths=_merged(base.paths, seen) if base.paths else seen)


def _merged(given: tuple[PathResult, ...], seen: tuple[PathResult, ...]) -> tuple[PathResult, ...]:
    """``given`` (every frontend, in order) with the paths nobody stated filled from ``seen``."""
    by_name = {r.frontend: r for r in seen}
    return tuple(replace(r, outcome=by_name[r.frontend].outcome, detail=by_name[r.frontend].detail)
                 if r.outcome is PathOutcome.NOT_TRIED and r.frontend in by_name else r for r in given)


def _evidence_paths(evidence: tuple[PortEvidence, ...], hit: set[str], missed: set[str],
                    models: str) -> tuple[PathResult, ...]:
    """Each frontend the port records ran, with what it did (when one hit it): hits, passes it
    (its port reached the pipelines without it), or stopped before them."""
    if not hit:
        return ()
    out = []
    for e in {e.frontend: e for e in evidence}.values():
        outcome = (PathOutcome.HITS if e.frontend in hit else PathOutcome.PASSES if e.frontend in missed
                   else PathOutcome.FAILS_OTHERWISE)
        seen = {PathOutcome.HITS: "hits it", PathOutcome.PASSES: "reached the pipelines without it",
                PathOutcome.FAILS_OTHERWISE: "stopped before the pipelines"}[outcome]
        out.append(PathResult(e.frontend, e.path.label if e.path else e.frontend,
                              e.path.upstream_ci if e.path else False, outcome,
                              f"port records of {models}: its port {seen}", e.path.note if e.path else ""))
    return tuple(sorted(out, key=lambda r: not r.upstream_ci))  # upstream's supported paths first
