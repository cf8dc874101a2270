"""The one MLIR-location parser (harness.compiler.locations): what every tool reads an op's
Python line with. Inputs are locations as torch-mlir-opt and the bindings print them."""

from __future__ import annotations

from torch_mlir import ir

from harness.compiler.locations import SourceLocation, file_locations, first_file_location


def test_a_call_site_reads_innermost_first():
    printed = 'loc(callsite("/m/masking_utils.py":54:16 at "/m/modeling_opt.py":191:8))'
    assert file_locations(printed) == [SourceLocation("/m/masking_utils.py", 54, 16),
                                       SourceLocation("/m/modeling_opt.py", 191, 8)]
    assert first_file_location(printed).file_line == "/m/masking_utils.py:54"


def test_named_and_fused_locations_unwrap():
    printed = 'loc(fused["aten::mm"("/a.py":3:1), "/b.py":4:2])'
    assert [str(f) for f in file_locations(printed)] == ["/a.py:3:1", "/b.py:4:2"]


def test_no_file_position():
    assert first_file_location("loc(unknown)") is None
    assert first_file_location('loc("aten::add")') is None
    assert file_locations("") == []


def test_escaped_quote_backslash_and_utf8_in_a_path_survive():
    """MLIR prints a file name as a string literal: the path comes back as it was."""
    path = '/home/a "b"/c\\d/caf\u00e9/model.py'
    with ir.Context():
        printed = str(ir.Location.file(path, 7, 3))
    assert '\\22' in printed  # the printer escaped the quote (as hex)
    assert first_file_location(printed) == SourceLocation(path, 7, 3)


def test_the_column_is_optional_in_hand_written_text():
    assert first_file_location('"x.py":12') == SourceLocation("x.py", 12, 0)
