"""A port runs its model in eager once per input set: both frontends and every check compare
against those outputs (each used to run the model again)."""

from __future__ import annotations

import torch

from harness.models.hf_inputs import InputSet
from harness.port.subject import Subject


class Counting(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x * 2


def test_eager_runs_once_per_input_set():
    module = Counting()
    first = InputSet(("x",), (torch.ones(2),), "ones")
    second = InputSet(("x",), (torch.full((2,), 3.0),), "threes")
    subject = Subject("counting", module, first, second)
    for _ in range(3):
        assert subject.expected(first)[0].tolist() == [2.0, 2.0]
        assert subject.expected(second)[0].tolist() == [6.0, 6.0]
    assert module.calls == 2


def test_an_equal_but_other_input_set_is_run():
    """Keyed by the set itself: another set with the same names and description is new inputs."""
    module = Counting()
    first = InputSet(("x",), (torch.ones(2),), "ones")
    other = InputSet(("x",), (torch.zeros(2),), "ones")
    subject = Subject("counting", module, first, first)
    assert subject.expected(first)[0].tolist() == [2.0, 2.0]
    assert subject.expected(other)[0].tolist() == [0.0, 0.0]
    assert module.calls == 2
