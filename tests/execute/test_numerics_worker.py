"""The RefBackend worker: one child that lowers and runs many programs, and survives what the
code does (an abort, a hang). Real torch-mlir-opt, real bindings, real ExecutionEngine; expected
values from numpy."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

from harness.compiler import pipelines
from harness.execute.levels import join
from harness.execute.lowering import run_stage
from harness.execute.refbackend import Stage
from harness.execute.signature import read_signature
from harness.execute.worker import RefBackendWorker
from harness.compiler.pipeline_text import parse_pipeline

# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
DYNAMIC_ADD = """
func.func @forward(%a: !torch.vtensor<[?],f32>, %b: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.int -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}
"""  # noqa: E501

# A loop that never ends, at the linalg level (scf is part of it): its value is used, so no
# cleanup removes it, and it counts up to +inf, which stays >= 1.
HANG = """
func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %r = scf.while (%acc = %one) : (f32) -> f32 {
    %go = arith.cmpf oge, %acc, %one : f32
    scf.condition(%go) %acc : f32
  } do {
  ^bb0(%a: f32):
    %n = arith.addf %a, %one : f32
    scf.yield %n : f32
  }
  %t = tensor.insert %r into %x[%c0] : tensor<2xf32>
  return %t : tensor<2xf32>
}
"""


def to_linalg(tmp_path, torch_ir: str):
    src = tmp_path / "m.torch.mlir"
    src.write_text(textwrap.dedent(torch_ir))
    backend, out = tmp_path / "m.backend.mlir", tmp_path / "m.linalg.mlir"
    for stage, a, b in (("function-to-torch", src, backend), ("torch-to-linalg", backend, out)):
        assert run_stage(a, stage, output_path=b).ok
    return out, read_signature(src)


def test_many_runs_in_one_child_and_an_abort_costs_one_request(tmp_path):
    linalg, signature = to_linalg(tmp_path, DYNAMIC_ADD)
    a, b = np.arange(3, dtype=np.float32), np.full(3, 2, np.float32)
    with RefBackendWorker(work_dir=tmp_path) as worker:
        first = worker.run(linalg, [a, b], signature)
        assert first.ok and first.outputs[0].tolist() == [2.0, 3.0, 4.0]
        pid = worker._proc.pid
        again = worker.run(linalg, [b, b], signature)
        assert again.ok and again.outputs[0].tolist() == [4.0, 4.0, 4.0]
        assert worker._proc.pid == pid  # the same child served both
        # Sizes 3 and 4: torch-to-linalg's shape check aborts the code, and the child with it.
        bad = worker.run(linalg, [a, np.ones(4, np.float32)], signature)
        assert bad.failed_stage is Stage.EXECUTION
        assert "SIGABRT" in bad.error and "mismatched size for broadcast" in bad.error
        after = worker.run(linalg, [a, a], signature)
        assert after.ok and after.outputs[0].tolist() == [0.0, 2.0, 4.0]
        assert worker._proc.pid != pid  # a new child
        assert worker.runs == 4


def test_a_lowering_error_and_a_hang_are_results(tmp_path):
    src = tmp_path / "dyn.torch.mlir"
    src.write_text(DYNAMIC_ADD)
    hang = tmp_path / "hang.mlir"
    hang.write_text(HANG)
    with RefBackendWorker(work_dir=tmp_path, timeout_s=20) as worker:
        # torch-level IR is not linalg: the bufferization refuses it, with its diagnostic
        refused = worker.run(src, [np.ones(2, np.float32)] * 2, read_signature(src))
        assert refused.failed_stage is Stage.LOWERING
        assert "unknown memory side effects" in refused.error
        hung = worker.run(hang, [np.ones(2, np.float32)], read_signature(hang))
        assert hung.failed_stage is Stage.EXECUTION and hung.error == "timed out after 20 s"
        linalg, signature = to_linalg(tmp_path, DYNAMIC_ADD)
        assert worker.run(linalg, [np.ones(2, np.float32)] * 2, signature).ok


def test_variants_are_lowered_from_one_parse_and_told_apart(tmp_path):
    linalg, signature = to_linalg(tmp_path, DYNAMIC_ADD)
    passes = pipelines.default().get("linalg-to-llvm").passes
    full = join(parse_pipeline(f"builtin.module({','.join(passes)})"))

    def without(name):
        return join(parse_pipeline(f"builtin.module({','.join(p for p in passes if p != name)})"))

    no_shape = without("convert-shape-to-std")
    no_loops = without("func.func(convert-linalg-to-loops)")
    with RefBackendWorker(work_dir=tmp_path) as worker:
        full_v, shape_v, loops_v, bogus_v = worker.lower_variants(
            linalg, [full, no_shape, no_loops, "builtin.module(no-such-pass)"])
        assert full_v.ok and shape_v.ok
        assert shape_v.digest == full_v.digest  # no shape ops here: leaving the pass out changes nothing
        assert not bogus_v.ok and "no-such-pass" in bogus_v.error
        ran = worker.execute(full_v.llvm_path, [np.ones(2, np.float32)] * 2, signature)
        assert ran.ok and ran.outputs[0].tolist() == [2.0, 2.0]
        # Without convert-linalg-to-loops the pipeline still ends, but linalg is left in the
        # module: it lowers to something else, which the ExecutionEngine cannot run.
        assert loops_v.ok and loops_v.digest != full_v.digest
        assert "linalg.generic" in Path(loops_v.llvm_path).read_text()
        stuck = worker.execute(loops_v.llvm_path, [np.ones(2, np.float32)] * 2, signature)
        assert stuck.failed_stage is Stage.EXECUTION


def test_the_probe_lowers_without_runtime_checks_unless_asked(tmp_path):
    """The one-op search's probe runs a piece as a port runs its model: without MLIR's runtime op
    verification (minutes of code generation on a big piece), unless ``runtime_checks``. FLATTEN's
    cast to ?x1x4 is wrong at seq 3: the checked lowering aborts naming memref.cast, the default
    one runs through it."""
    from harness.execute.outcomes import CheckOutcome
    from harness.execute.probe import ProbeOptions, run_program

    from support.programs import FLATTEN

    src = tmp_path / "flatten.torch.mlir"
    src.write_text(textwrap.dedent(FLATTEN))
    backend = tmp_path / "flatten.backend.mlir"
    assert run_stage(src, "function-to-torch", output_path=backend).ok
    seq3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    signature = read_signature(backend)
    to_linalg = pipelines.default().resolve("torch-to-linalg")
    with RefBackendWorker(work_dir=tmp_path) as worker:
        unchecked, checked = (
            run_program(backend, [seq3], [seq3.reshape(-1, 4)], signature, worker=worker,
                        options=ProbeOptions(to_linalg=to_linalg, runtime_checks=checks),
                        work_dir=tmp_path)
            for checks in (False, True))
    assert checked.outcome is CheckOutcome.FAILS and str(checked.failed_stage) == "execution"
    assert "Runtime op verification failed" in checked.error and "memref.cast" in checked.error
    assert str(unchecked.failed_stage) != "execution" and "Runtime op verification" not in unchecked.error
