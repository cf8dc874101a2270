"""DType is a closed set like the project's others: a plain enum, not a ``str`` mixin.

A ``str``-mixin member equals its value (``DType.FLOAT32 == "float32"``), so mypy's strict
equality cannot flag a member compared with a string, and a typo in the string is silently
False. The records still read and write the same JSON text: values out, members in."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from harness.compiler import jsonfile
from harness.errors import UnsupportedDTypeError
from harness.execute.closeness import Tolerances
from harness.execute.dtypes import DType, TensorSignature, TensorSpec


def test_a_member_is_not_its_text():
    assert not isinstance(DType.FLOAT32, str)
    assert DType.FLOAT32 != "float32"  # type: ignore[comparison-overlap]
    assert "float32" not in {DType.FLOAT32}
    # the text is the value, as str() and f-strings give it
    assert (DType.FLOAT32.value, str(DType.INT64), f"{DType.BOOL}") == ("float32", "int64", "bool")


@pytest.mark.parametrize("text, member", [
    ("float32", DType.FLOAT32), ("torch.float32", DType.FLOAT32), ("f32", DType.FLOAT32),
    ("si64", DType.INT64), ("i64", DType.INT64), ("ui8", DType.UINT8), ("float", DType.FLOAT32),
    ("torch.bool", DType.BOOL), ("complex<f64>", DType.COMPLEX128), (" half ", DType.FLOAT16),
])
def test_parse_reads_every_spelling(text, member):
    assert DType.parse(text) is member


def test_parse_takes_a_member_and_refuses_an_unknown_name():
    assert DType.parse(DType.BFLOAT16) is DType.BFLOAT16
    with pytest.raises(UnsupportedDTypeError, match=r"'qint8' \(a dtype name\)"):
        DType.parse("qint8")
    with pytest.raises(UnsupportedDTypeError):
        DType.parse("FLOAT32")  # numpy's names only: not the enum's member name


def test_the_libraries_types_come_from_the_value():
    assert DType.of(np.zeros(2, np.float16)) is DType.FLOAT16
    assert DType.of(torch.zeros(2, dtype=torch.int64)) is DType.INT64
    assert DType.UINT8.numpy == np.dtype("uint8") and DType.BOOL.torch is torch.bool
    assert np.zeros(1, DType.INT32.numpy).dtype == np.int32


def test_records_write_and_read_the_same_json_text():
    signature = TensorSignature("f", (TensorSpec(DType.FLOAT32, (2, None)),),
                                (TensorSpec(DType.INT64, ()),))
    text = json.dumps(signature.to_json())
    assert text == ('{"name": "f", "args": [{"dtype": "float32", "shape": [2, null]}], '
                    '"results": [{"dtype": "int64", "shape": []}]}')
    assert TensorSignature.from_json(json.loads(text)) == signature
    assert json.loads(jsonfile.dumps(Tolerances().to_json()))["float16"] == {"rtol": 1e-2, "atol": 1e-3}
    # a member anywhere in a record (a key too) is written as its value
    assert jsonfile.dumps({DType.FLOAT64: [DType.BOOL]}) == '{"float64": ["bool"]}'


def test_tolerances_are_looked_up_by_member():
    tolerances = Tolerances().with_overrides(["f32=0.5,0.25"])
    assert tolerances.for_dtype(DType.FLOAT32).rtol == 0.5
    assert tolerances.to_json()["float32"] == {"rtol": 0.5, "atol": 0.25}
