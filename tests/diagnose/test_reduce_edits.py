"""harness.diagnose.reduce's parts on their own: torch types through the C API, typed zero
constants, what may stand in for a removed op's result, and the one delta-debugging loop."""

from __future__ import annotations

import pytest
from torch_mlir import ir

from harness.compiler.mlir import children, new_context, print_op
from harness.errors import UsageError
from harness.diagnose.reduce import ReduceResult, Stopped, Strategy
from harness.diagnose.reduce.edits import entry_block, op_units, parse_input, zero_constant
from harness.diagnose.reduce.strategy import (
    DropLines,
    DropOps,
    First,
    Plan,
    Substitute,
    plan,
    run_rounds,
)
from harness.diagnose.reduce.torch_types import TypeKind, kind, tensor_info


@pytest.fixture
def context():
    with new_context() as ctx, ir.Location.unknown():
        yield ctx


@pytest.mark.parametrize("text, expected_kind, sizes, dtype", [
    ("!torch.vtensor<[2,?,3],f32>", TypeKind.VALUE_TENSOR, (2, -1, 3), "f32"),
    ("!torch.vtensor<[],i1>", TypeKind.VALUE_TENSOR, (), "i1"),
    ("!torch.vtensor<*,si64>", TypeKind.VALUE_TENSOR, None, "si64"),
    ("!torch.vtensor", TypeKind.VALUE_TENSOR, None, None),
    ("!torch.tensor<[4],bf16>", TypeKind.TENSOR, (4,), "bf16"),
    ("!torch.tensor", TypeKind.TENSOR, None, None),
    ("tensor<2x3xf16>", TypeKind.BUILTIN_TENSOR, (2, 3), "f16"),
    ("!torch.int", TypeKind.INT, None, None),
    ("!torch.Device", TypeKind.DEVICE, None, None),
    ("!torch.list<int>", TypeKind.OTHER, None, None),
])
def test_torch_types_are_read_through_the_c_api(context, text, expected_kind, sizes, dtype):
    type_ = ir.Type.parse(text)
    assert kind(type_) is expected_kind
    info = tensor_info(type_)
    if expected_kind in (TypeKind.INT, TypeKind.DEVICE, TypeKind.OTHER):
        assert info is None
    else:
        assert info.sizes == sizes
        assert (str(info.dtype) if info.dtype is not None else None) == dtype


@pytest.mark.parametrize("text, op, value", [
    ("!torch.vtensor<[2,3],f32>", "torch.vtensor.literal", "dense<0.000000e+00> : tensor<2x3xf32>"),
    ("!torch.vtensor<[2],i1>", "torch.vtensor.literal", "dense<false> : tensor<2xi1>"),
    ("!torch.vtensor<[4],si64>", "torch.vtensor.literal", "dense<0> : tensor<4xsi64>"),
    ("!torch.vtensor<[],bf16>", "torch.vtensor.literal", "dense<0.000000e+00> : tensor<bf16>"),
    ("!torch.int", "torch.constant.int", "0 : i64"),
    ("!torch.float", "torch.constant.float", "0.000000e+00 : f64"),
    ("!torch.bool", "torch.constant.bool", "false"),
    ("!torch.none", "torch.constant.none", None),
    ("!torch.Device", "torch.constant.device", '"cpu"'),
])
def test_zero_constants_are_typed_attributes(context, text, op, value):
    name, attr = zero_constant(ir.Type.parse(text))
    assert name == op
    assert (str(attr) if attr is not None else None) == value


@pytest.mark.parametrize("text", ["!torch.vtensor<[?,3],f32>", "!torch.vtensor<*,f32>", "!torch.vtensor",
                                  "!torch.tensor<[2],f32>", "!torch.vtensor<[2],complex<f32>>",
                                  "!torch.list<int>"])
def test_no_zero_constant_where_the_type_does_not_fix_one(context, text):
    assert zero_constant(ir.Type.parse(text)) is None


# Every result is used by the return, in a function nothing calls (free to take new arguments).
# Torch IR below is one op a line as torch-mlir prints it, so its lines stay long (noqa: E501
# where the string closes).
STAND_INS = """
func.func @f(%a: !torch.vtensor<[3,4],f32>) -> (!torch.vtensor, !torch.vtensor<*,f32>, !torch.vtensor<[3,4],f32>, !torch.tensor, !torch.list<int>, !torch.int, !torch.vtensor<[2],f32>) {
  %int0 = torch.constant.int 0
  %unranked = torch.tensor_static_info_cast %a : !torch.vtensor<[3,4],f32> to !torch.vtensor
  %no_rank = torch.tensor_static_info_cast %a : !torch.vtensor<[3,4],f32> to !torch.vtensor<*,f32>
  %ranked = torch.aten.tanh %a : !torch.vtensor<[3,4],f32> -> !torch.vtensor<[3,4],f32>
  %non_value = torch.copy.to_tensor %unranked : !torch.tensor
  %size = torch.aten.size.int %a, %int0 : !torch.vtensor<[3,4],f32>, !torch.int -> !torch.int
  %list = torch.prim.ListConstruct %size : (!torch.int) -> !torch.list<int>
  %literal = torch.vtensor.literal(dense<1.0> : tensor<2xf32>) : !torch.vtensor<[2],f32>
  return %unranked, %no_rank, %ranked, %non_value, %list, %int0, %literal : !torch.vtensor, !torch.vtensor<*,f32>, !torch.vtensor<[3,4],f32>, !torch.tensor, !torch.list<int>, !torch.int, !torch.vtensor<[2],f32>
}
"""  # noqa: E501
_ORDER = ["int0", "unranked", "no_rank", "ranked", "non_value", "size", "list", "literal"]
K, C, A = Plan.KEEP, Plan.CONSTANT, Plan.ARGUMENT


@pytest.mark.parametrize("name, mixed, args, constants", [
    ("unranked", K, K, K),   # an argument would be unranked: the failure could be of its making
    ("no_rank", K, K, K),
    ("ranked", A, A, C),
    ("non_value", K, K, K),  # !torch.tensor says neither rank nor dtype
    ("list", K, K, K),       # a list of sizes as an argument drops shape information
    ("size", C, K, C),       # a scalar may feed a shape: only ever a constant
    ("int0", K, K, K),       # a constant for a constant gains nothing
    ("literal", A, A, K),
])
def test_what_may_stand_in_for_a_result(name, mixed, args, constants):
    context, module = parse_input(STAND_INS, "stand-ins.mlir")
    with context, ir.Location.unknown():  # as the IR state runs edits
        func = next(children(module))
        ops = [op.operation for op in entry_block(func).operations if len(op.operation.results) == 1]
        op = ops[_ORDER.index(name)]
        got = [plan(op.results[0], op, s, free=True) for s in Substitute]
    assert got == [mixed, args, constants]


def test_dropping_ops_adds_no_argument_that_says_less(context):
    context, module = parse_input(STAND_INS, "stand-ins.mlir")
    with context, ir.Location.unknown():
        before = str(ir.TypeAttr(next(children(module)).attributes["function_type"]).value)
        units = op_units(module)
        for substitute in (Substitute.MIXED, Substitute.ARGS):
            for i, unit in enumerate(units):
                if unit.op.name in ("torch.tensor_static_info_cast", "torch.copy.to_tensor",
                                    "torch.prim.ListConstruct", "torch.aten.size.int"):
                    clone = module.clone()
                    DropOps(substitute, First.SINGLE).remove(clone, range(i, i + 1))
                    after = str(ir.TypeAttr(next(children(clone)).attributes["function_type"]).value)
                    assert after.split(") ->")[0] == before.split(") ->")[0], (unit.op.name, print_op(clone))
                    clone.erase()


class _Items:
    """A state over a list of numbers that 'fails' while it holds all of ``needed``."""

    def __init__(self, items: list[int], needed: set[int]):
        self.best, self.needed, self.tries = items, needed, 0
        self.metric = (len(items), 0)

    def attempt(self, edit, what: str) -> bool:
        candidate = list(self.best)
        if not edit(candidate) or not candidate:
            return False
        self.tries += 1
        if not self.needed <= set(candidate):
            return False
        self.best, self.metric = candidate, (len(candidate), 0)
        return True


def test_one_delta_debugging_loop_for_any_state():
    state = _Items(list(range(64)), {3, 41})
    run_rounds(state, (), (DropLines(),))
    assert state.best == [3, 41]
    assert state.tries < 64  # chunks first, not one item at a time


def test_the_closed_sets_parse():
    assert Strategy.parse("LINES") is Strategy.LINES and Stopped.parse("max_tries") is Stopped.MAX_TRIES
    with pytest.raises(UsageError, match="unknown strategy 'bytes'; use one of 'ir', 'lines'"):
        Strategy.parse("bytes")
    result = ReduceResult(3, 1, 5, 2, 1.0, "crash: x", "out.mlir", stopped=Stopped.BUDGET)
    assert result.summary().endswith("(budget spent: best so far)") and str(result.stopped) == "budget"
