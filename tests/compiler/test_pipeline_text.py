"""harness.compiler.pipeline_text: the one lexer and parser of textual pass pipelines, and the
MLIR string unescaping bisect uses for a reproducer's recorded pipeline."""

from __future__ import annotations

import pytest

from harness.compiler.pipeline_text import (
    PassRef,
    TokenKind,
    parse_pipeline,
    pipeline_prefix,
    tokenize,
)
from harness.compiler.text import closing_brackets, matching_close, strip_ansi, unescape_mlir_string
from harness.errors import PipelineConfigError


def kinds(text: str) -> list[tuple[TokenKind, str, int]]:
    return [(t.kind, t.text, t.offset) for t in tokenize(text)]


def test_tokens_have_kinds_text_and_offsets():
    assert kinds("builtin.module(cse, canonicalize{max-iterations=3})") == [
        (TokenKind.NAME, "builtin.module", 0),
        (TokenKind.LPAREN, "(", 14),
        (TokenKind.NAME, "cse", 15),
        (TokenKind.COMMA, ",", 18),
        (TokenKind.NAME, "canonicalize", 20),
        (TokenKind.OPTIONS, "max-iterations=3", 32),
        (TokenKind.RPAREN, ")", 50),
        (TokenKind.END, "", 51),
    ]


def test_an_options_group_is_one_token_with_nested_braces_and_quoted_brackets():
    toks = kinds('p{a={x,y} b="})(" c=1}')
    assert toks[1] == (TokenKind.OPTIONS, 'a={x,y} b="})(" c=1', 1)
    assert toks[-1][0] is TokenKind.END


def test_registered_pipeline_options_with_lists_parse_as_one_pass():
    passes = parse_pipeline("builtin.module(torchscript-module-to-torch-backend-pipeline"
                            "{backend-legal-ops=aten.flatten.using_ints,aten.adaptive_avg_pool2d})")
    assert passes == [PassRef("torchscript-module-to-torch-backend-pipeline",
                              "backend-legal-ops=aten.flatten.using_ints,aten.adaptive_avg_pool2d",
                              ("builtin.module",))]
    assert passes[0].is_pipeline


@pytest.mark.parametrize("text, offset, says", [
    ("builtin.module(cse", 18, "'builtin.module(' is not closed"),
    ("builtin.module(cse))", 19, "unexpected ')'"),
    ("cse{a=1", 3, "options group '{' is not closed"),
    ("builtin.module(cse;dce)", 18, "unexpected ';dce)'"),
])
def test_errors_name_the_offset(text, offset, says):
    with pytest.raises(PipelineConfigError, match=rf"{says!s}".replace("(", r"\(").replace(")", r"\)")) as e:
        parse_pipeline(text)
    assert f"at offset {offset}" in str(e.value)


def test_dump_listing_is_cut_from_following_output():
    stderr = ("builtin.module(func.func(cse{}), torch-verify-backend-contract-no-decompositions)\n"
              "x.mlir:3:4: error: failed (with parens)\n")
    listing = pipeline_prefix(stderr)
    assert [str(p.name) for p in parse_pipeline(listing)] == [
        "cse", "torch-verify-backend-contract-no-decompositions"]
    assert pipeline_prefix("no pipeline here") == ""


def test_matching_close_skips_quoted_brackets():
    assert matching_close('a(b")"c)', 1, quotes='"') == 7
    assert matching_close('a(b")"c)', 1) == 4
    assert matching_close("(()", 0) == -1


def test_unescape_mlir_string_keeps_non_ascii_and_escapes():
    # MLIR prints a byte it does not print as itself as two hex digits: UTF-8 bytes of "é".
    assert unescape_mlir_string(r"/data/caf\C3\A9/x.mlir") == "/data/café/x.mlir"
    assert unescape_mlir_string(r"a\22b\\c\n") == 'a"b\\c\n'
    assert unescape_mlir_string("plain") == "plain"


def test_closing_brackets_agrees_with_matching_close():
    for text in ("f(a(b)c)(d", "((()))", ")(", "x(y)z)(", "(" * 50 + ")" * 49):
        closes = closing_brackets(text)
        assert closes == {i: matching_close(text, i) for i, ch in enumerate(text)
                          if ch == "(" and matching_close(text, i) >= 0}, text
    assert closing_brackets("a<b<c>>", pairs="<>") == {1: 6, 3: 5}


def test_terminal_colours_are_dropped_from_a_message():
    """torch.onnx.export's ConversionError colours its step ("\\x1b[96mThis is step 3/3\\x1b[0m"),
    which reached the record and the blocker's signature as it was."""
    said = "Failed to convert. \x1b[96mThis is step 3/3\x1b[0m of exporting the model to ONNX."
    assert strip_ansi(said) == "Failed to convert. This is step 3/3 of exporting the model to ONNX."
    assert strip_ansi("plain [96m text") == "plain [96m text"  # no escape, nothing taken
