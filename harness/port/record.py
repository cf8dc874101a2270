"""The record of one ``harness port``: what a sweep, a board and the fixes read back.

One JSON document per MODEL (``--json FILE``, and ``record.json`` in the port's folder), schema
:data:`SCHEMA`. Dataclasses over enums, numbers and lists, importing nothing that loads torch or the
bindings, so any reader can load a record without them. The README documents
every field; a reader checks ``schema`` and refuses a major version it does not know.

In memory every closed set is its enum and every difference a float (``inf``/``nan`` too); the
JSON is made at the edge (:meth:`PortRecord.to_json`, :meth:`PortRecord.from_json`), where enums
are their values, ``inf``/``nan`` strings, and a stage not reached ``""``.

Shape: a record holds the model's variants (OPT has two: the stock model and FixedOPT; every
other model one), and each variant holds one port per frontend, side by side.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from dataclasses import dataclass, field, fields
from enum import Enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, TypeVar

from harness.compiler import jsonfile
from harness.compiler.outcomes import Outcome
from harness.compiler.targets import Target
from harness.execute.backend_names import BackendName, Device
from harness.fixes.steps import FixStep
from harness.enums import ParsableEnum
from harness.errors import HarnessError, InputFileError
from harness.frontends.names import FrontendName
from harness.models.choice import Variant
from harness.models.hf_resolve import SourceKind
from harness.models.modality import Modality

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

#: 1.1 (stop 43): each port names its target (``target``: linalg, tosa, stablehlo) and backend
#: (``backend``: refbackend, iree); a record without them is linalg's on the RefBackend, which
#: were the only ones.
SCHEMA = "harness.port/1.1"


class PortOutcome(ParsableEnum):
    """How far one frontend's port got."""

    VERIFIED = "verified"                    # lowered, and the RefBackend matches eager
    NUMERICS_MISMATCH = "numerics-mismatch"  # lowered, and the RefBackend's numbers differ
    # lowered and the numbers match, but an input the model's modality needs was not made: a
    # part of the model (an image tower) never ran, so "verified" would claim what was not checked
    PARTIAL = "partial"
    LOWERED = "lowered"                      # reached its last stage; numbers not checked
    FAILS = "fails"                          # stopped at a stage (failed_stage says which)


class PortStage(ParsableEnum):
    """The stages of a port, in order; a frontend runs the ones on its path."""

    TRACE = "trace"                          # torch.jit.trace (TorchScript)
    EXPORT = "export"                        # torch.export (FX, and ONNX's start)
    ONNX_EXPORT = "onnx-export"              # torch.onnx.export of that program (ONNX)
    IMPORT = "import"                        # the frontend's importer, IR written
    TORCHSCRIPT_TO_TORCH = "torchscript-to-torch"
    FX_TO_TORCH = "fx-to-torch"
    ONNX_TO_TORCH = "onnx-to-torch"          # torch-onnx-to-torch-backend-pipeline
    TORCH_TO_LINALG = "torch-to-linalg"
    TORCH_TO_TOSA = "torch-to-tosa"          # --target tosa (harness.compiler.targets)
    TOSA_TO_LINALG = "tosa-to-linalg"        # TOSA on to linalg, as upstream's e2e checks it
    TORCH_TO_STABLEHLO = "torch-to-stablehlo"
    STABLEHLO_TO_LINALG = "stablehlo-to-linalg"
    REFBACKEND_LOWERING = "refbackend-lowering"
    IREE_COMPILE = "iree-compile"            # --backend iree (harness.execute.backend_iree)
    EXECUTION = "execution"


#: The stages that are torch-mlir pipelines (the rest run in Python or on the RefBackend).
PIPELINE_STAGES = frozenset({PortStage.TORCHSCRIPT_TO_TORCH, PortStage.FX_TO_TORCH,
                             PortStage.ONNX_TO_TORCH,
                             PortStage.TORCH_TO_LINALG, PortStage.TORCH_TO_TOSA,
                             PortStage.TOSA_TO_LINALG, PortStage.TORCH_TO_STABLEHLO,
                             PortStage.STABLEHLO_TO_LINALG})


class StageError(ParsableEnum):
    """The one way a stage ends that is not a pipeline's :class:`Outcome`: an exception in Python
    (trace, export, import, the RefBackend)."""

    IN_PYTHON = "error"


#: How a stage ended: a pipeline's RunRecord outcome, or :attr:`StageError.IN_PYTHON` (the JSON
#: holds the value: "success", "legalization-failure", ..., "error").
StageOutcome: TypeAlias = Outcome | StageError


def parse_stage_outcome(value: str | StageOutcome) -> StageOutcome:
    """A stage's outcome from its value (a record read back) or itself."""
    if isinstance(value, (Outcome, StageError)):
        return value
    try:
        return StageError.parse(value)
    except HarnessError:
        return Outcome.parse(value)


class InputSetName(ParsableEnum):
    """Which input set a numbers check ran on."""

    TRACED = "traced"                        # the set the model was traced or exported with
    SECOND = "second"                        # other values (padded where the model pads)


class CheckedRun(ParsableEnum):
    """A set's run again under MLIR's runtime op verification, after a set crashed."""

    PASSED = "passed"    # it ran, no check failed
    FAILED = "failed"    # a runtime check failed (the check's error names the op)
    CRASHED = "crashed"  # it died otherwise (a signal, no check failed)


def _optional_checked_run(value: object) -> CheckedRun | None:
    return CheckedRun.parse(value) if value else None  # type: ignore[arg-type]


def _optional_stage(value: object) -> PortStage | None:
    return PortStage.parse(value) if value else None  # type: ignore[arg-type]


def _optional_float(value: object) -> float | None:
    """A difference, or None; JSON's "inf" / "nan" strings read as floats."""
    return None if value is None else float(value)  # type: ignore[arg-type]


class PassSource(ParsableEnum):
    """Where a blocker's failing pass was read."""

    CRASH_STACK = "crash-stack"              # the crash's stack names its pass
    AFTER_FAILURE_DUMP = "after-failure-dump"  # MLIR's --mlir-print-ir-after-failure header
    BISECT = "bisect"                        # harness bisect's run of the pipeline

    @property
    def said(self) -> str:
        return {PassSource.CRASH_STACK: "the crash's stack",
                PassSource.AFTER_FAILURE_DUMP: "MLIR's after-failure dump",
                PassSource.BISECT: "bisect"}[self]


def _optional_source(value: object) -> PassSource | None:
    """A record written before the field was kept, or a blocker with no failing pass: None; a
    source as the port says it ("MLIR's after-failure dump") is its member too."""
    if not value:
        return None
    said = next((m for m in PassSource if m.said == value), None)
    return said or PassSource.parse(value)  # type: ignore[arg-type]


class _Typed:
    """A record whose closed sets are enums however they are set: each field named in
    ``_COERCE`` is parsed on every assignment (the constructor's too), so a value, its string
    (a record read back, a caller's literal) or a bad one (an error here) never leaks in."""

    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        convert = self._COERCE.get(name)
        object.__setattr__(self, name, value if convert is None else convert(value))


@dataclass
class StageRecord(_Typed):
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"name": PortStage.parse,
                                                          "outcome": parse_stage_outcome}

    name: PortStage
    ok: bool
    seconds: float
    outcome: StageOutcome = Outcome.SUCCESS
    output: str = ""       # the file the stage wrote
    detail: str = ""       # why it failed, in one line
    command: str = ""      # a backend's compile, as it ran (iree-compile ...): pastes and runs



@dataclass
class Blocker(_Typed):
    """What stops a frontend: an op no pass lowers (not the op left over because of it), a
    crash, or an error in Python (trace, export, import)."""
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"stage": PortStage.parse,
                                                          "failing_pass_from": _optional_source}


    rank: int                      # 1 = the first to fix (most occurrences first)
    stage: PortStage
    signature: str                 # the grouping key: equal keys are the same bug
    op: str = ""                   # the op whose conversion failed
    count: int = 0                 # how many of it the failing pass left
    location: str = ""             # Python FILE:LINE of the op (or of the raising frame)
    frames: list[str] = field(default_factory=list)  # FILE:LINE, innermost first
    called_from: str = ""          # the model's own line that reaches it (from the trace)
    message: str = ""              # the diagnostic or exception, one line
    reported_op: str = ""          # the op MLIR's diagnostic named, when it is a symptom
    symptoms: list[str] = field(default_factory=list)  # ops left only because of this one
    failing_pass: str = ""         # the pass that failed (its argument, or a crash's class)
    failing_pass_from: PassSource | None = None  # where it was read (None: an older record)
    converted_by: list[str] = field(default_factory=list)  # conversions that lower it alone
    hint: str = ""                 # a known idiom's fix: "NAME: TEXT"
    fixes: list[str] = field(default_factory=list)  # harness.knowledge.fixes names that answer it
    lowering: str = ""             # which conversion lowers it (the replayed passes), one line
    explanation: str = ""          # what the harness knows of this failure (import blockers)
    reproducer: str = ""           # a one-op IR file that fails the same way alone
    inputs: str = ""               # a run-time crash: the input sets it dies on, and those it runs on



@dataclass
class OutputDiff(_Typed):
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {
        "max_abs_diff": float, "max_rel_diff": float, "float64_rms": _optional_float,
        "eager_float64_rms": _optional_float, "float64_max_abs_diff": _optional_float,
        "eager_float64_max_abs_diff": _optional_float, "float64_scale_rms": _optional_float,
        "float64_scale_max": _optional_float, "float64_ratio": _optional_float,
        "float64_worst_ratio": _optional_float, "float64_bias": _optional_float}

    index: int
    name: str              # the model output's name (last_hidden_state, ...)
    dtype: str
    shape: list[int]
    max_abs_diff: float    # inf / nan included (strings in the JSON: it has neither)
    max_rel_diff: float
    mismatched: int
    total: int
    tolerance: str         # "rtol 0.0001, atol 1e-05" or "exact"
    problem: str = ""      # a shape or dtype difference
    # The float64 rule (closeness.FloatNoise), which decides for a float output when eager runs
    # in float64: the errors against eager in float64 (rms, worst element) of the compiled
    # output and of float32 eager itself, their ratios, the error's bias (mean signed error over
    # rms), and the output's scale (the float64 value's rms and largest magnitude). None: not
    # judged so (an integer output, no float64 run); records before stop 42 hold the errors only
    # where the flat tolerance was missed.
    float64_rms: float | None = None
    eager_float64_rms: float | None = None
    float64_max_abs_diff: float | None = None
    eager_float64_max_abs_diff: float | None = None
    float64_scale_rms: float | None = None
    float64_scale_max: float | None = None
    float64_ratio: float | None = None
    float64_worst_ratio: float | None = None
    float64_bias: float | None = None



@dataclass
class NumericsCheck(_Typed):
    """The RefBackend's outputs against eager PyTorch on one input set."""
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {
        "inputs": InputSetName.parse, "verdict": PortOutcome.parse, "max_abs_diff": float,
        "max_rel_diff": float, "program_max_abs_diff": _optional_float,
        "excluded_max_abs_diff": _optional_float, "runtime_checks": _optional_checked_run}


    inputs: InputSetName
    description: str       # what the set is (padded mask, other ids)
    verdict: PortOutcome   # VERIFIED or NUMERICS_MISMATCH; FAILS: the run died (error)
    max_abs_diff: float
    max_rel_diff: float
    outputs: list[OutputDiff] = field(default_factory=list)
    problem: str = ""      # a mismatch of the whole result (number of outputs)
    # The imported program (the trace, the exported graph) run in PyTorch against eager:
    # a difference here is frozen into the program, not made by torch-mlir. None: not run.
    program_max_abs_diff: float | None = None
    program_failed: bool = False  # the program did not run on these inputs ("error" in the JSON)
    # The program judged against eager by the same rule as the compiled module (the float64
    # rule): an ONNX file in onnxruntime is never bit-exact. None: not judged (older records).
    program_ok: bool | None = None
    inputs_file: str = ""  # the .npz the backend ran on
    run_command: str = ""  # the backend's run on this set, as it ran (iree-run-module ...)
    # Positions left out of the comparison: padded tokens (attention_mask 0), whose rows attend
    # to no key, so what they hold is undefined (eager's own attention implementations disagree
    # there). Their largest difference is still recorded.
    excluded: str = ""
    excluded_max_abs_diff: float | None = None
    padding_mask: int | None = None  # the mask's argument index (harness check --padding-mask)
    culprit: str = ""          # the one op that computes wrong: op, line, own difference (or why none)
    # Where the float64 rule and the flat tolerance disagree, the rule's numbers per output:
    # verified although off the tolerance (float32 rounding of large values), or a mismatch
    # within it (a wrong constant). "" when they agree.
    float_noise: str = ""
    culprit_command: str = ""  # `harness check` of its one-op reproducer
    # Under the culprit: its call (operands, constants spelled out) and its error's profile by
    # the float64 rule (rms and max against float64, noise ratio, bias, worst elements).
    culprit_detail: list[str] = field(default_factory=list)
    # A set whose run died (verdict FAILS): what it printed, one line (a failed runtime check
    # names the op); its differences are nan. "" when it ran.
    error: str = ""
    # When a set crashed, every set runs again with MLIR's runtime op verification: how that run
    # ended (None: not run, or the backend has no such checks), so "the other set runs" is said
    # of the same checked code.
    runtime_checks: CheckedRun | None = None



@dataclass
class DynamicDims:
    """``--dynamic``: what was asked and what stayed dynamic through the port."""

    asked: list[str] = field(default_factory=list)    # seq=2..512, as given (capped)
    # INPUT.AXIS (NAME) still ? at the torch backend contract
    contract: list[str] = field(default_factory=list)
    linalg: list[str] = field(default_factory=list)    # INPUT.AXIS (NAME) still ? in the linalg signature
    static: list[str] = field(default_factory=list)    # INPUT.AXIS (NAME) = SIZE: asked, but static there
    frozen: list[str] = field(default_factory=list)    # FILE:LINE: why the frontend froze a size


@dataclass
class FrontendPort(_Typed):
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {
        "frontend": FrontendName.parse, "outcome": PortOutcome.parse, "reached": _optional_stage,
        "failed_stage": _optional_stage, "target": Target.parse, "backend": BackendName.parse,
        "device": Device.parse}

    frontend: FrontendName
    outcome: PortOutcome
    reached: PortStage | None = None       # the last stage that succeeded
    failed_stage: PortStage | None = None
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
    fixes: list[FixStep] = field(default_factory=list)  # --fix: each fix tried (harness.fixes)
    dynamic: DynamicDims | None = None  # --dynamic: which dimensions stayed dynamic (None: static port)
    not_run: str = ""      # PARTIAL: the part of the model its inputs left unrun, and why
    target: Target = Target.LINALG  # the backend contract it was lowered to (and checked through)
    backend: BackendName = BackendName.REFBACKEND  # what compiled and ran it
    testcase: str = ""     # --iree-testcase: the backend's own test case (its run.sh), "" for none
    device: Device = Device.CPU  # --device: where the backend ran it (cuda: IREE on a GPU)
    # LOWERED on a backend: compiled for a device this machine lacks, and why it did not run
    # ("IREE's runtime finds no CUDA GPU ..."): no number is claimed for it
    unrun: str = ""

    @property
    def path(self) -> str:
        """The port's name among its variant's ports: the frontend's (``fx``) on the default
        target and backend, with the others added (``fx-tosa``, ``fx-iree``,
        ``fx-stablehlo-iree``). The board's column, the sweep's key and file names use it, so
        records of linalg-only RefBackend ports read as they always did."""
        parts = [self.frontend.value]
        if self.target is not Target.LINALG:
            parts.append(self.target.value)
        if self.backend is not BackendName.REFBACKEND:
            parts.append(self.backend.value)
        if self.device is not Device.CPU:
            parts.append(self.device.value)
        return "-".join(parts)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.stages)

    def stage_seconds(self) -> dict[str, float]:
        return {s.name.value: s.seconds for s in self.stages}


@dataclass
class VariantRecord(_Typed):
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"variant": Variant.parse}

    variant: Variant
    name: str              # gpt2, opt-fixed: titles and folder names
    settings: dict[str, Any] = field(default_factory=dict)  # what was built, sizes, inputs
    config: dict[str, Any] = field(default_factory=dict)    # the config's non-default fields
    sentences: list[str] = field(default_factory=list)      # the settings, as read by people
    build_seconds: float = 0.0
    ports: list[FrontendPort] = field(default_factory=list)



@dataclass
class PortRecord(_Typed):
    _COERCE: ClassVar[dict[str, Callable[[Any], Any]]] = {"source": SourceKind,
                                                          "modality": Modality.parse}

    model: str             # MODEL as given
    source: SourceKind
    model_type: str
    options: dict[str, Any] = field(default_factory=dict)   # size, batch, seq, frontends, ...
    versions: dict[str, str] = field(default_factory=dict)  # packages and torch-mlir-opt
    variants: list[VariantRecord] = field(default_factory=list)
    folder: str = ""
    seconds: float = 0.0   # the port itself, from its options' checks to its record
    startup_seconds: float = 0.0  # the process before the port began (its imports): not in seconds
    modality: Modality = Modality.UNKNOWN  # what the traced inputs carry (the board's groups)
    build: str = ""        # the named torch-mlir-opt build that ran (--opt NAME), "" for a path
    # The harness cannot drive the model (UnsupportedModelError): its whole refusal, what to do
    # included; the record then has no variants, and a sweep shows the model as unsupported.
    unsupported: str = ""
    schema: str = SCHEMA


    def ports(self) -> list[tuple[VariantRecord, FrontendPort]]:
        return [(v, p) for v in self.variants for p in v.ports]

    @property
    def ok(self) -> bool:
        """Every port verified (or lowered, where numerics were not asked for); a partial
        port is not."""
        return bool(self.ports()) and all(
            p.outcome in (PortOutcome.VERIFIED, PortOutcome.LOWERED) for _, p in self.ports())

    def to_json(self) -> dict[str, Any]:
        data = _jsonable(self)
        return {"schema": data.pop("schema"), **data}

    @classmethod
    def from_json(cls, data: object) -> PortRecord:
        """``data``: JSON as read, whatever it holds (a list or a number is refused here too)."""
        document: dict[str, Any] = data if isinstance(data, dict) else {}
        schema = document.get("schema", "")
        name, _, version = str(schema).partition("/")
        ours, _, ours_version = SCHEMA.partition("/")
        if (name, version.split(".")[0]) != (ours, ours_version.split(".")[0]):
            raise InputFileError(
                f"not a port record of schema {SCHEMA}: its schema is {schema!r}. Write it again "
                "with this version's 'harness port --json FILE'.")
        try:
            return _build(cls, document,
                          variants=[_variant(v) for v in document.get("variants", [])])
        except (HarnessError, KeyError, TypeError, ValueError, AttributeError) as e:
            raise InputFileError(f"not a valid port record ({SCHEMA}): {str(e).rstrip('.')}. Write "
                                 "it again with this version's 'harness port --json FILE'.") from None

    def write(self, path: str | os.PathLike) -> None:
        from harness.compiler.irfile import write_atomically

        write_atomically(path, jsonfile.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def read(cls, path: str | os.PathLike) -> PortRecord:
        try:
            data = jsonfile.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise InputFileError(f"cannot read the port record {path}: {e}.") from None
        return cls.from_json(data)


def _float_out(x: float | None) -> float | str | None:
    return x if x is None or math.isfinite(x) else str(x)


_FLOATS = {"max_abs_diff", "max_rel_diff", "excluded_max_abs_diff"}


def _jsonable(value: Any) -> Any:
    """The record as JSON data: enums by value, inf/nan as strings, a stage not reached as ""."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, FixStep):
        return value.to_json()  # its own JSON (the module a fix made is not the record's)
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # strict JSON: no bare Infinity/NaN (browsers' JSON.parse and jq refuse them)
    if not hasattr(value, "__dataclass_fields__"):
        return value
    out: dict[str, Any] = {}
    for f in fields(value):
        item = getattr(value, f.name)
        if f.name == "program_failed":
            continue
        if f.name in _FLOATS:
            out[f.name] = _float_out(item)
        elif f.name == "program_max_abs_diff":
            out[f.name] = "error" if value.program_failed else _float_out(item)
        elif f.name in ("reached", "failed_stage"):
            out[f.name] = "" if item is None else _jsonable(item)
        else:
            out[f.name] = _jsonable(item)
    return out


_Record = TypeVar("_Record", bound="DataclassInstance")


#: What a record's JSON may hold for a field declared with each plain type (a float may be
#: written as "inf"/"nan"; ``bool`` is an ``int`` to Python, so it is kept apart).
_PLAIN = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,)}


def typed_fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The fields of dataclass ``cls`` in a record's ``data`` (unknown keys dropped), each of a
    plain type checked: another kind of value (a forged or damaged record: a list for the
    model's name, "fast" for its seconds) is a TypeError, which the reader turns into one
    paragraph naming the file, not a crash further on. A float written as "inf"/"nan" reads
    back as the float."""
    declared = {f.name: str(f.type) for f in fields(cls)}
    out: dict[str, Any] = {}
    for name, value in data.items():
        if name not in declared:
            continue
        out[name] = value
        kinds = [k.strip() for k in declared[name].split("|")]
        if any(k not in _PLAIN and k != "None" for k in kinds):
            continue  # an enum, a list, a nested record: read by its own parser
        if value is None and "None" in kinds:
            continue
        if isinstance(value, str) and "str" not in kinds and "float" in kinds \
                and value in jsonfile.NON_FINITE:
            out[name] = jsonfile.number(value)
            continue
        allowed = tuple(t for k in kinds for t in _PLAIN.get(k, ()))
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            raise TypeError(f"{cls.__name__}.{name} is {type(value).__name__} {value!r:.60}, "
                            f"not {declared[name]}")
    return out


def _build(cls: type[_Record], data: dict[str, Any], **nested: Any) -> _Record:
    """``cls`` from a record's fields (:func:`typed_fields`); ``nested``: the fields its own
    parsers read (checked there), which replace the raw ones unchecked."""
    return cls(**{**typed_fields(cls, {k: v for k, v in data.items() if k not in nested}),
                  **nested})


def _variant(data: dict[str, Any]) -> VariantRecord:
    return _build(VariantRecord, data, ports=[_port(p) for p in data.get("ports", [])])


def _numerics(data: dict[str, Any]) -> NumericsCheck:
    program = data.get("program_max_abs_diff")
    return _build(NumericsCheck, data, program_max_abs_diff=None if program == "error" else program,
                  program_failed=program == "error",
                  outputs=[_build(OutputDiff, o) for o in data.get("outputs", [])])


def _port(data: dict[str, Any]) -> FrontendPort:
    return _build(FrontendPort, data,
                  stages=[_build(StageRecord, s) for s in data.get("stages", [])],
                  blockers=[_build(Blocker, b) for b in data.get("blockers", [])],
                  numerics=[_numerics(n) for n in data.get("numerics", [])],
                  fixes=[FixStep.from_json(f) for f in data.get("fixes", [])],
                  dynamic=_build(DynamicDims, data["dynamic"]) if data.get("dynamic") else None)
