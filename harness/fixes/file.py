"""``harness fix FILE -o OUT``: the named torch IR fixes applied to an IR file until its
pipeline passes, each verified, and the fixed IR written.

1. The reference evaluator runs FILE on the inputs (random from its signature, or ``--inputs``):
   the numbers every fix must keep. Weights elided: refused unless ``--no-verify``.
2. :func:`.driver.fix_stages` runs the pipeline's stages, applying only the fixes whose blocker
   appears to the failing stage's input, each checked against the IR before it (eager against
   eager) and rolled back if it changes the numbers.
3. When every stage passes and the last one ends at linalg, the backend (``--backend``: the
   RefBackend by default, or IREE, through :class:`~harness.execute.backend.Backend`) runs the
   result and it is compared with FILE's reference: ``verified`` or ``numerics-mismatch`` (every fix kept the
   numbers in eager, so a mismatch there is the lowering's).

OUT is the input of the last stage a fix was applied to: FILE itself fixed when the fixes went
into the first stage's input (the usual case: ``--pipeline torch-to-linalg`` on IR at the
backend contract), else the output of the stages before it, fixed, and the result says which
pipeline to run OUT through. The work folder keeps every stage's file, each fix's output and
``fix.json`` (schema :data:`SCHEMA`).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from harness.compiler import jsonfile
from harness.compiler.irfile import unique_dir, write_atomically
from harness.compiler.targets import LINALG_LOWERING
from harness.compiler.mlir import parse_ir
from harness.compiler.runner import check_output
from harness.enums import ParsableEnum
from harness.errors import ElidedWeightsError, InputFileError, UsageError
from harness.execute.check import pipeline_stages
from harness.execute.dtypes import TensorSignature
from harness.execute.inputs import RandomInputs, load_npz, random_inputs, save_npz
from harness.execute.closeness import compare
from harness.execute.backend import BackendOptions, run_linalg
from harness.execute.backend_names import DEFAULT_BACKEND, BackendName
from harness.execute.backends import backend as make_backend
from harness.execute.reference import entry_signature
from harness.execute.refbackend import Stage

from .loop import FixOptions, StagesFixed, fix_stages
from .steps import FixVerdict, Method, Verification
from .verify import CANNOT_EVALUATE, ReferenceCache, from_numerics, unverified

if TYPE_CHECKING:
    from torch_mlir import ir

SCHEMA = "harness.fix/1"
#: The stage outputs a backend can take (pipelines.toml names).
LINALG_STAGES = (LINALG_LOWERING,)


class FixOutcome(ParsableEnum):
    VERIFIED = "verified"                    # lowers after the fixes; RefBackend == FILE's reference
    LOWERS = "lowers"                        # lowers after the fixes; numbers not checked (why: detail)
    NUMERICS_MISMATCH = "numerics-mismatch"  # lowers; the RefBackend differs from FILE's reference
    NOTHING_TO_FIX = "nothing-to-fix"        # the pipeline passes on FILE as it is
    FAILS = "fails"                          # a stage still fails: no fix (left) answers its blocker


@dataclass(frozen=True, kw_only=True)
class FileFixOptions:
    pipeline: str = LINALG_LOWERING       # names chained with commas, or one textual pipeline
    fix: FixOptions = FixOptions()
    inputs_path: str | None = None        # .npz of the arguments; None = random from the signature
    random: RandomInputs = RandomInputs()
    function: str | None = None           # entry point; None = the only public function
    out_dir: str | None = None            # parent of the unique work folder (default: temp dir)
    backend: BackendName = DEFAULT_BACKEND  # what runs the fixed, lowered file (backends.BACKENDS)


@dataclass
class FileFixResult:
    input_path: str
    output_path: str                      # "" when nothing was written
    pipeline: str
    outcome: FixOutcome
    run: StagesFixed
    output_stages: list[str] = field(default_factory=list)  # what to run OUT through
    reference: str = ""                   # why FILE's reference could not run ("" when it did)
    final: Verification | None = None     # the backend against FILE's reference
    inputs: str = ""
    work_dir: str = ""
    seconds: float = 0.0
    backend: BackendName = DEFAULT_BACKEND

    @property
    def ok(self) -> bool:
        return self.outcome in (FixOutcome.VERIFIED, FixOutcome.LOWERS, FixOutcome.NOTHING_TO_FIX)

    def render(self) -> list[str]:
        lines = []
        for step in self.run.steps:
            lines += step.render()
        if self.reference:
            lines.append(f"not verified: {self.reference}")
        failed = self.run.failed
        if failed is not None:
            lines.append(f"{self.run.failed_stage} still fails: {failed.signature}")
            for blocker in self.run.remaining:
                lines.append(f"  blocker: {blocker}")
            for name, blocker in self.run.elsewhere:
                lines.append(f"  the fix {name} answers {blocker}, but it changes the nn.Module: "
                             "run it with 'harness port MODEL --fix'")
            if not self.run.steps and not self.run.elsewhere:
                lines.append("  no fix of the catalog answers it ('harness fix --list'); "
                             "'harness explain' says what the op is and where it comes from")
        lines.append(self.headline())
        if self.final is not None:
            lines.append(f"  numbers: {self.final.render()}")
        if self.output_path:
            applied = ", ".join(dict.fromkeys(s.fix for s in self.run.kept)) or "no fix"
            lines.append(f"wrote {self.output_path} ({applied}; run it through "
                         f"{','.join(self.output_stages)})")
        if self.work_dir:
            lines.append(f"files: {self.work_dir}")
        return lines

    def headline(self) -> str:
        through = " and ".join(self.run.stages)
        fixes = ", ".join(dict.fromkeys(s.fix for s in self.run.kept))
        return {
            FixOutcome.VERIFIED: f"verified: with {fixes}, {self.input_path} lowers through {through}, "
                                 f"and {self.backend.said} matches the reference evaluator of the input",
            FixOutcome.LOWERS: f"lowers: with {fixes}, {self.input_path} lowers through {through} "
                               "(numbers not checked against the input)",
            FixOutcome.NUMERICS_MISMATCH: f"numerics-mismatch: with {fixes}, {self.input_path} lowers "
                                          f"through {through}, but {self.backend.said} differs from the "
                                          "input's reference (each fix kept the numbers in eager: "
                                          "the lowering is at fault; 'harness check' on the output)",
            FixOutcome.NOTHING_TO_FIX: f"nothing to fix: {self.input_path} lowers through {through}",
            FixOutcome.FAILS: f"fails: {self.input_path} does not lower through {through}"
                              + (f" even with {fixes}" if fixes else ""),
        }[self.outcome]

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA, "input_path": self.input_path, "output_path": self.output_path,
            "pipeline": self.pipeline, "outcome": self.outcome.value, "backend": self.backend.value,
            "fixes_applied": list(dict.fromkeys(s.fix for s in self.run.kept)),
            "steps": [s.to_json() for s in self.run.steps],
            "stages": [{"stage": s, "input": i, "outcome": r.outcome.value,
                        "signature": str(r.signature)}
                       for s, i, r in zip(self.run.stages, self.run.inputs, self.run.records, strict=False)],
            "remaining_blockers": [b.to_json() for b in self.run.remaining],
            "fixes_elsewhere": [{"fix": n, "answers": b.to_json()} for n, b in self.run.elsewhere],
            "output_stages": self.output_stages, "reference": self.reference,
            "final": self.final.to_json() if self.final else None, "inputs": self.inputs,
            "work_dir": self.work_dir, "seconds": round(self.seconds, 3),
        }


def fix_file(path: str | os.PathLike, output: str | os.PathLike,
             options: FileFixOptions = FileFixOptions(),
             say: Callable[[str], None] | None = None) -> FileFixResult:
    start = time.monotonic()
    path = Path(path)
    _check_output(Path(output), path)
    if options.fix.verify:
        make_backend(options.backend).check()  # IREE missing: said before the stages run
    parsed = _parse(path, options.fix.opt)
    stages = pipeline_stages(options.pipeline)
    folder = unique_dir("harness-fix-", options.out_dir)
    cache, signature, inputs_text, why_not = None, None, "", ""
    if options.fix.verify:
        cache, signature, inputs_text, why_not = _reference(path, parsed, folder, options)
    run = fix_stages(path, stages, folder, stem=path.name.removesuffix(".mlirbc").removesuffix(".mlir"),
                     options=options.fix, cache=cache, say=say)
    result = FileFixResult(str(path), "", options.pipeline, FixOutcome.FAILS, run,
                           reference=why_not, inputs=inputs_text, work_dir=str(folder),
                           backend=options.backend)
    kept = run.kept
    if run.ok and not kept:
        result.outcome = FixOutcome.NOTHING_TO_FIX
        result.output_stages = list(stages)
        _copy(path, Path(output))
        result.output_path = str(output)
    elif kept:
        last = max(stages.index(s.stage) for s in kept)
        result.output_stages = list(stages[last:])
        _copy(Path(run.inputs[last]), Path(output))
        result.output_path = str(output)
    if run.ok and kept:
        result.outcome = FixOutcome.LOWERS
        if cache is not None and stages[-1] in LINALG_STAGES:
            result.final = _final_check(run, cache, signature, path, folder, options)
            if result.final.verdict is FixVerdict.SAME:
                result.outcome = FixOutcome.VERIFIED
            elif result.final.changed:
                result.outcome = FixOutcome.NUMERICS_MISMATCH
        elif cache is not None:
            result.final = unverified(Method.on(options.backend), f"the pipeline ends at {stages[-1]}, "
                                      f"not at linalg-on-tensors, so {options.backend.said} cannot "
                                      "run it")
    result.seconds = time.monotonic() - start
    write_atomically(folder / "fix.json", jsonfile.dumps(result.to_json(), indent=1) + "\n")
    return result


def _check_output(output: Path, path: Path) -> None:
    if output.resolve() == path.resolve():
        raise UsageError(f"-o {output} is the input file; write the fixed IR to another file.")
    if output.is_dir() or not output.parent.is_dir():
        raise UsageError(f"cannot write the fixed IR to {output}: "
                         + ("it is a folder" if output.is_dir() else f"{output.parent} is not a folder")
                         + ". Give -o a file path in an existing folder.")
    check_output(output)  # writable (a probe): fail before the runs, not after them


def _parse(path: Path, opt: str | None) -> tuple[ir.Context, ir.Operation]:
    if not path.is_file():
        raise InputFileError(f"input IR file {path} does not exist or is not a file. Check the path.")
    parsed = parse_ir(path.read_bytes())
    if parsed is None:
        from harness.compiler.mlir import read_module

        parsed = read_module(path, opt=opt)
    if parsed is None:
        raise InputFileError(f"{path} is not MLIR that the bindings or torch-mlir-opt can parse; "
                             "give harness fix an IR file that failed (harness opt, emit and port "
                             "write them).")
    return parsed


def _reference(path: Path, parsed: tuple[ir.Context, ir.Operation], folder: Path,
               options: FileFixOptions) -> tuple[ReferenceCache | None, TensorSignature, str, str]:
    """FILE's reference outputs on the chosen inputs: (cache, signature, description, why not)."""
    context, module = parsed
    with context:
        signature = entry_signature(module, options.function)
    if options.inputs_path is not None:
        inputs, text = load_npz(options.inputs_path, signature), f"from {options.inputs_path}"
    else:
        inputs, text = random_inputs(signature, options.random), options.random.describe()
    save_npz(folder / "inputs.npz", inputs)
    cache = ReferenceCache(inputs, options.function)
    try:
        cache.outputs(path)
    except ElidedWeightsError as e:
        raise UsageError(
            f"{path} has its weights elided (dense_resource<{e.name}> has no data), so no fix "
            "can be checked against its numbers. Write the IR with its weights kept (harness "
            "emit/opt --keep-weights, harness port), or pass --no-verify to fix it unverified."
        ) from None
    except CANNOT_EVALUATE as e:
        return None, signature, text, f"the reference evaluator cannot run {path.name}: {e}"
    return cache, signature, text, ""


def _final_check(run: StagesFixed, cache: ReferenceCache, signature: TensorSignature | None,
                 path: Path, folder: Path, options: FileFixOptions) -> Verification:
    start = time.perf_counter()
    backend = make_backend(options.backend)
    rb = run_linalg(backend, Path(run.output), cache.inputs, signature, folder,
                    BackendOptions(timeout_s=options.fix.timeout_s))
    method = Method.on(backend.name)
    if rb.failed_stage is not None:  # not rb.ok
        failed_at = backend.stage if rb.failed_stage is Stage.LOWERING else rb.failed_stage.value
        return unverified(method, f"{backend.name.said} failed at {failed_at}: "
                          f"{rb.error or (rb.lowering.signature if rb.lowering else '')}",
                          time.perf_counter() - start)
    save_npz(folder / "actual.npz", list(rb.outputs), prefix="result")
    return from_numerics(method,
                         compare(list(rb.outputs), list(cache.outputs(path)), options.fix.tolerances,
                                 cache.wide(path)),
                         time.perf_counter() - start)


def _copy(source: Path, target: Path) -> None:
    write_atomically(target, lambda f: _stream(source, f), binary=True)


def _stream(source: Path, into: IO[bytes]) -> None:
    with open(source, "rb") as f:
        shutil.copyfileobj(f, into)
