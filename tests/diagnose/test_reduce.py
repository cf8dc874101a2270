"""harness.diagnose.reduce: failing IR shrinks and keeps its signature; budgets and bad input are handled."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.compiler import pipelines
from harness.compiler.runner import RunOptions, run_pipeline
from harness.compiler import builds as builds_module
from harness.errors import InputFileError, NothingToReduceError, OutputError
from harness.diagnose.reduce import ReduceOptions, reduce_file

from support import CRASHERS, harness

LINALG = "torch-to-linalg"

# torch-to-linalg cannot legalize an i1 literal (OPT's dense<true> mask, here a resource blob).
# Everything else is noise: a helper called from forward, an unrelated function, a layer norm-ish
# chain, and a second result.
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
NOISY_LEGALIZATION = """
func.func private @helper(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %arg0, %arg0, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %1 = torch.aten.tanh %0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %1 : !torch.vtensor<[4],f32>
}
func.func @unrelated(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.relu %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %1 = torch.aten.sigmoid %0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %2 = torch.aten.neg %1 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %2 : !torch.vtensor<[4],f32>
}
func.func @forward(%arg0: !torch.vtensor<[2],i1>, %arg1: !torch.vtensor<[4],f32>) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[2],i1>) {
  %int1 = torch.constant.int 1
  %float2 = torch.constant.float 2.000000e+00
  %w = torch.vtensor.literal(dense_resource<weight> : tensor<4xf32>) : !torch.vtensor<[4],f32>
  %0 = func.call @helper(%arg1) : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
  %1 = torch.aten.mul.Tensor %0, %w : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %2 = torch.aten.add.Scalar %1, %float2, %int1 : !torch.vtensor<[4],f32>, !torch.float, !torch.int -> !torch.vtensor<[4],f32>
  %3 = torch.aten.rsqrt %2 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %4 = torch.aten.sub.Tensor %3, %1, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  %5 = torch.aten.relu %4 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %mask = torch.vtensor.literal(dense_resource<mask> : tensor<2xi1>) : !torch.vtensor<[2],i1>
  %6 = torch.aten.__and__.Tensor %mask, %arg0 : !torch.vtensor<[2],i1>, !torch.vtensor<[2],i1> -> !torch.vtensor<[2],i1>
  %7 = torch.aten.__and__.Tensor %6, %arg0 : !torch.vtensor<[2],i1>, !torch.vtensor<[2],i1> -> !torch.vtensor<[2],i1>
  %8 = torch.aten.mul.Tensor %5, %5 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %8, %7 : !torch.vtensor<[4],f32>, !torch.vtensor<[2],i1>
}
{-#
  dialect_resources: {
    builtin: {
      weight: "0x040000000000803F0000004000004040000080C0",
      mask: "0x010000000100"
    }
  }
#-}
"""  # noqa: E501

# The F_view_zero_numel crash (ConvertAtenViewOp divides by numel 0) among unrelated ops.
NOISY_CRASH = """
func.func @other(%arg0: !torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32> {
  %0 = torch.aten.tanh %arg0 : !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  return %0 : !torch.vtensor<[3],f32>
}
func.func @f(%arg0: !torch.vtensor<[0,4],f32>, %arg1: !torch.vtensor<[3],f32>) -> (!torch.vtensor<[?,0],f32>, !torch.vtensor<[3],f32>) {
  %0 = torch.aten.tanh %arg1 : !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %1 = torch.aten.relu %0 : !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %int1 = torch.constant.int 1
  %2 = torch.aten.add.Tensor %1, %0, %int1 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.int -> !torch.vtensor<[3],f32>
  %int-1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %3 = torch.prim.ListConstruct %int-1, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %4 = torch.aten.view %arg0, %3 : !torch.vtensor<[0,4],f32>, !torch.list<int> -> !torch.vtensor<[?,0],f32>
  %5 = torch.aten.mul.Tensor %2, %2 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %6 = torch.aten.sigmoid %5 : !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  return %4, %6 : !torch.vtensor<[?,0],f32>, !torch.vtensor<[3],f32>
}
"""  # noqa: E501

PASSING = """
func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %0 = torch.aten.tanh %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
"""


def _signature(path: Path, pipeline: str = LINALG) -> str:
    textual = pipelines.default().resolve(pipeline)
    options = RunOptions(extra_args=("-mlir-disable-threading",))
    return str(run_pipeline(path, textual, options=options).signature)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text.lstrip())
    return path


def test_noisy_legalization_failure_reduces_to_the_literal_and_its_use(tmp_path):
    src = _write(tmp_path, "noisy.mlir", NOISY_LEGALIZATION)
    out = tmp_path / "reduced.mlir"
    before = _signature(src)
    assert before == "legalization-failure: failed to legalize operation 'torch.vtensor.literal'"
    result = reduce_file(src, LINALG, options=ReduceOptions(output_path=out, budget_s=30))
    assert str(result.mode) == "ir" and str(result.stopped) == "done"
    assert result.ops_before == 25
    # func.func, the literal, one __and__ (so the literal has a use), return.
    assert result.ops_after <= 4, out.read_text()
    assert result.output_path == str(out) and result.signature == before
    assert 0 < result.kept <= result.tries
    # Run it again: the written file fails the same way.
    assert _signature(out) == before
    text = out.read_text()
    assert "@helper" not in text and "@unrelated" not in text and "aten.mul" not in text
    assert "torch.vtensor.literal" in text and "__and__" in text
    # The mask blob kept the failure as a zero splat: no blob left in the file.
    assert "dense<false> : tensor<2xi1>" in text and "dialect_resources" not in text


def test_weights_survive_when_they_are_not_splatted(tmp_path):
    src = _write(tmp_path, "noisy.mlir", NOISY_LEGALIZATION)
    out = tmp_path / "reduced.mlir"
    result = reduce_file(src, LINALG, options=ReduceOptions(output_path=out, splat_weights=False))
    text = out.read_text()
    assert result.ops_after <= 4
    assert "dense_resource<mask> : tensor<2xi1>" in text
    assert 'mask: "0x010000000100"' in text       # the blob itself, not an elided name
    assert "weight:" not in text                   # blobs nothing references are gone
    assert _signature(out) == result.signature


def test_crash_reduces_keeping_its_crash_signature(tmp_path):
    src = _write(tmp_path, "crash.mlir", NOISY_CRASH)
    out = tmp_path / "reduced.mlir"
    before = _signature(src)
    assert before.startswith("crash: SIGFPE")
    result = reduce_file(src, LINALG, options=ReduceOptions(output_path=out, budget_s=30))
    assert result.signature == before
    assert result.ops_before == 15
    assert result.ops_after <= 6, out.read_text()
    text = out.read_text()
    assert "torch.aten.view" in text and "@other" not in text and "sigmoid" not in text
    assert _signature(out) == before


def test_the_catalogued_crasher_keeps_its_signature(tmp_path):
    src = CRASHERS / "F_view_zero_numel.mlir"
    out = tmp_path / "F.mlir"
    result = reduce_file(src, LINALG, options=ReduceOptions(output_path=out))
    assert result.ops_after <= result.ops_before
    assert _signature(out) == _signature(src) == result.signature


def test_pass_flags_pipeline(tmp_path):
    """`--pipeline=-canonicalize`, as for harness run: the crash in a folder keeps its frame."""
    out = tmp_path / "A.mlir"
    result = reduce_file(CRASHERS / "A_remainder_int_by_zero.mlir", "-canonicalize",
                         options=ReduceOptions(output_path=out))
    assert result.pipeline_text == "-canonicalize"
    assert "AtenRemainderIntOp::fold" in str(result.signature)
    assert "torch.aten.remainder.int" in out.read_text()


def test_a_record_the_caller_has_saves_the_first_run(tmp_path):
    """With the input's record given (report passes it), every run is a candidate's."""
    from harness.compiler.builds import resolve

    log = tmp_path / "runs.log"
    counting = tmp_path / "torch-mlir-opt"
    counting.write_text(f'#!/bin/sh\ncase "$1" in --*) ;; *) echo run >> "{log}" ;; esac\n'
                        f'exec "{resolve().path}" "$@"\n')
    counting.chmod(0o755)
    src = CRASHERS / "F_view_zero_numel.mlir"
    pipeline = pipelines.default().resolve(LINALG)
    record = run_pipeline(src, pipeline, opt=str(counting))
    log.unlink()
    result = reduce_file(src, LINALG, options=ReduceOptions(
        output_path=tmp_path / "a.mlir", opt=str(counting), original=record))
    given = len(log.read_text().splitlines())
    log.unlink()
    again = reduce_file(src, LINALG, options=ReduceOptions(output_path=tmp_path / "b.mlir",
                                                           opt=str(counting)))
    assert result.signature == str(again.signature) == str(record.signature)
    assert given == result.tries
    assert len(log.read_text().splitlines()) == again.tries + 1


def test_spent_try_limit_keeps_the_best_so_far_as_a_valid_file(tmp_path):
    src = _write(tmp_path, "noisy.mlir", NOISY_LEGALIZATION)
    out = tmp_path / "reduced.mlir"
    result = reduce_file(src, LINALG, options=ReduceOptions(output_path=out, max_tries=4))
    assert str(result.stopped) == "max-tries"
    assert result.tries == 4
    assert result.ops_after <= result.ops_before
    assert _signature(out) == result.signature


def test_spent_budget_keeps_the_best_so_far_as_a_valid_file(tmp_path):
    src = _write(tmp_path, "noisy.mlir", NOISY_LEGALIZATION)
    out = tmp_path / "reduced.mlir"
    result = reduce_file(src, LINALG, options=ReduceOptions(output_path=out, budget_s=0.3))
    assert str(result.stopped) == "budget"
    assert result.elapsed_s < 2.0
    assert _signature(out) == result.signature


# torch-mlir-opt parses tm_tensor ops, the wheel's Python bindings do not: the F crash beside a
# tm_tensor.scan can only be reduced line by line.
TM_TENSOR_CRASH = """
func.func @scan(%in: tensor<8xi32>, %out: tensor<8xi32>, %acc: tensor<i32>) -> (tensor<8xi32>, tensor<i32>) {
  %0:2 = tm_tensor.scan dimension(0) inclusive(true) ins(%in : tensor<8xi32>) outs(%out, %acc : tensor<8xi32>, tensor<i32>) {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    tm_tensor.yield %s : i32
  } -> tensor<8xi32>, tensor<i32>
  return %0#0, %0#1 : tensor<8xi32>, tensor<i32>
}
""" + NOISY_CRASH  # noqa: E501


def test_input_the_bindings_cannot_read_is_reduced_by_lines(tmp_path):
    from harness.compiler.mlir import parse_ir

    src = _write(tmp_path, "tm.mlir", TM_TENSOR_CRASH)
    assert parse_ir(src.read_text()) is None  # the premise: the bindings reject it
    out = tmp_path / "reduced.mlir"
    before = _signature(src)
    assert before.startswith("crash: SIGFPE")
    result = reduce_file(src, LINALG, options=ReduceOptions(output_path=out))
    assert str(result.mode) == "lines" and result.signature == before
    assert result.ops_after < result.ops_before
    assert "torch.aten.view" in out.read_text() and "tm_tensor.scan" not in out.read_text()
    assert _signature(out) == before


@pytest.mark.parametrize("name, text, where", [
    ("bytes.mlir", bytes(range(256)) * 4, ":1:"),
    ("truncated.mlir", NOISY_CRASH[:NOISY_CRASH.index("%4 = torch.aten.view") + 30], ":13:32: expected ':'"),
    ("unknown-op.mlir",
     NOISY_CRASH.replace("%6 = torch.aten.sigmoid", "%6 = torch.aten.no_such_op"), ":15:8"),
])
def test_input_that_does_not_parse_is_refused(tmp_path, name, text, where):
    """Random bytes or malformed MLIR are not a compiler bug to keep (they used to be reduced)."""
    src = tmp_path / name
    src.write_bytes(text if isinstance(text, bytes) else text.lstrip().encode())
    out = tmp_path / "reduced.mlir"
    with pytest.raises(InputFileError) as info:
        reduce_file(src, LINALG, options=ReduceOptions(output_path=out))
    message = str(info.value)
    assert message.startswith(f"cannot reduce {src}: torch-mlir-opt cannot read it (at {src}{where}")
    assert "This is not a torch-mlir bug" in message
    assert len(message) < 800 and not out.exists()


def test_passing_input_is_a_clear_error(tmp_path):
    src = _write(tmp_path, "ok.mlir", PASSING)
    with pytest.raises(NothingToReduceError) as info:
        reduce_file(src, LINALG, options=ReduceOptions(output_path=tmp_path / "out.mlir"))
    assert str(info.value).startswith(f"nothing to reduce: {src} passes torch-to-linalg.")
    assert not (tmp_path / "out.mlir").exists()


def test_unwritable_output_fails_before_the_search(tmp_path):
    src = _write(tmp_path, "noisy.mlir", NOISY_LEGALIZATION)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(OutputError, match="cannot write the reduced file"):
        reduce_file(src, LINALG, options=ReduceOptions(output_path=blocker / "out.mlir"))
    with pytest.raises(OutputError, match="is the input file"):
        reduce_file(src, LINALG, options=ReduceOptions(output_path=src))


def test_missing_input_is_named_and_nothing_is_created(tmp_path):
    with pytest.raises(InputFileError, match=r"absent\.mlir does not exist"):
        reduce_file(tmp_path / "sub" / "absent.mlir", LINALG)
    assert list(tmp_path.iterdir()) == []


def test_cli_reduce(tmp_path):
    src = _write(tmp_path, "noisy.mlir", NOISY_LEGALIZATION)
    out = tmp_path / "reduced.mlir"
    proc = harness("reduce", str(src), "--pipeline", LINALG, "-o", str(out), "--budget-s", "30", timeout=120)
    assert proc.returncode == 1, proc.stderr  # the failure asked about is there (README: exit status)
    assert "25 -> 4 ops" in proc.stdout
    assert f"-> {out}" in proc.stdout
    assert f"reproduce: {builds_module.resolve().path} -pass-pipeline='builtin.module(" in proc.stdout
    ok = _write(tmp_path, "ok.mlir", PASSING)
    proc = harness("reduce", str(ok), "--pipeline", LINALG, "-o", str(out), timeout=120)
    assert proc.returncode == 0  # passing is no usage error
    assert proc.stdout.startswith(f"nothing to reduce: {ok} passes")
    junk = tmp_path / "junk.mlir"
    junk.write_bytes(bytes(range(256)))
    proc = harness("reduce", str(junk), "--pipeline", LINALG, "-o", str(out), timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"harness: error: cannot reduce {junk}: "
                                  f"torch-mlir-opt cannot read it (at {junk}:1:")
    assert "Traceback" not in proc.stderr
