"""harness.frontends.torchscript.locations: every op's location is its node's real call stack.

Scripted ops sit at their source token; the call nodes carry the callers. Traced ops carry the
Python stack the tracer recorded (minus nn.Module's dispatch frames and the tracer), and trace
call nodes stay unknown, so torch-mlir's inliner does not add borrowed callers.
"""

from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path
from typing import Dict, Tuple

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch_mlir import ir

from harness import torchscript
from harness.compiler import pipelines
from harness.compiler.mlir import WriteOptions, write_module
from harness.frontends.torchscript import ModuleBuilder
from harness.frontends.torchscript.locations import traced_frames
from harness.diagnose.explain import explain_file

FRAME = re.compile(r'"([^"]+)":(\d+):(\d+)')
TORCHSCRIPT = pipelines.default().get("torchscript-to-torch").textual()


def frames(location) -> list[tuple[str, int]]:
    """(file, line) of each frame of a printed location, innermost first."""
    return [(Path(f).name, int(line)) for f, line, _ in FRAME.findall(str(location))]


def line_of(function, snippet: str) -> tuple[int, int]:
    """(line, 0-based column) of ``snippet`` in this file."""
    lines, start = inspect.getsourcelines(function)
    for offset, line in enumerate(lines):
        if snippet in line:
            return start + offset, line.index(snippet)
    raise AssertionError(f"{snippet!r} not in {function}")


def traced(model, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.trace(model, args, check_trace=False)


def imported(script_module) -> ir.Module:
    mb = ModuleBuilder()
    mb.import_module(script_module._c)
    mb.verify()
    return mb.module


def ops(module: ir.Module, name: str | None = None) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op):
        if name is None or op.name == name:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


HERE = Path(__file__).name


def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0


class Inner(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return double(x) + 1.0


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.scale = 3.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.inner(x)
        return torch.relu(y) * self.scale


class Upsampler(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=2.0, mode="bicubic")


class WithUpsampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = Upsampler()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(x) - 1.0


# --- scripted -------------------------------------------------------------------------------


class Located(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, Dict[str, int]]:
        y = x * self.scale
        return torch.relu(y), {"n": 1}


def test_scripted_op_is_named_and_located_at_its_source_token():
    line, col = line_of(Located.forward, "x * self.scale")
    [mul] = ops(imported(torch.jit.script(Located())), "torch.aten.mul.Scalar")
    assert str(mul.location) == f'loc("aten::mul"("{__file__}":{line}:{col}))'


def test_node_without_a_source_range_borrows_the_next_located_one_without_its_name():
    # The JIT records no source range for the GetAttr that reads self.scale; the op that uses
    # it (the multiplication) is the next located node.
    line, col = line_of(Located.forward, "x * self.scale")
    [get_scale] = [op for op in ops(imported(torch.jit.script(Located())), "torch.prim.GetAttr")
                   if ir.StringAttr(op.attributes["name"]).value == "scale"]
    assert str(get_scale.location) == f'loc("{__file__}":{line}:{col})'


def test_scripted_call_is_located_so_the_inliner_builds_the_chain():
    line, _ = line_of(Outer.forward, "self.inner(x)")
    [call] = ops(imported(torch.jit.script(Outer())), "torch.prim.CallMethod")
    assert frames(call.location) == [(HERE, line)]


@pytest.mark.parametrize("how", ["script", "trace"])
def test_every_op_but_a_traced_call_has_a_source_frame(how):
    script = torch.jit.script(Outer()) if how == "script" else traced(Outer(), torch.ones(3))
    functions = ops(imported(script), "func.func")
    assert len(functions) == (3 if how == "script" else 2)  # scripting keeps `double` a function
    for function in functions:
        for op in ops(function):
            if how == "trace" and op.name == "torch.prim.CallMethod":
                assert str(op.location) == "loc(unknown)"
            else:
                assert frames(op.location), (op.name, str(op.location))


# --- traced ---------------------------------------------------------------------------------


def test_traced_op_carries_its_python_call_stack():
    helper_line, _ = line_of(double, "x * 2.0")
    inner_line, _ = line_of(Inner.forward, "double(x) + 1.0")
    outer_line, _ = line_of(Outer.forward, "self.inner(x)")
    module = imported(traced(Outer(), torch.ones(3)))
    by_chain = {tuple(frames(op.location)): op for op in ops(module, "torch.aten.mul.Tensor")}
    # No frame of nn.Module's dispatch, of the tracer, or of this test calling the tracer.
    assert set(by_chain) == {((HERE, helper_line), (HERE, inner_line), (HERE, outer_line)),
                             ((HERE, line_of(Outer.forward, "* self.scale")[0]),)}
    mul = by_chain[((HERE, helper_line), (HERE, inner_line), (HERE, outer_line))]
    assert str(mul.location).startswith('loc(callsite("aten::mul"(')
    [relu] = ops(module, "torch.aten.relu")
    assert frames(relu.location) == [(HERE, line_of(Outer.forward, "torch.relu(y)")[0])]


def test_inlining_keeps_the_traced_chain_as_recorded():
    # The trace's CallMethod is loc(unknown): torch-mlir's inliner must not append a caller.
    helper_line, _ = line_of(double, "x * 2.0")
    inner_line, _ = line_of(Inner.forward, "double(x) + 1.0")
    outer_line, _ = line_of(Outer.forward, "self.inner(x)")
    module = torchscript.compile(Outer(), [torch.ones(3)], output_type="torch", use_tracing=True)
    muls = [op for op in ops(module) if op.name in ("torch.aten.mul.Scalar", "torch.aten.mul.Tensor")]
    assert frames(muls[0].location) == [(HERE, helper_line), (HERE, inner_line), (HERE, outer_line)]


def test_tracer_stack_text_is_cut_at_the_tracer_and_skips_module_dispatch():
    text = ("/m/model.py(7): forward\n"
            "/env/torch/nn/modules/module.py(1768): _slow_forward\n"
            "/env/torch/nn/modules/module.py(1789): _call_impl\n"
            "/m/model.py(13): forward\n"
            "/env/torch/jit/_trace.py(1216): trace_module\n"
            "/m/run.py(3): <module>\n")
    assert [(f.file, f.line, f.col) for f in traced_frames(text)] == [
        ("/m/model.py", 7, 0), ("/m/model.py", 13, 0)]


def test_explain_lands_on_the_models_own_line_of_a_nested_traced_module(tmp_path):
    # The failing op is F.interpolate's (torch's code); the first frame of the model's own code
    # is the submodule's line, called from the parent's.
    path = tmp_path / "up.mlir"
    write_module(imported(traced(WithUpsampler(), torch.ones(1, 1, 4, 4))), path, WriteOptions())
    result = explain_file(path, TORCHSCRIPT)
    exp = result.explanations[0]
    assert "upsample_bicubic2d" in exp.message
    located = [(Path(f.file).name, f.line) for f in exp.frames]
    up_line, _ = line_of(Upsampler.forward, "F.interpolate(")
    parent_line, _ = line_of(WithUpsampler.forward, "self.up(x)")
    assert located[0][0] == "functional.py"
    assert located[1:] == [(HERE, up_line), (HERE, parent_line)]
    assert (Path(exp.user_frame().file).name, exp.user_frame().line) == (HERE, up_line)
