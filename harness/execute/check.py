"""``harness check``: lower a torch-dialect file, run it on a backend (the RefBackend, or IREE
with ``--backend iree``), and compare with the reference evaluator on the same inputs.

Stages, in data-path order: the pipeline to linalg (torch-mlir-opt), the backend's compile
(``refbackend-lowering``: linalg -> LLVM; ``iree-compile``), ``execution``, ``reference`` (the
file evaluated op by op in eager PyTorch). The backend is reached through its
:class:`~.backend.Backend` (``backends.BACKENDS``), as the port's numbers check reaches it.
The outcome is ``verified``, ``numerics-mismatch``, or ``fails`` at the first stage that failed;
bad input (a missing file, inputs that do not fit, elided weights) raises instead.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from harness import defaults
from harness.compiler.irfile import unique_dir
from harness.compiler.targets import LINALG_LOWERING
from harness.compiler.records import RunRecord, render_record
from harness.compiler.stages import StageHooks, StageOptions, StageResult, run_stages
from harness.compiler.runner import (
    RunOptions,
    repro_command,
    run_pipeline,
    shell_command,
)
from harness.errors import (
    InputFileError,
    ReferenceEvaluationError,
    UnsupportedOpsError,
    UsageError,
)

from .backend import BackendOptions, run_linalg
from .backend_names import DEFAULT_BACKEND, BackendName
from .backends import backend as make_backend
from .dtypes import TensorSignature
from .outcomes import CheckOutcome
from .inputs import RandomInputs, load_npz, random_inputs, save_npz
from .lowering import run_stage
from .closeness import (
    NumericsResult,
    Tolerances,
    compare,
    describe_excluded,
    exclude_positions,
    padding_of,
)
from .refbackend import RefBackendResult, Stage
from .reference import ReferenceOptions, ReferenceResult, entry_signature, evaluate

if TYPE_CHECKING:
    import numpy.typing as npt
    from torch_mlir import ir

SCHEMA = "harness.check/1"
REFERENCE_STAGE = "reference"


@dataclass(frozen=True)
class CheckOptions:
    pipeline: str = LINALG_LOWERING     # FILE -> linalg-on-tensors: a name of ours, upstream's, or textual
    function: str | None = None         # entry point; None = the only public function
    inputs_path: str | None = None      # .npz of the arguments; None = random inputs
    random: RandomInputs = RandomInputs()
    tolerances: Tolerances = Tolerances()
    opt: str | None = None              # torch-mlir-opt for the pipeline (None: $TORCH_MLIR_OPT, the wheel's)
    timeout_s: float = defaults.TIMEOUT_S  # per subprocess
    out_dir: str | None = None          # parent of the unique folder of files (default: temp dir)
    backend: BackendName = DEFAULT_BACKEND  # what compiles and runs the linalg (backends.BACKENDS)
    in_process: bool = False            # the RefBackend's code in this process (IREE refuses it)
    opt_level: int = 0                  # the RefBackend ExecutionEngine's LLVM level (IREE refuses it)
    runtime_checks: bool = False        # the RefBackend's lowering with MLIR's runtime op verification
    # The argument index of an attention mask [batch, seq]: outputs laid out [batch, seq, ...]
    # are compared where it is not 0 (a padded token's row is undefined, as the port does).
    padding_mask: int | None = None


@dataclass
class CheckResult:
    input_path: str
    pipeline: str
    outcome: CheckOutcome
    function: str = ""
    signature: TensorSignature | None = None
    backend: BackendName = DEFAULT_BACKEND
    failed_stage: str = ""
    inputs: str = ""
    records: list[RunRecord] = field(default_factory=list)  # the pipeline stages to linalg
    # The backend's compile and run (the RefBackend's or IREE's; "refbackend" in the JSON, as
    # harness.check/1 has always named it, with "backend" saying which)
    refbackend: RefBackendResult | None = None
    reference: ReferenceResult | None = None
    numerics: NumericsResult | None = None
    error: str = ""                           # a failure without a record (reference, execution)
    excluded: str = ""                        # positions left out (--padding-mask)
    excluded_max_abs_diff: float | None = None  # and what differed there
    work_dir: str = ""
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.outcome is CheckOutcome.VERIFIED

    @property
    def crashed(self) -> bool:
        """The compiled code died at run time (not a lowering or a comparison)."""
        return self.refbackend is not None and self.refbackend.failed_stage is Stage.EXECUTION

    def headline(self) -> str:
        what = f"@{self.function} of {self.input_path}" if self.function else self.input_path
        if self.outcome is CheckOutcome.FAILS:
            return f"fails at {self.failed_stage}: {what}"
        verb = "matches" if self.ok else "differs from"
        ops = f" ({self.reference.ops_evaluated} ops in eager PyTorch)" if self.reference else ""
        return (f"{self.outcome.value}: {what} through {self.pipeline} and {self.backend.said} {verb} "
                f"the reference evaluator{ops}")

    def render(self, crash_commands: Sequence[str] = ()) -> list[str]:
        """The result in lines; ``crash_commands``: the public commands that dig into a crashed
        run (``harness port``'s rule), printed instead of the internal process that ran it."""
        lines = [self.headline()]
        if self.inputs:
            lines.append(f"  inputs: {self.inputs}")
        if self.numerics is not None:
            lines += self.numerics.render()
        if self.excluded:
            there = "" if self.excluded_max_abs_diff is None else \
                f"; largest difference there {self.excluded_max_abs_diff:.3g}"
            lines.append(f"  left out: {self.excluded}{there}")
        if self.reference is not None:
            if self.reference.random_ops:
                lines.append("  note: the function draws random numbers, so its values cannot match: "
                             + "; ".join(self.reference.random_ops[:3]))
            for note in self.reference.type_notes[:5]:
                lines.append(f"  note: {note.render()}")
        failed = self.records[-1] if self.records and not self.records[-1].ok else None
        if failed is not None:
            lines += [f"  {line}" for line in render_record(failed)]
            lines.append(f"  reproduce: {repro_command(failed.pipeline, failed.input_path)}")
        rb = self.refbackend
        if rb is not None and rb.failed_stage is Stage.LOWERING and rb.lowering is not None:
            lines += [f"  {line}" for line in render_record(rb.lowering)]
            lines.append(f"  reproduce: {shell_command(rb.lowering.command)}")
        if self.error:
            lines.append(f"  {self.error}")
        lines += self._crash_lines(crash_commands)
        if self.work_dir:
            lines.append(f"  files: {self.work_dir}")
        if self.seconds:
            lines.append("  seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in self.seconds.items()))
        return lines

    def _crash_lines(self, commands: Sequence[str]) -> list[str]:
        if not self.crashed:
            return []
        if commands:
            return ["  to dig into the crash (the same IR under runtime checks, a minimal IR file "
                    "that still crashes, an upstream bug report):", *(f"    {c}" for c in commands)]
        command = self.refbackend.command if self.refbackend else ""
        return [f"  rerun: {command}"] if command else []  # the backend's own tool (IREE's)

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "input_path": self.input_path,
            "pipeline": self.pipeline,
            "function": self.function,
            "signature": self.signature.to_json() if self.signature else None,
            "outcome": self.outcome.value,
            "backend": self.backend.value,
            "failed_stage": self.failed_stage,
            "inputs": self.inputs,
            "records": [r.to_json() for r in self.records],
            "refbackend": self.refbackend.to_json() if self.refbackend else None,
            "reference": self.reference.to_json() if self.reference else None,
            "numerics": self.numerics.to_json() if self.numerics else None,
            "error": self.error,
            "excluded": self.excluded,
            "excluded_max_abs_diff": _json_number(self.excluded_max_abs_diff),
            "work_dir": self.work_dir,
            "seconds": dict(self.seconds),
        }


def flatten_outputs(values: Iterable[object]) -> list:
    """Tensors of a function's results, tuples and lists flattened in order."""
    out: list = []
    for value in values:
        if isinstance(value, (tuple, list)):
            out += flatten_outputs(value)
        else:
            out.append(value)
    return out


def _parse(path: Path) -> tuple[ir.Context, ir.Module]:
    from torch_mlir import ir

    from .context import bindings_context

    context = bindings_context()
    with context:
        try:
            return context, ir.Module.parseFile(os.fspath(path))
        except ir.MLIRError as e:
            raise InputFileError(
                f"cannot parse {path}: {str(e).splitlines()[0][:300]}. harness check takes "
                "torch-dialect IR (imported, or at the torch backend contract)."
            ) from None


def check_file(path: str | os.PathLike, options: CheckOptions = CheckOptions()) -> CheckResult:
    path = Path(path)
    if not path.is_file():
        raise InputFileError(f"input IR file {path} does not exist or is not a file. Check the path.")
    backend = make_backend(options.backend)
    backend_options = BackendOptions(timeout_s=options.timeout_s, in_process=options.in_process,
                                     opt_level=options.opt_level, runtime_checks=options.runtime_checks)
    backend.check(backend_options)  # missing, or asked what it cannot do: before anything runs
    context, module = _parse(path)
    with context:
        signature = entry_signature(module.operation, options.function)
    result = CheckResult(str(path), options.pipeline, CheckOutcome.FAILS, function=signature.name,
                         signature=signature, backend=backend.name)
    if options.inputs_path is not None:
        inputs = load_npz(options.inputs_path, signature)
        result.inputs = f"from {options.inputs_path}"
    else:
        inputs = random_inputs(signature, options.random)
        result.inputs = options.random.describe()
    padded = _padding(inputs, options.padding_mask)
    folder = unique_dir("harness-check-", options.out_dir)
    result.work_dir = str(folder)
    save_npz(folder / "inputs.npz", inputs)

    # The reference first: elided weights (bad input) show before any lowering runs.
    start = time.perf_counter()
    reference_error = ""
    try:
        with context:
            result.reference = evaluate(module.operation, inputs, ReferenceOptions(function=signature.name))
    except (UnsupportedOpsError, ReferenceEvaluationError) as e:
        reference_error = str(e)
    wide = _float64(context, module.operation, inputs, signature.name) if result.reference else None
    result.seconds[REFERENCE_STAGE] = time.perf_counter() - start

    start = time.perf_counter()
    ran = _to_linalg(path, folder, options)
    result.records += [r.record for r in ran]
    result.seconds["pipeline"] = time.perf_counter() - start
    if not ran[-1].ok:
        result.failed_stage = ran[-1].name
        return result
    linalg = Path(ran[-1].output_path)

    result.refbackend = run_linalg(backend, linalg, inputs, signature, folder, backend_options)
    for key, seconds in result.refbackend.seconds.items():
        result.seconds[{"lower": backend.stage, "process": "execution"}.get(key, key)] = seconds
    failed = result.refbackend.failed_stage  # None when it ran (its `ok`)
    if failed is not None:
        result.failed_stage = backend.stage if failed is Stage.LOWERING else failed.value
        result.error = result.refbackend.error
        if failed is Stage.LOWERING:
            _blame_the_contract(result, linalg, options)
        return result
    if result.reference is None:  # evaluate raised: reference_error says why
        save_npz(folder / "actual.npz", list(result.refbackend.outputs), prefix="result")
        result.failed_stage, result.error = REFERENCE_STAGE, reference_error
        return result
    result.numerics, result.excluded, result.excluded_max_abs_diff = _compared(
        list(result.refbackend.outputs), flatten_outputs(result.reference.outputs), padded, folder,
        options.tolerances, wide)
    result.outcome = CheckOutcome.VERIFIED if result.numerics.ok else CheckOutcome.NUMERICS_MISMATCH
    return result


def _to_linalg(path: Path, folder: Path, options: CheckOptions) -> list[StageResult]:
    """``options.pipeline``'s stages on ``path``, their files in ``folder``; with runtime checks,
    with the IR's own locations, so that a failed check's ``Location:`` is its source (a Python
    line, an ONNX node: ``loc("node_softmax")``), not a line of the stage's file."""
    def run(input_path: Path, stage: str, _textual: str, out: Path, run_options: RunOptions) -> RunRecord:
        return run_stage(input_path, stage, output_path=out, opt=options.opt, options=run_options)

    return run_stages(path, pipeline_stages(options.pipeline), folder,
                      stem=path.name.removesuffix(".mlir"),
                      options=StageOptions(opt=options.opt, timeout_s=options.timeout_s,
                                           debug_info=options.runtime_checks),
                      hooks=StageHooks(run=run))


def _float64(context: ir.Context, module_op: ir.Operation, inputs: list, function: str) -> list | None:
    """The file evaluated again in float64 (float inputs widened; weights stay the float32
    values they are): what the float64 rule judges float outputs against. None when it does
    not evaluate so (a float32-only kernel): the flat tolerance decides."""
    try:
        with context:
            found = evaluate(module_op, inputs, ReferenceOptions(function=function, check_types=False,
                                                                 widen=True))
    except Exception:  # no float64 opinion
        return None
    return flatten_outputs(found.outputs)


def _compared(actual: list, expected: list, padded: np.ndarray | None, folder: Path, tolerances: Tolerances,
              wide: list | None = None) -> tuple[NumericsResult, str, float | None]:
    """actual.npz and expected.npz written, then the comparison (by the float64 rule where
    ``wide`` has the file's float64 evaluation), padded positions left out: the report, what
    was left out ("" when no mask was given) and its largest difference."""
    save_npz(folder / "actual.npz", actual, prefix="result")
    save_npz(folder / "expected.npz", [_numpy(v) for v in expected], prefix="result")
    excluded_text, excluded_diff = "", None
    if padded is not None:
        if wide is not None:
            wide, _, _ = exclude_positions(wide, expected, padded)
        actual, expected, excluded = exclude_positions(actual, expected, padded)
        if excluded is None:
            excluded_text = "nothing: no floating-point output is laid out [batch, seq, ...]"
        else:
            excluded_text, excluded_diff = describe_excluded(excluded[0]), excluded[1]
    return compare(actual, expected, tolerances, wide), excluded_text, excluded_diff


def _padding(inputs: list, index: int | None) -> np.ndarray | None:
    """The padded positions of ``--padding-mask INDEX`` (None when nothing is padded)."""
    if index is None:
        return None
    if not 0 <= index < len(inputs) or np.asarray(_numpy(inputs[index])).ndim != 2:
        shapes = ", ".join(f"{i}: {list(np.shape(_numpy(a)))}" for i, a in enumerate(inputs))
        raise UsageError(f"--padding-mask {index} must name a 2-D [batch, seq] argument of the "
                         f"function; its arguments are {shapes or 'none'}.")
    return padding_of(inputs[index])


def pipeline_stages(spec: str) -> list[str]:
    """``torchscript-to-torch,torch-to-linalg``: names of ours (or upstream's) chained with
    commas run one after the other; a textual pipeline is one stage."""
    spec = spec.strip()
    if "(" in spec or spec.startswith("-") or "," not in spec:
        return [spec]
    return [s.strip() for s in spec.split(",") if s.strip()]


def _blame_the_contract(result: CheckResult, linalg: Path, options: CheckOptions) -> None:
    """When the RefBackend cannot lower the pipeline's output, say so if that output is not
    linalg-on-tensors at all (torch-mlir's own contract verifier decides): the fix is then the
    ``--pipeline``, not the RefBackend."""
    record = run_pipeline(linalg, "builtin.module(torch-verify-linalg-on-tensors-backend-contract)",
                          opt=options.opt, options=RunOptions(timeout_s=options.timeout_s))
    if record.ok:
        return
    first = record.first_error()
    result.failed_stage = pipeline_stages(options.pipeline)[-1]
    result.error = (
        f"the output of {options.pipeline} is not at the linalg-on-tensors backend contract "
        f"(torch-verify-linalg-on-tensors-backend-contract: {first.message if first else record.signature}), "
        f"so {result.backend.said} cannot compile it. End --pipeline at linalg, e.g. "
        "--pipeline torchscript-to-torch,torch-to-linalg for imported TorchScript.")


def _numpy(value: torch.Tensor | npt.ArrayLike) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().float().numpy() if value.dtype == torch.bfloat16 else value.detach().numpy()
    return np.asarray(value)


def _json_number(x: float | None) -> float | str | None:
    """JSON has no inf/nan: they are written as strings."""
    return x if x is None or math.isfinite(x) else str(x)
