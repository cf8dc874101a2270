"""The RefBackend on small modules: real torch-mlir-opt to linalg, real linalg-to-llvm on the
bindings, the wheel's ExecutionEngine. Expected values come from numpy, never from the code
under test."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from harness.compiler.records import Outcome
from harness.compiler.runner import RunOptions
from harness.errors import InputsError, PipelineConfigError
from harness.execute.dtypes import DType
from harness.execute.lowering import run_bindings_pipeline, run_stage
from harness.execute.refbackend import RefBackendOptions, Stage, run_refbackend
from harness.execute.signature import read_signature

from support.programs import EMPTY_INDEX_PUT, FLATTEN

IN_PROCESS = RefBackendOptions(isolate=False)


def to_linalg(tmp_path, torch_ir: str, name: str = "m"):
    """Hand-written value-semantic torch IR through function-to-torch and torch-to-linalg."""
    src = tmp_path / f"{name}.torch.mlir"
    src.write_text(textwrap.dedent(torch_ir))
    backend, out = tmp_path / f"{name}.backend.mlir", tmp_path / f"{name}.linalg.mlir"
    for stage, a, b in (("function-to-torch", src, backend), ("torch-to-linalg", backend, out)):
        record = run_stage(a, stage, output_path=b)
        assert record.ok, record.stderr
    return out


# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
DTYPES_IR = """
func.func @forward(%b: !torch.vtensor<[3],i1>, %u: !torch.vtensor<[3],ui8>, %i8: !torch.vtensor<[3],si8>,
                   %i32: !torch.vtensor<[3],si32>, %i64: !torch.vtensor<[2,2],si64>,
                   %h: !torch.vtensor<[3],f16>, %d: !torch.vtensor<[3],f64>)
    -> (!torch.vtensor<[3],i1>, !torch.vtensor<[3],ui8>, !torch.vtensor<[3],si8>, !torch.vtensor<[3],si32>,
        !torch.vtensor<[2,2],si64>, !torch.vtensor<[3],f16>, !torch.vtensor<[3],f64>) {
  %int1 = torch.constant.int 1
  %nb = torch.aten.logical_not %b : !torch.vtensor<[3],i1> -> !torch.vtensor<[3],i1>
  %u2 = torch.aten.add.Tensor %u, %u, %int1 : !torch.vtensor<[3],ui8>, !torch.vtensor<[3],ui8>, !torch.int -> !torch.vtensor<[3],ui8>
  %i8n = torch.aten.neg %i8 : !torch.vtensor<[3],si8> -> !torch.vtensor<[3],si8>
  %i32m = torch.aten.mul.Tensor %i32, %i32 : !torch.vtensor<[3],si32>, !torch.vtensor<[3],si32> -> !torch.vtensor<[3],si32>
  %int0 = torch.constant.int 0
  %i64t = torch.aten.transpose.int %i64, %int0, %int1 : !torch.vtensor<[2,2],si64>, !torch.int, !torch.int -> !torch.vtensor<[2,2],si64>
  %h2 = torch.aten.add.Tensor %h, %h, %int1 : !torch.vtensor<[3],f16>, !torch.vtensor<[3],f16>, !torch.int -> !torch.vtensor<[3],f16>
  %d2 = torch.aten.exp %d : !torch.vtensor<[3],f64> -> !torch.vtensor<[3],f64>
  return %nb, %u2, %i8n, %i32m, %i64t, %h2, %d2 : !torch.vtensor<[3],i1>, !torch.vtensor<[3],ui8>, !torch.vtensor<[3],si8>, !torch.vtensor<[3],si32>, !torch.vtensor<[2,2],si64>, !torch.vtensor<[3],f16>, !torch.vtensor<[3],f64>
}
"""  # noqa: E501


@pytest.mark.parametrize("isolate", [False, True], ids=["in-process", "child"])
def test_bool_int_float_inputs_and_outputs(tmp_path, isolate):
    linalg = to_linalg(tmp_path, DTYPES_IR)
    signature = read_signature(tmp_path / "m.torch.mlir")
    b = np.array([True, False, True])
    u = np.array([1, 100, 200], np.uint8)          # 200 + 200 wraps to 144 in uint8
    i8 = np.array([-128, 5, 127], np.int8)         # -(-128) wraps to -128
    i32 = np.array([3, -4, 46341], np.int32)       # 46341**2 overflows int32
    i64 = np.array([[1, 2], [3, 2**40]], np.int64)
    h = np.array([0.5, 1.5, 1000.0], np.float16)
    d = np.array([0.0, 1.0, -700.0])
    result = run_refbackend(linalg, [b, u, i8, i32, i64, h, d], signature=signature,
                            options=RefBackendOptions(isolate=isolate))
    assert result.ok, result.error or result.lowering.stderr
    out = result.outputs
    assert [o.dtype for o in out] == [np.bool_, np.uint8, np.int8, np.int32, np.int64, np.float16, np.float64]
    np.testing.assert_array_equal(out[0], ~b)
    np.testing.assert_array_equal(out[1], np.array([2, 200, 144], np.uint8))
    np.testing.assert_array_equal(out[2], np.array([-128, -5, -127], np.int8))
    np.testing.assert_array_equal(out[3], (i32.astype(np.int64) ** 2).astype(np.int32))
    np.testing.assert_array_equal(out[4], i64.T)
    np.testing.assert_array_equal(out[5], h + h)
    np.testing.assert_allclose(out[6], np.exp(d), rtol=1e-15)
    assert set(result.seconds) >= {"lower", "parse", "jit", "run"}


def test_tuple_results_and_0d_scalar(tmp_path):
    linalg = to_linalg(tmp_path, """
        func.func @forward(%x: !torch.vtensor<[2,3],f32>) -> (!torch.vtensor<[],f32>, !torch.vtensor<[3],f32>, !torch.vtensor<[],si64>) {
          %none = torch.constant.none
          %int0 = torch.constant.int 0
          %false = torch.constant.bool false
          %s = torch.aten.sum %x, %none : !torch.vtensor<[2,3],f32>, !torch.none -> !torch.vtensor<[],f32>
          %vals, %idx = torch.aten.max.dim %x, %int0, %false : !torch.vtensor<[2,3],f32>, !torch.int, !torch.bool -> !torch.vtensor<[3],f32>, !torch.vtensor<[3],si64>
          %a = torch.aten.argmax %x, %none, %false : !torch.vtensor<[2,3],f32>, !torch.none, !torch.bool -> !torch.vtensor<[],si64>
          return %s, %vals, %a : !torch.vtensor<[],f32>, !torch.vtensor<[3],f32>, !torch.vtensor<[],si64>
        }""")  # noqa: E501
    x = np.array([[1.0, 7.0, 3.0], [4.0, 2.0, 6.0]], np.float32)
    result = run_refbackend(linalg, [x], options=IN_PROCESS)
    assert result.ok
    total, maxes, argmax = result.outputs
    assert total.shape == () and total == np.float32(23.0)
    np.testing.assert_array_equal(maxes, x.max(axis=0))
    assert argmax.shape == () and argmax.dtype == np.int64 and argmax == 1


def test_signature_from_linalg_is_signless(tmp_path):
    linalg = to_linalg(tmp_path, DTYPES_IR)
    from_linalg = read_signature(linalg)
    from_torch = read_signature(tmp_path / "m.torch.mlir")
    assert from_torch.args[1].dtype is DType.UINT8 and from_linalg.args[1].dtype is DType.INT8
    assert from_torch.describe().startswith(
        "@forward(i1[3], ui8[3], si8[3], si32[3], si64[2,2], f16[3], f64[3])")


def test_inputs_that_do_not_fit_are_an_error(tmp_path):
    linalg = to_linalg(tmp_path, DTYPES_IR)
    signature = read_signature(tmp_path / "m.torch.mlir")
    good = [np.zeros(3, bool), np.zeros(3, np.uint8), np.zeros(3, np.int8), np.zeros(3, np.int32),
            np.zeros((2, 2), np.int64), np.zeros(3, np.float16), np.zeros(3)]
    with pytest.raises(InputsError, match="argument 6 is float32, expected float64"):
        run_refbackend(linalg, [*good[:6], np.zeros(3, np.float32)], signature=signature, options=IN_PROCESS)
    with pytest.raises(InputsError, match=r"argument 4 has shape \[2, 3\], expected si64\[2,2\]"):
        run_refbackend(linalg, [*good[:4], np.zeros((2, 3), np.int64), *good[5:]], signature=signature)
    with pytest.raises(InputsError, match="6 arrays for 7 arguments"):
        run_refbackend(linalg, good[:6], signature=signature)


DYNAMIC_ADD = """
func.func @forward(%a: !torch.vtensor<[?],f32>, %b: !torch.vtensor<[?],f32>) -> !torch.vtensor<[?],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %a, %b, %int1 : !torch.vtensor<[?],f32>, !torch.vtensor<[?],f32>, !torch.int -> !torch.vtensor<[?],f32>
  return %0 : !torch.vtensor<[?],f32>
}
"""  # noqa: E501


def test_a_failed_runtime_check_is_an_execution_outcome(tmp_path):
    linalg = to_linalg(tmp_path, DYNAMIC_ADD)
    ok = run_refbackend(linalg, [np.ones(3, np.float32), np.full(3, 2, np.float32)])
    assert ok.ok and ok.outputs[0].tolist() == [3.0, 3.0, 3.0]
    # Sizes 3 and 4: torch-to-linalg's shape assert fires in the compiled code and aborts the
    # child; the parent records the signal and the assert's message.
    bad = run_refbackend(linalg, [np.ones(3, np.float32), np.ones(4, np.float32)])
    assert bad.failed_stage is Stage.EXECUTION and bad.signal == "SIGABRT"
    assert "mismatched size for broadcast" in bad.error
    assert "jit_child" in bad.command  # the command that reruns it


def test_a_failing_lowering_is_a_record_not_a_traceback(tmp_path):
    # Torch-level IR is not linalg: the RefBackend's bufferization refuses its ops.
    src = tmp_path / "dyn.torch.mlir"
    src.write_text(DYNAMIC_ADD)
    result = run_refbackend(src, [np.ones(3, np.float32)] * 2, signature=read_signature(src))
    assert result.failed_stage is Stage.LOWERING and not result.outputs
    assert result.lowering.outcome is Outcome.PASS_FAILURE
    error = result.lowering.first_error()
    assert error.file == str(src) and error.line == 4
    assert "unknown memory side effects" in error.message
    assert result.lowering.command[:3] == [sys.executable, "-m", "harness.execute.bindings_tool"]


def test_bindings_opt_speaks_torch_mlir_opts_command_line(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text("func.func @f( {\n")
    proc = subprocess.run([sys.executable, "-m", "harness.execute.bindings_tool", str(src),
                           "-pass-pipeline=builtin.module(canonicalize)"], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.startswith(f"{src}:1:")
    with pytest.raises(PipelineConfigError, match="'bogus' does not refer to a registered pass"):
        run_bindings_pipeline(src, "builtin.module(bogus)", options=RunOptions())


def test_the_lowering_handles_tm_tensor(tmp_path):
    # aten.cumsum lowers to tm_tensor.scan, a dialect the bindings cannot register: the lowering
    # loads it through a pass (harness/execute/context.py).
    linalg = to_linalg(tmp_path, """
        func.func @forward(%x: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> {
          %int1 = torch.constant.int 1
          %none = torch.constant.none
          %0 = torch.aten.cumsum %x, %int1, %none : !torch.vtensor<[2,3],f32>, !torch.int, !torch.none -> !torch.vtensor<[2,3],f32>
          return %0 : !torch.vtensor<[2,3],f32>
        }""")  # noqa: E501
    assert "tm_tensor.scan" in linalg.read_text()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    result = run_refbackend(linalg, [x], options=IN_PROCESS)
    assert result.ok and np.array_equal(result.outputs[0], np.cumsum(x, axis=1))



def test_runtime_checks_are_asked_for(tmp_path):
    """MLIR's runtime op verification only with ``runtime_checks``: torch-to-linalg lowers this
    view with a cast to ``?x1x4`` (lit_tests/pass/view-flatten-two-dynamic-dims-wrong-collapse.mlir),
    which the checked code verifies at run time; the default lowering leaves the checks out (on
    big models they cost minutes of code generation) and computes the same where the cast holds."""
    linalg = to_linalg(tmp_path, FLATTEN)
    checked = RefBackendOptions(runtime_checks=True, work_dir=str(tmp_path))
    fits = np.arange(8, dtype=np.float32).reshape(2, 1, 4)
    for options in (RefBackendOptions(work_dir=str(tmp_path)), checked):
        ran = run_refbackend(linalg, [fits], options=options)
        assert ran.ok, ran.error
        np.testing.assert_array_equal(ran.outputs[0], fits.reshape(-1, 4))
        text = Path(ran.llvm_path).read_text()  # the checks' messages are hex-encoded globals
        assert (b"Runtime op verification".hex().upper() in text) is options.runtime_checks
    bad = run_refbackend(linalg, [np.ones((2, 3, 4), np.float32)], options=checked)
    assert bad.failed_stage is Stage.EXECUTION and bad.signal == "SIGABRT"
    assert "Runtime op verification failed" in bad.error and "memref.cast" in bad.error
    assert "size mismatch of dim 1" in bad.error


def test_input_sets_share_one_jit_and_keep_their_own_failures(tmp_path):
    from harness.execute.refbackend import execute_llvm_sets, lower_to_llvm

    linalg = to_linalg(tmp_path, DYNAMIC_ADD)
    llvm = tmp_path / "m.llvm.mlir"
    assert lower_to_llvm(linalg, llvm).ok
    signature = read_signature(linalg)
    ones, twos, fours = np.ones(3, np.float32), np.full(3, 2, np.float32), np.ones(4, np.float32)
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        folder.mkdir()
    first, second = execute_llvm_sets(llvm, [[ones, twos], [twos, twos]], signature, folders)
    assert first.ok and first.outputs[0].tolist() == [3.0, 3.0, 3.0]
    assert second.ok and second.outputs[0].tolist() == [4.0, 4.0, 4.0]
    assert first.seconds["process"] == second.seconds["process"]  # one child ran both
    # each keeps the command that reruns it alone, and it does
    assert first.command.count("--inputs") == 1 and str(folders[0]) in first.command
    rerun = subprocess.run(first.command, shell=True, capture_output=True, text=True, check=False,
                           cwd=Path(__file__).resolve().parents[2])
    assert rerun.returncode == 0, rerun.stderr
    # sizes 3 and 4 abort the shared child: each set runs again alone, so the failure is the second's
    folders = [tmp_path / "c", tmp_path / "d"]
    for folder in folders:
        folder.mkdir()
    good, bad = execute_llvm_sets(llvm, [[ones, twos], [ones, fours]], signature, folders)
    assert good.ok and good.outputs[0].tolist() == [3.0, 3.0, 3.0]
    assert bad.failed_stage is Stage.EXECUTION and bad.signal == "SIGABRT"
    assert "mismatched size for broadcast" in bad.error


def test_checked_runs_take_0d_and_empty_arguments(tmp_path):
    """The descriptors the RefBackend passes hold the rank and the row-major strides the lowered
    code's layout declares: a 0-d argument is rank 0 (np.ascontiguousarray made it [1], a "rank
    mismatch" under runtime checks) and an empty one has stride 1 (it was 0, a "stride
    mismatch"), so a checked run fails only where the code itself does."""
    linalg = to_linalg(tmp_path, EMPTY_INDEX_PUT)
    checked = RefBackendOptions(runtime_checks=True, work_dir=str(tmp_path))
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 8)
    one = [x, np.array([0]), np.array([2]), np.array([5]), np.array(-1.0, np.float32)]
    ran = run_refbackend(linalg, one, options=checked)
    assert ran.ok, ran.error
    expected = x.copy()
    expected[0, 2, 5] = -1.0
    np.testing.assert_array_equal(ran.outputs[0], expected)
    empty = np.zeros(0, np.int64)
    crashed = run_refbackend(linalg, [x, empty, empty, empty, np.array(0.0, np.float32)], options=checked)
    assert crashed.failed_stage is Stage.EXECUTION and crashed.signal == "SIGABRT", crashed.error
    # The lowering's own bad access (the index broadcast sized 1 for 0), not the call's descriptors.
    assert "memref.load" in crashed.error and "out-of-bounds access" in crashed.error
    assert "mismatch" not in crashed.error
