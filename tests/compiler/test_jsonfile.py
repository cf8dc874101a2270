"""Strict JSON (issue 41 item 7): what the harness writes parses in any standard reader, and a
non-standard file is refused where it is read."""

from __future__ import annotations

import json
import math

import pytest
from conftest import non_standard_json

from harness.compiler import jsonfile


def test_non_finite_numbers_are_written_as_text_at_any_depth():
    data = {"a": math.inf, "b": [1.5, -math.inf, {"c": math.nan}], "d": (2, math.nan)}
    text = jsonfile.dumps(data, indent=1)
    assert "Infinity" not in text and "NaN" not in text
    back = json.loads(text)
    assert back == {"a": "inf", "b": [1.5, "-inf", {"c": "nan"}], "d": [2, "nan"]}
    assert jsonfile.number(back["a"]) == math.inf and math.isnan(jsonfile.number(back["d"][1]))
    assert jsonfile.number(3) == 3.0
    with pytest.raises(ValueError):
        jsonfile.number("seven")


@pytest.mark.parametrize("word", ["Infinity", "-Infinity", "NaN"])
def test_the_bare_words_are_refused(word):
    with pytest.raises(json.JSONDecodeError, match="is not JSON"):
        jsonfile.loads(f'{{"x": {word}}}')
    assert json.loads(f'{{"x": {word}}}')  # what Python's own reader lets through


def test_anything_else_json_cannot_hold_still_raises():
    with pytest.raises(TypeError):
        jsonfile.dumps({"x": object()})


@pytest.mark.plants_bad_json
def test_the_suite_wide_check_finds_a_non_standard_record(tmp_path):
    """conftest checks every test's tmp_path after it; this is the check failing on purpose."""
    (tmp_path / "deep").mkdir()
    (tmp_path / "deep" / "record.json").write_text('{"max_abs_diff": Infinity}')
    (tmp_path / "ok.json").write_text(jsonfile.dumps({"max_abs_diff": math.inf}))
    (tmp_path / "broken.json").write_text("{not json")  # malformed input is a test's own business
    assert non_standard_json(tmp_path) == [
        "deep/record.json: 'Infinity' is not JSON (this project writes non-finite numbers as "
        "\"inf\", \"-inf\" and \"nan\"): line 1 column 1 (char 0)"]


def test_an_enum_member_is_written_as_its_value():
    from harness.compiler.targets import Target

    assert jsonfile.dumps({"target": Target.TOSA, "list": [Target.LINALG]}) == (
        '{"target": "tosa", "list": ["linalg"]}')
