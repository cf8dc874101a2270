"""The record of one ``harness port``: what a sweep, a board and the fixes read back.

One JSON document per MODEL (``--json FILE``, and ``record.json`` in the port's folder), schema
:data:`SCHEMA`. Plain dataclasses over strings, numbers and lists, importing nothing but the
leaves, so any reader can load a record without torch or the bindings. The README documents
every field; a reader checks ``schema`` and refuses a major version it does not know.

Shape: a record holds the model's variants (OPT has two: the stock model and FixedOPT; every
other model one), and each variant holds one port per frontend, side by side.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from harness.enums import ParsableEnum
from harness.errors import InputFileError

SCHEMA = "harness.port/1"


class PortOutcome(ParsableEnum):
    """How far one frontend's port got."""

    VERIFIED = "verified"                    # lowered, and the RefBackend matches eager
    NUMERICS_MISMATCH = "numerics-mismatch"  # lowered, and the RefBackend's numbers differ
    LOWERED = "lowered"                      # reached its last stage; numbers not checked
    FAILS = "fails"                          # stopped at a stage (failed_stage says which)


class PortStage(ParsableEnum):
    """The stages of a port, in order; a frontend runs the ones on its path."""

    TRACE = "trace"                          # torch.jit.trace (TorchScript)
    EXPORT = "export"                        # torch.export (FX)
    IMPORT = "import"                        # the frontend's importer, IR written
    TORCHSCRIPT_TO_TORCH = "torchscript-to-torch"
    FX_TO_TORCH = "fx-to-torch"
    TORCH_TO_LINALG = "torch-to-linalg"
    REFBACKEND_LOWERING = "refbackend-lowering"
    EXECUTION = "execution"


@dataclass
class StageRecord:
    name: str              # a PortStage value
    ok: bool
    seconds: float
    outcome: str = "success"  # a pipeline's RunRecord outcome; "error" / "timeout" in Python
    output: str = ""       # the file the stage wrote
    detail: str = ""       # why it failed, in one line


@dataclass
class Blocker:
    """What stops a frontend: an op no pass lowers (not the op left over because of it), a
    crash, or an error in Python (trace, export, import)."""

    rank: int                      # 1 = the first to fix (most occurrences first)
    stage: str
    signature: str                 # the grouping key: equal keys are the same bug
    op: str = ""                   # the op whose conversion failed
    count: int = 0                 # how many of it the failing pass left
    location: str = ""             # Python FILE:LINE of the op (or of the raising frame)
    frames: list[str] = field(default_factory=list)  # FILE:LINE, innermost first
    called_from: str = ""          # the model's own line that reaches it (from the trace)
    message: str = ""              # the diagnostic or exception, one line
    reported_op: str = ""          # the op MLIR's diagnostic named, when it is a symptom
    symptoms: list[str] = field(default_factory=list)  # ops left only because of this one
    failing_pass: str = ""         # bisect: the pass that failed
    converted_by: list[str] = field(default_factory=list)  # conversions that lower it alone
    hint: str = ""                 # a known idiom's fix: "NAME: TEXT"
    fixes: list[str] = field(default_factory=list)  # harness.knowledge.fixes names that answer it
    lowering: str = ""             # which conversion lowers it (the replayed passes), one line
    explanation: str = ""          # what the harness knows of this failure (import blockers)
    reproducer: str = ""           # a one-op IR file that fails the same way alone


@dataclass
class OutputDiff:
    index: int
    name: str              # the model output's name (last_hidden_state, ...)
    dtype: str
    shape: list[int]
    max_abs_diff: float | str  # "inf" / "nan" as strings: JSON has neither
    max_rel_diff: float | str
    mismatched: int
    total: int
    tolerance: str         # "rtol 0.0001, atol 1e-05" or "exact"
    problem: str = ""      # a shape or dtype difference


@dataclass
class NumericsCheck:
    """The RefBackend's outputs against eager PyTorch on one input set."""

    inputs: str            # "traced" or "second"
    description: str       # what the set is (padded mask, other ids)
    verdict: str           # verified | numerics-mismatch
    max_abs_diff: float | str
    max_rel_diff: float | str
    outputs: list[OutputDiff] = field(default_factory=list)
    problem: str = ""      # a mismatch of the whole result (number of outputs)
    # The imported program (the trace, the exported graph) run in PyTorch against eager:
    # a difference here is frozen into the program, not made by torch-mlir. None: not run.
    program_max_abs_diff: float | str | None = None
    inputs_file: str = ""  # the .npz the RefBackend ran on
    # Positions left out of the comparison: padded tokens (attention_mask 0), whose rows attend
    # to no key, so what they hold is undefined (eager's own attention implementations disagree
    # there). Their largest difference is still recorded.
    excluded: str = ""
    excluded_max_abs_diff: float | str | None = None
    padding_mask: int | None = None  # the mask's argument index (harness check --padding-mask)


@dataclass
class FrontendPort:
    frontend: str          # torchscript | fx
    outcome: str           # a PortOutcome value
    reached: str = ""      # the last stage that succeeded
    failed_stage: str = ""
    stages: list[StageRecord] = field(default_factory=list)
    blockers: list[Blocker] = field(default_factory=list)
    numerics: list[NumericsCheck] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)  # the next steps, ready to paste
    reproduce: str = ""    # the failing pipeline stage rerun: the binary that ran, pasteable
    contract: str = ""     # what the last pipeline reached promises (pipelines.toml output)
    signature: str = ""    # the public functions at that level, read through the bindings
    folder: str = ""
    notes: list[str] = field(default_factory=list)
    diagnosis_seconds: float = 0.0  # blockers and bisect on a failing pipeline (not a stage)
    fixes: list[dict[str, Any]] = field(default_factory=list)  # --fix: each fix tried (harness.fixes)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.stages)

    def stage_seconds(self) -> dict[str, float]:
        return {s.name: s.seconds for s in self.stages}


@dataclass
class VariantRecord:
    variant: str           # stock | fixed
    name: str              # gpt2, opt-fixed: titles and folder names
    settings: dict[str, Any] = field(default_factory=dict)  # what was built, sizes, inputs
    config: dict[str, Any] = field(default_factory=dict)    # the config's non-default fields
    sentences: list[str] = field(default_factory=list)      # the settings, as read by people
    build_seconds: float = 0.0
    ports: list[FrontendPort] = field(default_factory=list)


@dataclass
class PortRecord:
    model: str             # MODEL as given
    source: str            # type | directory | opt
    model_type: str
    options: dict[str, Any] = field(default_factory=dict)   # size, batch, seq, frontends, ...
    versions: dict[str, str] = field(default_factory=dict)  # packages and torch-mlir-opt
    variants: list[VariantRecord] = field(default_factory=list)
    folder: str = ""
    seconds: float = 0.0
    schema: str = SCHEMA

    def ports(self) -> list[tuple[VariantRecord, FrontendPort]]:
        return [(v, p) for v in self.variants for p in v.ports]

    @property
    def ok(self) -> bool:
        """Every port verified (or lowered, where numerics were not asked for)."""
        return bool(self.ports()) and all(
            PortOutcome.parse(p.outcome) in (PortOutcome.VERIFIED, PortOutcome.LOWERED)
            for _, p in self.ports())

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data = {"schema": data.pop("schema"), **data}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PortRecord:
        schema = data.get("schema", "") if isinstance(data, dict) else ""
        name, _, version = str(schema).partition("/")
        if (name, version.split(".")[0]) != tuple(SCHEMA.split("/")):
            raise InputFileError(
                f"not a port record of schema {SCHEMA}: its schema is {schema!r}. Write it again "
                "with this version's 'harness port --json FILE'.")
        variants = [_variant(v) for v in data.get("variants", [])]
        return _build(cls, data, variants=variants)

    def write(self, path: str | os.PathLike) -> None:
        from harness.compiler.irfile import write_atomically

        write_atomically(path, json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def read(cls, path: str | os.PathLike) -> PortRecord:
        try:
            data = json.loads(open(path, encoding="utf-8").read())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InputFileError(f"cannot read the port record {path}: {e}.") from None
        return cls.from_json(data)


def _build(cls, data: dict[str, Any], **nested):
    known = {f.name for f in fields(cls)}
    return cls(**{**{k: v for k, v in data.items() if k in known}, **nested})


def _variant(data: dict[str, Any]) -> VariantRecord:
    return _build(VariantRecord, data, ports=[_port(p) for p in data.get("ports", [])])


def _port(data: dict[str, Any]) -> FrontendPort:
    PortOutcome.parse(data["outcome"])
    return _build(
        FrontendPort, data,
        stages=[_build(StageRecord, s) for s in data.get("stages", [])],
        blockers=[_build(Blocker, b) for b in data.get("blockers", [])],
        numerics=[_build(NumericsCheck, n, outputs=[_build(OutputDiff, o) for o in n.get("outputs", [])])
                  for n in data.get("numerics", [])])
