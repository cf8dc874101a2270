"""``--dynamic`` on OPT's driver: the second input set differs along each dimension asked for
(it used to be built at the first set's shape, so a dynamic OPT port ran one shape only), and a
dimension OPT's inputs do not have is refused."""

from __future__ import annotations

import pytest

from harness.errors import ModelOptionError
from harness.models.drivers import prepare
from harness.models.dynamic import parse_dynamic
from harness.models.generic import ModelOptions


def test_the_second_set_differs_along_batch_and_seq():
    prepared = prepare("opt", ModelOptions(batch=2, seq=8, dynamic=parse_dynamic("batch,seq")))
    first = [tuple(t.shape) for t in prepared.inputs.tensors]
    second = [tuple(t.shape) for t in prepared.second_inputs.tensors]
    assert first == [(2, 8), (2, 8)]
    assert second[0] == second[1]
    assert second[0][0] != 2 and second[0][1] != 8
    assert str(prepared.dynamic).startswith("batch=")
    assert "--dynamic batch=" in prepared.second_inputs.description


def test_seq_alone_keeps_the_batch():
    prepared = prepare("opt", ModelOptions(batch=2, seq=8, dynamic=parse_dynamic("seq")))
    batch, seq = prepared.second_inputs.tensors[0].shape
    assert batch == 2 and seq != 8


def test_a_static_port_keeps_one_shape():
    prepared = prepare("opt", ModelOptions(batch=2, seq=8))
    assert not prepared.dynamic
    assert [tuple(t.shape) for t in prepared.second_inputs.tensors] == [(2, 8), (2, 8)]


def test_a_dimension_opt_has_not_is_refused():
    with pytest.raises(ModelOptionError, match=r"--dynamic height: OPT's driver feeds input_ids"):
        prepare("opt", ModelOptions(dynamic=parse_dynamic("height")))
