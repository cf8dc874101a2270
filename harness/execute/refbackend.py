"""The project's RefBackend: linalg-on-tensors -> LLVM dialect -> the wheel's ExecutionEngine.

Like upstream's RefBackend (torch_mlir_e2e_test/linalg_on_tensors_backends/refbackend.py), with
what a porting engineer needs on top:

- the lowering is pipelines.toml's ``linalg-to-llvm``, run in a child process on the wheel's MLIR
  Python bindings (torch-mlir-opt lacks upstream's bufferization and LLVM passes), so a failing
  or crashing pass is a ``RunRecord`` with a command to paste, not a traceback;
- the call runs in a child process too by default (``isolate``): a failed runtime check aborts
  and a bad access crashes the process that runs the code;
- every failure is a stage of ``RefBackendResult`` (``refbackend-lowering`` or ``execution``);
- the LLVM file, inputs and outputs stay in a unique folder to rerun by hand.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence

import numpy as np
from torch_mlir.ir import MLIRError

from harness.compiler import jsonfile
from harness import defaults
from harness.compiler.crash import decode_exit_status
from harness.compiler.irfile import unique_dir, write_atomically
from harness.compiler.records import RunRecord
from harness.compiler.runner import RunOptions, execute, shell_command
from harness.enums import ParsableEnum
from harness.errors import HarnessError

from .dtypes import TensorSignature
from .jit import JitModule, check_inputs
from .lowering import LLVM_PIPELINE, Driver, run_stage
from .signature import read_signature


class Stage(ParsableEnum):
    """Where the RefBackend stopped, named as the port's stages are (``PortStage``)."""

    LOWERING = "refbackend-lowering"
    EXECUTION = "execution"

    @classmethod
    def _error(cls) -> type[HarnessError]:
        return HarnessError  # read back from a record

    @classmethod
    def _what(cls) -> str:
        return "RefBackend stage"


@dataclass(frozen=True)
class RefBackendOptions:
    pipeline: str = LLVM_PIPELINE  # lowering to LLVM: a pipelines.toml name or textual (bindings)
    function: str | None = None    # entry point; None = the only public function
    isolate: bool = True           # run the code in a child process (crash, abort -> an outcome)
    # The ExecutionEngine's LLVM optimization level. 0: on FixedOPT tiny, code generation takes
    # 2.2 s at 0, 7.4 s at 1, 9.4 s at 2, 19 s at 3, and the call 12 ms at 0 against 1 ms at 2
    # (tools/bench_execute.py); a check runs the code once. No fast-math either way: the
    # numbers do not depend on it.
    opt_level: int = 0
    # MLIR's runtime op verification (``generate-runtime-verification``, in the pipeline as
    # pipelines.toml defines it): a bad access then aborts naming the op and its line. Off, the
    # pass is left out: every memref op's checks made Gemma 3n's vision tower one function of
    # 215k lines whose code generation took 180 s (MachineRegisterInfo::clearKillFlags is
    # quadratic there) against 8 s without, with the same outputs. The port runs with it again
    # only where a run crashed or mismatched (port/verify.py).
    runtime_checks: bool = False
    timeout_s: float = defaults.TIMEOUT_S  # per child process (lowering, execution)
    work_dir: str | None = None    # parent of the unique folder for files (default: temp dir)


@dataclass
class RefBackendResult:
    function: str
    failed_stage: Stage | None = None
    outputs: tuple[np.ndarray, ...] = ()
    lowering: RunRecord | None = None
    error: str = ""            # why execution failed: the error, or what the child printed
    signal: str = ""           # the signal that ended the execution child
    stderr: str = ""           # all the execution child printed there, when it failed
    llvm_path: str = ""
    work_dir: str = ""
    command: str = ""          # the execution child's command line, to rerun by hand
    seconds: dict[str, float] = field(default_factory=dict)  # lower, parse, jit, run

    @property
    def ok(self) -> bool:
        return self.failed_stage is None

    def to_json(self) -> dict:
        return {
            "function": self.function,
            "ok": self.ok,
            "failed_stage": self.failed_stage.value if self.failed_stage else None,
            "outputs": [{"dtype": str(o.dtype), "shape": list(o.shape)} for o in self.outputs],
            "lowering": self.lowering.to_json() if self.lowering else None,
            "error": self.error,
            "signal": self.signal,
            "stderr": self.stderr,
            "llvm_path": self.llvm_path,
            "work_dir": self.work_dir,
            "command": self.command,
            "seconds": dict(self.seconds),
        }


def lower_to_llvm(linalg_path: str | os.PathLike, llvm_path: str | os.PathLike, *,
                  options: RefBackendOptions = RefBackendOptions()) -> RunRecord:
    """``linalg_path`` through ``options.pipeline`` into ``llvm_path``, on the bindings
    (without MLIR's runtime op verification unless ``options.runtime_checks``)."""
    pipeline = options.pipeline if options.runtime_checks else without_runtime_checks(options.pipeline)
    return run_stage(linalg_path, pipeline, output_path=llvm_path,
                     options=RunOptions(timeout_s=options.timeout_s), driver=Driver.BINDINGS)


#: The pass that adds MLIR's runtime op verification to the lowered code.
RUNTIME_CHECKS_PASS = "generate-runtime-verification"


def without_runtime_checks(pipeline: str) -> str:
    """``pipeline`` (a pipelines.toml name or textual) as text, without :data:`RUNTIME_CHECKS_PASS`."""
    from harness.compiler import pipelines

    textual = pipelines.default().resolve(pipeline)
    return re.sub(rf"(?<=[(,]){re.escape(RUNTIME_CHECKS_PASS)}(?:,|(?=\)))", "", textual).replace(",)", ")")


def execute_llvm(llvm_path: str | os.PathLike, inputs: Sequence[np.ndarray], signature: TensorSignature, *,
                 options: RefBackendOptions = RefBackendOptions(),
                 work_dir: str | os.PathLike | None = None) -> RefBackendResult:
    """Runs ``signature.name`` of a lowered module on ``inputs`` (an InputsError when they do
    not fit the signature; any failure after that is the result's ``execution`` stage)."""
    inputs = [np.asarray(a) for a in inputs]
    check_inputs(inputs, signature.args, "the inputs")
    result = RefBackendResult(signature.name, llvm_path=os.fspath(llvm_path))
    if not options.isolate:
        try:
            jit = JitModule.load(Path(llvm_path).read_bytes(), opt_level=options.opt_level)
            result.outputs = jit.invoke(signature.name, inputs, signature)
        except (RuntimeError, ValueError, MLIRError) as e:  # the engine's own (symbols, lookup, parse)
            result.failed_stage, result.error = Stage.EXECUTION, f"{type(e).__name__}: {e}"
            return result
        result.seconds.update(parse=jit.timings.parse_s, jit=jit.timings.jit_s, run=jit.timings.run_s)
        return result
    folder = Path(work_dir) if work_dir is not None else unique_dir("harness-exec-", options.work_dir)
    call = _ChildCall.write(llvm_path, inputs, signature, options, folder)
    result.work_dir, result.command = str(folder), shell_command(call.command())
    done = execute(call.command(), RunOptions(timeout_s=options.timeout_s, env=_child_env()))
    if done.timed_out or done.returncode != 0:
        result.failed_stage = Stage.EXECUTION
        result.signal = decode_exit_status(done.returncode, done.stderr) if not done.timed_out else ""
        result.stderr = done.stderr
        # what the code printed (a runtime check's message), without faulthandler's Python stack
        printed = (done.stdout + done.stderr).split("Fatal Python error:")[0].strip()
        if done.timed_out:
            result.error = f"timed out after {options.timeout_s:g} s"
        elif result.signal:
            result.error = f"the code died by {result.signal}" + (f": {printed[-2000:]}" if printed else "")
        else:
            result.error = printed[-2000:] or f"exit status {done.returncode}"
        return result
    call.read(result, done.stdout.strip().splitlines()[-1], done.elapsed_s)
    return result


#: What :func:`warm_up` compiles: a few ops of each kind a model's lowered code has (a matmul,
#: elementwise float math that calls libm, a reduction, an integer compare).
WARM_UP_PROGRAM = """\
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module {
  func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %ids: tensor<4x4xi64>)
      -> (tensor<4xf32>, tensor<4x4xi1>) {
    %zero = arith.constant 0.000000e+00 : f32
    %two = arith.constant 2 : i64
    %e = tensor.empty() : tensor<4x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>)
        outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
    %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%m, %ids : tensor<4x4xf32>, tensor<4x4xi64>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%x: f32, %i: i64, %o: f32):
      %ex = math.exp %x : f32
      %th = math.tanh %ex : f32
      %fi = arith.sitofp %i : i64 to f32
      %d = arith.divf %th, %fi : f32
      %s = math.sqrt %d : f32
      %mx = arith.maximumf %s, %x : f32
      linalg.yield %mx : f32
    } -> tensor<4x4xf32>
    %re = tensor.empty() : tensor<4xf32>
    %rf = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
        ins(%t : tensor<4x4xf32>) outs(%rf : tensor<4xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %sum = arith.addf %x, %acc : f32
      linalg.yield %sum : f32
    } -> tensor<4xf32>
    %be = tensor.empty() : tensor<4x4xi1>
    %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%ids : tensor<4x4xi64>) outs(%be : tensor<4x4xi1>) {
    ^bb0(%i: i64, %o: i1):
      %gt = arith.cmpi sgt, %i, %two : i64
      %an = arith.andi %gt, %gt : i1
      linalg.yield %an : i1
    } -> tensor<4x4xi1>
    return %r, %c : tensor<4xf32>, tensor<4x4xi1>
  }
}
"""


def warm_up() -> float:
    """Lowers :data:`WARM_UP_PROGRAM` on the bindings and JIT-compiles it (not run), in this
    process: LLVM's code generation then starts warm in the children forked from it (a sweep's
    warm server: each forked port's execution child JITs its module 0.035 s sooner, tiny
    llama's 0.14 -> 0.10 s). No thread is left behind, no torch op runs, and the engine is
    collected before returning (its callbacks make a cycle; the server freezes what is left).
    Returns the seconds."""
    import gc

    from torch_mlir import passmanager
    from torch_mlir.ir import Module

    from harness.compiler.mlir import new_context

    start = time.perf_counter()
    with new_context(threading=False):
        module = Module.parse(WARM_UP_PROGRAM)
        passmanager.PassManager.parse(without_runtime_checks(LLVM_PIPELINE)).run(module.operation)
        jit = JitModule.from_module(module)
        for name in jit.functions:
            jit.engine.lookup(name)  # the code is generated on the first lookup
        del jit, module
    gc.collect()
    return time.perf_counter() - start


def _child_env() -> dict[str, str]:
    src_root = str(Path(__file__).resolve().parents[2])
    return {"PYTHONPATH": os.pathsep.join(filter(None, [src_root, os.environ.get("PYTHONPATH")]))}


@dataclass(frozen=True)
class _ChildCall:
    """One call's files for ``harness.execute.jit_child``, written into its folder."""

    llvm_path: str
    function: str
    opt_level: int
    inputs_path: Path
    outputs_path: Path
    signature_path: Path

    @classmethod
    def write(cls, llvm_path: str | os.PathLike, inputs: Sequence[np.ndarray], signature: TensorSignature,
              options: RefBackendOptions, folder: Path) -> _ChildCall:
        inputs_path = write_atomically(folder / "inputs.npz", lambda f: np.savez(
            f, allow_pickle=False, **{f"arg{i}": a for i, a in enumerate(inputs)}), binary=True)
        signature_path = write_atomically(folder / "signature.json", jsonfile.dumps(signature.to_json()))
        return cls(os.fspath(llvm_path), signature.name, options.opt_level, Path(inputs_path),
                   folder / "outputs.npz", Path(signature_path))

    def command(self, *more: _ChildCall) -> list[str]:
        """This call's command (the one a reader reruns); with ``more``, theirs in the same child."""
        pairs = [a for c in (self, *more)
                 for a in ("--inputs", str(c.inputs_path), "--outputs", str(c.outputs_path))]
        return [sys.executable, "-m", "harness.execute.jit_child", self.llvm_path, "--function",
                self.function, *pairs, "--signature", str(self.signature_path), "--opt-level",
                str(self.opt_level)]

    def read(self, result: RefBackendResult, timings_line: str, process_s: float) -> None:
        with np.load(self.outputs_path) as npz:
            result.outputs = tuple(npz[f"result{i}"] for i in range(len(npz.files)))
        timings = json.loads(timings_line)
        result.seconds.update(parse=timings["parse_s"], jit=timings["jit_s"], run=timings["run_s"],
                              process=process_s)


def execute_llvm_sets(llvm_path: str | os.PathLike, sets: Sequence[Sequence[np.ndarray]],
                      signature: TensorSignature, work_dirs: Sequence[Path], *,
                      options: RefBackendOptions = RefBackendOptions()) -> list[RefBackendResult]:
    """:func:`execute_llvm` on each of ``sets``, in one child that parses and JITs the module
    once (they are most of a tiny model's run: tiny gpt2's parse 0.14 s and JIT 0.29 s, its call 3 ms).
    Each result is its own set's, with its own one-set command; when the child fails (a crash,
    an abort, the time limit) each set runs again alone, so a failure is its own set's."""
    if len(sets) < 2 or not options.isolate:
        return [execute_llvm(llvm_path, s, signature, options=options, work_dir=w)
                for s, w in zip(sets, work_dirs, strict=True)]
    arrays = [[np.asarray(a) for a in s] for s in sets]
    for inputs in arrays:
        check_inputs(inputs, signature.args, "the inputs")
    calls = [_ChildCall.write(llvm_path, a, signature, options, Path(w))
             for a, w in zip(arrays, work_dirs, strict=True)]
    done = execute(calls[0].command(*calls[1:]), RunOptions(timeout_s=options.timeout_s, env=_child_env()))
    ran = not done.timed_out and done.returncode == 0
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")] if ran else []
    results = []
    for index, (call, inputs, folder) in enumerate(zip(calls, arrays, work_dirs, strict=True)):
        if index < len(lines) and call.outputs_path.is_file():
            result = RefBackendResult(signature.name, llvm_path=os.fspath(llvm_path), work_dir=str(folder),
                                      command=shell_command(call.command()))
            call.read(result, lines[index], done.elapsed_s)
        else:
            result = execute_llvm(llvm_path, inputs, signature, options=options, work_dir=folder)
        results.append(result)
    return results


def run_refbackend(linalg_path: str | os.PathLike, inputs: Sequence[np.ndarray], *,
                   signature: TensorSignature | None = None,
                   options: RefBackendOptions = RefBackendOptions()) -> RefBackendResult:
    """Lowers a linalg-on-tensors file to LLVM and runs it on ``inputs``.

    ``signature`` (from the torch-level function, when there is one) gives the dtypes the
    LLVM module has lost; without it, it is read from ``linalg_path``.
    """
    if signature is None:
        signature = read_signature(linalg_path, options.function)
    folder = unique_dir("harness-refbackend-", options.work_dir)
    llvm_path = folder / f"{Path(linalg_path).name.removesuffix('.mlir')}.llvm.mlir"
    start = time.perf_counter()
    record = lower_to_llvm(linalg_path, llvm_path, options=options)
    lower_s = time.perf_counter() - start
    if not record.ok:
        return RefBackendResult(signature.name, Stage.LOWERING, lowering=record, work_dir=str(folder),
                                seconds={"lower": lower_s})
    result = execute_llvm(llvm_path, inputs, signature, options=options, work_dir=folder)
    result.lowering = record
    result.work_dir = str(folder)
    result.seconds = {"lower": lower_s, **result.seconds}
    return result
