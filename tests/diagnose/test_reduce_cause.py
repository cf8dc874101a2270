"""reduce keeps the cause, not only the message.

Reducing a scripted loop's "unknown rank" failure once gave a 2-op function whose argument the
reducer itself had made unranked: the same message, an expected rejection, not the loop bug.
That happened on the IR just before the failing pass (what bisect writes), where the function
is free to take new arguments. These tests run the project's TorchScript importer and the real
torch-mlir-opt (each run of this pipeline takes a second or more: its shape library is parsed).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch_mlir import ir

from harness import torchscript
from harness.compiler import pipelines
from harness.compiler.mlir import children, print_op
from harness.compiler.runner import RunOptions, run_pipeline
from harness.diagnose.bisect import bisect
from harness.diagnose.reduce import ReduceOptions, reduce_file
from harness.diagnose.reduce.edits import entry_block, is_function, parse_input
from harness.diagnose.reduce.session import Failure
from harness.diagnose.reduce.torch_types import tensor_info

PIPELINE = "torchscript-to-torch"
UNKNOWN_RANK = "unsupported by backend contract: tensor with unknown rank"


class CarriedThroughLoop(torch.nn.Module):
    """A tensor carried through a `for` loop: shape inference cannot follow it (the loop bug)."""

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        y = x
        for _ in range(n):
            y = y * 2 + x
        return torch.tanh(y)


@pytest.fixture(scope="module")
def loop_ir(tmp_path_factory) -> Path:
    module = torchscript.compile(torch.jit.script(CarriedThroughLoop()), (torch.ones(3, 4), 3),
                                 output_type="raw")
    path = tmp_path_factory.mktemp("loop") / "loop.mlir"
    path.write_text(str(module))
    return path


@pytest.fixture(scope="module")
def loop_failure(loop_ir):
    """The original run, and the premise: where the loop's failure is reported."""
    record = _run(loop_ir)
    first = record.first_error()
    # the signature names the op the contract reports on
    assert str(record.signature) == f"pass-failure: {UNKNOWN_RANK}: 'torch.tensor_static_info_cast'"
    assert first.op == "torch.tensor_static_info_cast"  # of the tensor the loop carries
    assert "torch.prim.Loop" in loop_ir.read_text()
    return record


def _run(path: Path, pipeline: str = PIPELINE):
    textual = pipelines.default().resolve(pipeline)
    return run_pipeline(path, textual, options=RunOptions(extra_args=("-mlir-disable-threading",)))


def _unranked_arguments(path: Path) -> list[str]:
    """Tensor arguments of the file's functions whose type (or bound) states no rank or dtype."""
    context, module = parse_input(path.read_text(), str(path))
    found = []
    with context:
        for func in (op for op in children(module) if is_function(op)):
            attrs = list(ir.ArrayAttr(func.attributes["arg_attrs"])) if "arg_attrs" in func.attributes else []
            for i, arg in enumerate(entry_block(func).arguments):
                bound = ir.DictAttr(attrs[i]) if i < len(attrs) else None
                bounded = bound is not None and "torch.type_bound" in bound
                type_ = ir.TypeAttr(bound["torch.type_bound"]).value if bounded else arg.type
                info = tensor_info(type_)
                if info is not None and not info.has_rank_and_dtype:
                    found.append(str(type_))
    return found


def _forward(module: ir.Operation) -> ir.Operation:
    return next(op for op in children(module) if is_function(op))


def test_the_same_message_from_an_argument_made_unranked_is_another_failure(loop_ir, loop_failure,
                                                                            tmp_path):
    """The slip: the loop gone, the tensor argument's bound made unranked - the message is the
    same, so a signature-only test keeps it; the op and the location tell it apart."""
    original = loop_failure
    context, module = parse_input(loop_ir.read_text(), str(loop_ir))
    with context, ir.Location.unknown():
        forward = _forward(module)
        block = entry_block(forward)
        loop = next(op.operation for op in block.operations if op.operation.name == "torch.prim.Loop")
        loop.results[0].replace_all_uses_with(block.arguments[1])
        loop.erase()
        attrs = list(ir.ArrayAttr(forward.attributes["arg_attrs"]))
        unranked = ir.Type.parse("!torch.vtensor<*,f32>")
        attrs[1] = ir.DictAttr.get({"torch.type_bound": ir.TypeAttr.get(unranked)})
        forward.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    slipped_path = tmp_path / "slipped.mlir"
    slipped_path.write_text(print_op(module))  # locations still name loop.mlir, as a candidate's do
    slipped = _run(slipped_path)
    # the message alone is the same; the signature now names the op the contract reports on,
    # so it tells the slip apart too
    assert slipped.first_error().message == original.first_error().message
    assert slipped.signature != original.signature
    assert Failure.of(slipped) != Failure.of(original)
    assert Failure.of(slipped).location != Failure.of(original).location
    assert Failure.of(slipped).op != "torch.tensor_static_info_cast"


def test_the_scripted_loop_reduces_to_the_loop_and_keeps_its_cause(loop_ir, loop_failure, tmp_path):
    original = loop_failure
    out = tmp_path / "reduced.mlir"
    result = reduce_file(loop_ir, PIPELINE, options=ReduceOptions(output_path=out, budget_s=300,
                                                                  original=original))
    assert str(result.mode) == "ir" and str(result.stopped) == "done"
    assert result.ops_after < result.ops_before, out.read_text()
    again = _run(out)
    assert Failure.of(again) == Failure.of(original)
    first = again.first_error()
    assert first.message == UNKNOWN_RANK and first.op == "torch.tensor_static_info_cast"
    assert first.location == original.first_error().location
    # The loop is what fails, and the tensor argument still says its shape and dtype.
    context, module = parse_input(out.read_text(), str(out))
    with context:
        forward = _forward(module)
        ops = [op.operation.name for op in entry_block(forward).operations]
        assert "torch.prim.Loop" in ops, out.read_text()
        bounds = [str(ir.DictAttr(a)["torch.type_bound"])
                  for a in ir.ArrayAttr(forward.attributes["arg_attrs"])
                  if "torch.type_bound" in ir.DictAttr(a)]
        assert bounds == ["!torch.vtensor<[3,4],f32>"]
    assert _unranked_arguments(out) == []


def test_the_ir_before_the_failing_pass_reduces_to_the_loop_not_to_an_unranked_argument(
        loop_ir, tmp_path):
    """The reported slip: on bisect's IR before torch-lower-to-backend-contract, @forward may
    take new arguments, and an earlier reducer ended at `func.func @forward(%arg0: !torch.vtensor)
    { return }` - "unknown rank" because of its own argument."""
    found = bisect(loop_ir, pipelines.default().resolve(PIPELINE), out_dir=tmp_path / "bisect")
    assert found.failing_pass == "torch-lower-to-backend-contract", found.detail
    before, pass_alone = Path(found.pre_pass_ir), found.failing_pass_pipeline
    original = _run(before, pass_alone)
    assert original.first_error().message == UNKNOWN_RANK
    assert _unranked_arguments(before) == []
    out = tmp_path / "reduced.mlir"
    result = reduce_file(before, pass_alone, options=ReduceOptions(output_path=out, budget_s=300,
                                                                   original=original))
    assert str(result.stopped) == "done" and result.ops_after < result.ops_before
    again = _run(out, pass_alone)
    assert Failure.of(again) == Failure.of(original)
    assert "torch.prim.Loop" in out.read_text()
    assert _unranked_arguments(out) == [], out.read_text()
