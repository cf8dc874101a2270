"""A blocker's own line from the eager call of its op (issue 45, item 7): torch.export's stack
of transformers' MoE ops stops at the experts' dispatcher (``integrations/moe.py:634``), so the
FX blocker ``aten.histc`` was placed there instead of its own line (449)."""

from __future__ import annotations

import inspect

import torch

from harness.port.eager_stacks import eager_stacks, op_key, with_eager_stacks
from harness.port.record import Blocker, PortStage

HERE = __file__


def _experts(x: torch.Tensor) -> torch.Tensor:
    return torch.histc(x, bins=4, min=0, max=3)  # the op's own line


def _dispatch(x: torch.Tensor) -> torch.Tensor:
    return _experts(x)  # the dispatcher's line, where a short stack stops


def _line(function, text: str) -> str:
    lines, start = inspect.getsourcelines(function)
    return f"{HERE}:{start + next(i for i, s in enumerate(lines) if text in s)}"


def _blocker(op: str, location: str) -> Blocker:
    return Blocker(rank=1, stage=PortStage.parse("fx-to-torch"), signature="s", op=op,
                   location=location, frames=[location], explanation="known")


def test_op_keys():
    assert op_key('torch.operator "torch.aten.histc"') == "aten.histc"
    assert op_key("torch.aten.__and__.Tensor") == "aten.__and__"
    assert op_key('torch.operator "torch.transformers.grouped_mm_fallback"') == \
        "transformers.grouped_mm_fallback"
    assert op_key("arith.fptosi") == "" and op_key("") == ""


def test_a_blocker_at_an_outer_frame_of_its_ops_eager_call_moves_to_the_ops_own_line():
    own, dispatcher = _line(_experts, "histc"), _line(_dispatch, "_experts(x)")
    stacks = eager_stacks(lambda: _dispatch(torch.zeros(8)), {"aten.histc", "aten.never"})
    assert stacks["aten.histc"][:2] == [own, dispatcher] and "aten.never" not in stacks
    short, inner, other = with_eager_stacks([
        _blocker('torch.operator "torch.aten.histc"', dispatcher),
        _blocker('torch.operator "torch.aten.histc"', own),
        _blocker("torch.aten.never", dispatcher)], stacks)
    assert short.location == own and short.frames[:2] == [own, dispatcher]
    assert short.explanation.startswith("known The program's stack of this op stops at")
    assert inner.location == own and inner.explanation == "known"  # already its own line
    assert other.location == dispatcher  # an op the eager forward never called


def test_a_forward_that_raises_gives_what_it_saw():
    def forward() -> None:
        _dispatch(torch.zeros(8))
        raise RuntimeError("boom")

    assert "aten.histc" in eager_stacks(forward, {"aten.histc"})
