#!/usr/bin/env python3
"""Benchmark: where the time of a numerics check goes, on a tiny OPT (FixedOPT, which lowers).

Steps, measured side by side in one run:
  torch-to-linalg      torch-mlir-opt, torch backend contract -> linalg (context, not RefBackend)
  lower to llvm        linalg-to-llvm on the bindings, in a child process (harness.execute.bindings_tool)
  parse                the LLVM-dialect text into the bindings (in this process)
  jit                  ExecutionEngine: translation to LLVM IR and code generation
  run                  the call itself
  reference            the torch-level function op by op in eager PyTorch
and, for the execution child (the default, isolate=True), its whole wall time against
parse + jit + run in this process: the price of crash isolation.

    python tools/bench_execute.py              # FixedOPT tiny (2 layers, hidden 64)
    python tools/bench_execute.py --config 125m
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="tiny", choices=("tiny", "125m"))
    parser.add_argument("--opt-level", type=int, default=0,
                        help="the ExecutionEngine's LLVM optimization level (default 0, the RefBackend's)")
    args = parser.parse_args()

    from harness.compiler.mlir import WriteOptions, write_module
    from harness.execute.jit import JitModule
    from harness.execute.lowering import run_stage
    from harness.execute.closeness import compare
    from harness.execute.refbackend import RefBackendOptions, execute_llvm, lower_to_llvm
    from harness.execute.signature import read_signature
    from harness.frontends.torchscript import ModuleBuilder, forward_annotator
    from harness.models import catalog

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = catalog.get(f"opt-fixed-{args.config}").build()
    inputs = [t.numpy() for t in traced.examples]
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="harness-bench-execute-") as tmp:
        work = Path(tmp)
        builder = ModuleBuilder()
        builder.import_module(traced.script, forward_annotator(traced.script, list(traced.examples)))
        raw = write_module(builder.module, work / "opt.mlir", WriteOptions(keep_weights=True, bytecode=True))
        backend, linalg, llvm = work / "opt.torch.mlir", work / "opt.linalg.mlir", work / "opt.llvm.mlir"
        assert run_stage(raw, "torchscript-to-torch", output_path=backend).ok

        start = time.perf_counter()
        record = run_stage(backend, "torch-to-linalg", output_path=linalg)
        times["torch-to-linalg"] = time.perf_counter() - start
        assert record.ok, record.stderr

        start = time.perf_counter()
        record = lower_to_llvm(linalg, llvm)
        times["lower to llvm"] = time.perf_counter() - start
        assert record.ok, record.stderr

        signature = read_signature(backend)
        jit = JitModule.load(llvm.read_bytes(), opt_level=args.opt_level)
        outputs = jit.invoke(signature.name, inputs, signature)
        times["parse"], times["jit"], times["run"] = jit.timings.parse_s, jit.timings.jit_s, jit.timings.run_s

        reference = _reference(backend, inputs, times)

        start = time.perf_counter()
        isolated = execute_llvm(llvm, inputs, signature, options=RefBackendOptions(opt_level=args.opt_level),
                                work_dir=work)
        child_s = time.perf_counter() - start
        assert isolated.ok, isolated.error

    verdict = compare(outputs, reference.outputs)
    ops = reference.ops_evaluated
    print(f"FixedOPT {args.config}: {ops} torch ops, inputs {[list(a.shape) for a in inputs]}; "
          f"RefBackend vs reference: {verdict.verdict.value} (max abs diff "
          f"{verdict.outputs[0].max_abs_diff:.2g})")
    _print_times(times, child_s)
    return 0


def _reference(backend: Path, inputs: list, times: dict[str, float]):
    """The reference evaluator on the backend-contract IR, its seconds put in ``times``."""
    from torch_mlir import ir

    from harness.compiler.mlir import new_context
    from harness.execute.reference import evaluate

    with new_context():
        module = ir.Module.parseFile(str(backend))
        start = time.perf_counter()
        reference = evaluate(module.operation, inputs)
        times["reference"] = time.perf_counter() - start
    return reference


def _print_times(times: dict[str, float], child_s: float) -> None:
    """Each step's seconds and share, then the execution child against the in-process steps."""
    total = sum(times.values())
    print(f"{'step':18s} {'seconds':>8s} {'share':>6s}")
    for step, seconds in times.items():
        print(f"{step:18s} {seconds:8.3f} {seconds / total:6.1%}")
    print(f"{'total':18s} {total:8.3f}")
    in_process = times["parse"] + times["jit"] + times["run"]
    print(f"\nexecution child (isolate=True): {child_s:.3f} s wall, against parse + jit + run in this "
          f"process {in_process:.3f} s: {child_s / in_process:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
