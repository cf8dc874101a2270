"""IREE as a :class:`~harness.execute.backend.Backend`: ``iree-compile`` for the llvm-cpu target
(or a CUDA GPU's, ``--device cuda``: harness.execute.iree_device), then ``iree-run-module`` on
each input set, both from the ``[iree]`` extra (``iree-base-compiler``, ``iree-base-runtime``),
each in its own process with a time limit.

IREE takes each target's contract the way its users hand it over, not the harness's linalg:
linalg-on-tensors and StableHLO as torch-mlir prints them, TOSA in MLIR's generic form (IREE
3.13 does not parse the short form the wheel's TOSA prints, e.g. ``tosa.const_shape``). So an
IREE result on TOSA or StableHLO checks IREE's own input conversion, as a deployment would.

Every command is kept (the record's, and each run's folder), and pastes and runs as shown.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from harness.compiler.crash import decode_exit_status, parse_crash
from harness.compiler.records import RunRecord, parse_diagnostics
from harness.compiler.runner import RunOptions, classify, execute, run_pipeline, shell_command
from harness.compiler.targets import Target
from harness.errors import HarnessEnvironmentError, UsageError

from .backend import BackendOptions, Compiled, Lowered, TestcaseSet
from .backend_names import BackendName, Device
from .iree_device import CPU, IreeDevice, check_target, cuda_missing, iree_device
from .jit import check_inputs
from .refbackend import RefBackendResult, Stage
from .signature import read_signature

#: The llvm-cpu target, for the CPU of the machine that compiles (a test case compiles where it
#: runs), and its runtime device: what ``harness reduce --iree-compile`` compiles for.
COMPILE_FLAGS = CPU.compile_flags
RUN_DEVICE = CPU.run_device
#: On a failure, MLIR's header of the IR after the pass that failed names that IREE pass
#: (``IR Dump After FoldUnitExtentDimsPass Failed: iree-dispatch-creation-fold-unit-extent-dims``),
#: read as torch-mlir-opt's is; its constants elided, so the dump stays small. Nothing on success.
FAILURE_DUMP = ("--mlir-print-ir-after-failure", "--mlir-elide-elementsattrs-if-larger=16")

#: How IREE is told what a target's contract is (linalg: IREE's default input).
INPUT_TYPES = {Target.LINALG: (), Target.STABLEHLO: ("--iree-input-type=stablehlo",),
               Target.TOSA: ("--iree-input-type=tosa",)}

MISSING = ("the iree backend needs IREE's compiler and runtime ({tool} was not found next to this "
           "Python, {python}, nor on PATH). Install them with pip install -e '.[iree]' (pins "
           "iree-base-compiler and iree-base-runtime 3.13.0), or leave iree out of --backend.")


def tool(name: str) -> str:
    """An IREE tool of this Python's environment (the extra's console scripts), else PATH's."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise HarnessEnvironmentError(MISSING.format(tool=name, python=sys.executable))
    return found


class IreeBackend:
    """IREE's llvm-cpu target and its local-task runtime, or its cuda target and driver."""

    name = BackendName.IREE
    stage = "iree-compile"
    checked_runs = False
    searchable = False
    child_modules: tuple[str, ...] = ()  # iree-compile and iree-run-module: binaries of their own

    def search_runner(self, *, timeout_s: float, work_dir: str | os.PathLike | None) -> None:
        """The search lowers and runs on the RefBackend: it cannot speak for IREE's values."""
        return None

    def needs_linalg(self, target: Target) -> bool:
        """IREE takes TOSA and StableHLO through its own input conversions."""
        return target is Target.LINALG

    def check(self, options: BackendOptions = BackendOptions()) -> None:
        if options.in_process:
            raise UsageError(
                "--in-process runs the compiled code in the harness's own process, which only the "
                "RefBackend can (its ExecutionEngine is a library the harness loads); IREE runs "
                "each input set with iree-run-module, a process of its own, so a crash there is "
                "already an outcome. Leave --in-process out with --backend iree, or use "
                "--backend refbackend.")
        if options.opt_level:
            raise UsageError(
                f"--opt-level {options.opt_level} sets the LLVM optimization level of the "
                "RefBackend's ExecutionEngine; IREE compiles with iree-compile's own levels, which "
                "the harness does not set (its llvm-cpu defaults, as the port runs them). Leave "
                "--opt-level out with --backend iree, or use --backend refbackend.")
        if options.runtime_checks:
            raise UsageError(
                "--runtime-checks lowers with MLIR's runtime op verification, a pass of the "
                "RefBackend's lowering to LLVM; IREE compiles with its own pipeline, which has no "
                "such checks. Leave --runtime-checks out with --backend iree, or use --backend "
                "refbackend.")
        if options.device is Device.CUDA and options.cuda_target:
            check_target(options.cuda_target)
        tool("iree-compile")
        tool("iree-run-module")

    def unavailable(self, options: BackendOptions = BackendOptions()) -> str:
        """A CUDA port on a machine whose IREE runtime lists no CUDA GPU: compiled, not run."""
        if options.device is not Device.CUDA:
            return ""
        missing = cuda_missing(tool("iree-run-module"))
        return f"compiled for {_device(options).label}; not run: {missing}" if missing else ""

    def compile(self, lowered: Lowered, folder: Path, options: BackendOptions) -> Compiled:
        signature = lowered.signature or read_signature(lowered.contract_ir)
        vmfb = folder / f"{lowered.stem}.{lowered.target.value}.vmfb"
        given = source = lowered.linalg if lowered.target is Target.LINALG else lowered.target_ir
        if lowered.target is Target.TOSA:
            source = _generic(source, folder / f"{lowered.stem}.tosa.generic.mlir", options)
        record = compile_record(source, lowered.target, vmfb, options.timeout_s, _device(options))
        return Compiled(self.stage, record, vmfb, signature, rerun=record.command,
                        reduce_words=(str(given), "--iree-compile", lowered.target.value))

    def run_sets(self, compiled: Compiled, sets: Sequence[Sequence[np.ndarray]],
                 works: Sequence[Path], options: BackendOptions) -> list[RefBackendResult]:
        return [self._run(compiled, [np.asarray(a) for a in inputs], Path(work), options)
                for inputs, work in zip(sets, works, strict=True)]

    def _run(self, compiled: Compiled, inputs: list[np.ndarray], work: Path,
             options: BackendOptions) -> RefBackendResult:
        signature = compiled.signature
        check_inputs(inputs, signature.args, "the inputs")
        np.savez(work / "inputs.npz", allow_pickle=False,  # as the RefBackend's: harness check --inputs
                 **{f"arg{i}": a for i, a in enumerate(inputs)})
        arguments = []
        for i, array in enumerate(inputs):
            path = work / f"input{i}.npy"
            np.save(path, array, allow_pickle=False)
            arguments.append(f"--input=@{path}")
        outputs = [work / f"output{i}.npy" for i in range(len(signature.results))]
        cmd = [tool("iree-run-module"), _device(options).run_device, f"--module={compiled.artifact}",
               f"--function={signature.name}", *arguments, *(f"--output=@{o}" for o in outputs)]
        result = RefBackendResult(signature.name, work_dir=str(work), command=shell_command(cmd))
        done = execute(cmd, RunOptions(timeout_s=options.timeout_s))
        result.seconds["run"] = done.elapsed_s
        if done.timed_out or done.returncode != 0 or not all(o.is_file() for o in outputs):
            result.failed_stage, result.stderr = Stage.EXECUTION, done.stderr
            result.signal = decode_exit_status(done.returncode, done.stderr) if not done.timed_out else ""
            printed = (done.stdout + done.stderr).strip()
            result.error = (f"timed out after {options.timeout_s:g} s" if done.timed_out else
                            printed[-2000:] or f"exit status {done.returncode}")
            return result
        result.outputs = tuple(np.load(o, allow_pickle=False) for o in outputs)
        return result

    def testcase(self, compiled: Compiled, sets: Sequence[TestcaseSet], folder: Path,
                 tolerance: tuple[float, float]) -> Path | None:
        """``folder``/run.sh and what it reads: the module IREE compiled (``module.mlir``), per set
        ``NAME/inputN.npy`` and ``NAME/expectedN.npy`` (eager PyTorch's outputs) and
        ``NAME.flagfile`` for iree-run-module (``--expected_output`` with the harness's flat
        tolerance: exit 1 on a mismatch). Relative paths only: the folder moves as it is."""
        rtol, atol = tolerance
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(compiled.record.input_path, folder / "module.mlir")
        flags = [f for f in compiled.record.command[1:-3]]  # between the tool and SOURCE -o VMFB
        # the device it was compiled for (the flags say it): a CUDA module runs on the cuda driver
        device = RUN_DEVICE if "--iree-hal-target-device=cuda" not in flags else "--device=cuda"
        lines = ["#!/bin/sh", "# An IREE test case written by torch-mlir-harness: IREE's own tools, nothing "
                 "else (pip install iree-base-compiler==3.13.0 iree-base-runtime==3.13.0).",
                 "# Exit 0: every set matches eager PyTorch's outputs (rtol "
                 f"{rtol:g}, atol {atol:g}); 1: a set does not.",
                 "# That is IREE's flat rule; the harness's verdict is the float64 rule's, which "
                 "also passes float32 rounding of large values this rule can refuse.",
                 "set -e", 'cd "$(dirname "$0")"',
                 shlex.join(["iree-compile", *flags, "module.mlir", "-o", "module.vmfb"])]
        for each in sets:
            (folder / each.name).mkdir(exist_ok=True)
            run = ["--module=module.vmfb", device, f"--function={compiled.signature.name}",
                   f"--expected_f32_threshold={atol:g}", f"--expected_f64_threshold={atol:g}",
                   f"--expected_rtol={rtol:g}"]
            for i, array in enumerate(each.inputs):
                np.save(folder / each.name / f"input{i}.npy", np.asarray(array), allow_pickle=False)
                run.append(f"--input=@{each.name}/input{i}.npy")
            for i, array in enumerate(each.expected):
                np.save(folder / each.name / f"expected{i}.npy", np.asarray(array), allow_pickle=False)
                run.append(f"--expected_output=@{each.name}/expected{i}.npy")
            (folder / f"{each.name}.flagfile").write_text("\n".join(run) + "\n")
            lines.append(shlex.join(["iree-run-module", f"--flagfile={each.name}.flagfile"]))
        script = folder / "run.sh"
        script.write_text("\n".join(lines) + "\n")
        script.chmod(0o755)
        return script

    def explain_failure(self, compiled: Compiled, lowered: Lowered,
                        sets: Sequence[tuple[str, Sequence[np.ndarray]]], folder: Path,
                        budget_s: float) -> RefBackendResult | None:
        """IREE's runtime has no op-level checks to rerun with: the run's own error stands."""
        return None

    def checked_run(self, compiled: Compiled, lowered: Lowered, which: str,
                    inputs: Sequence[np.ndarray], folder: Path, budget_s: float) -> RefBackendResult | None:
        """No checks to run with (as :meth:`explain_failure`)."""
        return None


def _device(options: BackendOptions) -> IreeDevice:
    return iree_device(options.device, options.cuda_target)


def _generic(source: Path, out: Path, options: BackendOptions) -> Path:
    return generic_form(source, out, options.timeout_s)


def generic_form(source: Path, out: Path, timeout_s: float) -> Path:
    """``source`` printed in MLIR's generic form by torch-mlir-opt (what IREE's TOSA input
    parses); ``source`` itself when that fails (IREE's parse error then says why)."""
    record = run_pipeline(source, "builtin.module()", options=RunOptions(
        timeout_s=timeout_s, output_path=str(out),
        extra_args=("--mlir-print-op-generic", "--mlir-print-debuginfo")))
    return out if record.ok else source


def compile_record(source: Path, target: Target, vmfb: Path, timeout_s: float,
                   device: IreeDevice = CPU) -> RunRecord:
    """``iree-compile`` of ``source`` (the ``target`` contract; TOSA in the generic form) for
    ``device`` (llvm-cpu unless said), as a run record: its diagnostics, crash and signature read
    as torch-mlir-opt's are, so the tools that read those (the blockers, ``reduce``) read IREE's."""
    compiler = tool("iree-compile")
    cmd = [compiler, *INPUT_TYPES[target], *device.compile_flags, *FAILURE_DUMP, str(source), "-o", str(vmfb)]
    done = execute(cmd, RunOptions(timeout_s=timeout_s))
    diagnostics = parse_diagnostics(done.stderr)
    crash = parse_crash(done.stderr, returncode=done.returncode, at_timeout=done.timed_out)
    outcome = classify(done.returncode, done.stderr, crash, diagnostics, timed_out=done.timed_out)
    return RunRecord(outcome=outcome, command=cmd, pipeline=f"iree-compile {device.label}",
                     input_path=str(source), binary=compiler, returncode=done.returncode,
                     elapsed_s=done.elapsed_s, stderr=done.stderr,
                     output_path=str(vmfb) if done.returncode == 0 else "",
                     signal=crash.signal if crash is not None and not crash.at_timeout else "",
                     diagnostics=diagnostics, crash=crash if outcome.is_crash else None)


def compile_test(target: Target) -> Callable[[Path, float], RunRecord]:
    """What ``harness reduce --iree-compile TARGET`` runs each candidate through: the file as
    IREE takes it (TOSA reprinted in the generic form, which IREE's TOSA input parses), then
    iree-compile; the record names the candidate, not the reprint."""
    def run(path: Path, timeout_s: float) -> RunRecord:
        source = path
        if target is Target.TOSA:
            source = generic_form(path, path.with_name(path.stem + ".generic.mlir"), timeout_s)
        record = compile_record(source, target, path.with_name(path.stem + ".vmfb"), timeout_s)
        return replace(record, input_path=str(path))
    return run
