"""harness.frontends.torchscript.registry: the JIT's operator registry as plain records."""

import torch

from harness.frontends.torchscript import get_registered_ops


def test_records_describe_each_schema():
    ops = {op["name"]: op for op in get_registered_ops()}
    assert len(ops) == len(torch._C._jit_get_all_schemas())
    # The record upstream's test pins for a dispatcher op, written out here.
    assert ops[("aten::mul", "Tensor")] == {
        "name": ("aten::mul", "Tensor"), "is_c10_op": True, "is_vararg": False, "is_varret": False,
        "is_mutable": False,
        "arguments": [{"name": "self", "type": "Tensor", "pytype": "Tensor"},
                      {"name": "other", "type": "Tensor", "pytype": "Tensor"}],
        "returns": [{"name": "", "type": "Tensor", "pytype": "Tensor"}],
    }


def test_jit_only_vararg_and_mutating_ops():
    ops = {op["name"]: op for op in get_registered_ops()}
    printer = ops[("prim::Print", "")]
    assert (printer["is_c10_op"], printer["is_vararg"]) == (False, True)
    assert ops[("prim::TupleUnpack", "")]["is_varret"]
    add_ = ops[("aten::add_", "Tensor")]
    assert add_["is_mutable"]
    assert add_["arguments"][0]["alias_info"] == {"is_write": True, "before": ["alias::a"],
                                                  "after": ["alias::a"]}
    assert add_["arguments"][2]["default_debug"] == "1"
