"""issue.md quotes text the input controls (IR, diagnostics) without letting it out of its
quotes: fences longer than any backtick run, one-line inline code, escaped
prose. Checked on the helpers and on a real bundle whose input closes a ``` fence."""

from __future__ import annotations

import re
from pathlib import Path

from harness.diagnose.report import ReportOptions, make_report
from harness.diagnose.report.markdown import code, fence, one_line, prose


def _outside_fences(markdown: str) -> list[str]:
    """The lines CommonMark reads outside fenced code blocks (line ends: LF, CR, CR LF)."""
    out, closing = [], None
    for line in re.split(r"\r\n|\r|\n", markdown):
        if closing is None:
            m = re.match(r"^ {0,3}(`{3,})[^`]*$", line)
            if m:
                closing = re.compile(rf"^ {{0,3}}`{{{len(m.group(1))},}}\s*$")
            else:
                out.append(line)
        elif closing.match(line):
            closing = None
    return out


def test_a_fence_outlasts_every_backtick_run_in_its_text():
    text = "a\n```\n# Heading\n`````\nb"
    block = fence(text, "mlir")
    assert block.startswith("``````mlir\n") and block.endswith("\n``````")
    assert _outside_fences(block) == []
    assert fence("plain") == "```\nplain\n```"


def test_inline_code_and_prose_stay_on_one_line_and_unrendered():
    assert code("a`b") == "``a`b``" and code("`x`") == "`` `x` ``"
    assert one_line("a\rb\nc\u2028d") == "a\\rb\\nc\\u2028d"
    assert prose("![x](http://e/x.png) <img> `c`") == "!\\[x\\](http://e/x.png) \\<img> \\`c\\`"


INJECTING = (
    "func.func @f(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[?,1],si64> {\n"
    "  %0 = torch.aten.nonzero %arg0 : !torch.vtensor<[4],f32> -> !torch.vtensor<[?,1],si64> "
    'loc("x\r```\r# Injected\r![img](http://example.invalid/x.png)\r":1:2)\n'
    "  return %0 : !torch.vtensor<[?,1],si64>\n}\n")


def test_input_that_closes_a_fence_stays_inside_it(tmp_path):
    """A carriage return is a line end to markdown but not to MLIR's string literals, so this
    input is valid IR whose quoted text holds a line of backticks, a heading and an image."""
    src = tmp_path / "inject.mlir"
    src.write_bytes(INJECTING.encode())
    result = make_report(src, "torch-to-linalg", options=ReportOptions(out_dir=tmp_path / "out",
                                                                        reduce=False))
    issue = (Path(result.folder) / "issue.md").read_bytes().decode()
    assert "# Injected" in issue  # quoted, in the IR and the diagnostics
    outside = _outside_fences(issue)
    assert outside and outside[0].startswith("# [torch-mlir] ")
    for line in outside:
        assert "Injected" not in line and "example.invalid" not in line, line
    assert not [line for line in outside if line.startswith("#") and not line.startswith(("# [", "## "))]


def test_a_title_keeps_its_code_spans_and_brackets():
    # Titles are pasted into GitHub's title field: "\[known #4749\]" and "\`aten.x\`" showed
    # their escapes there.
    from harness.diagnose.report import markdown as md

    assert md.heading("[known #1] No lowering of `aten.__and__.Tensor` for a<b") == \
        "[known #1] No lowering of `aten.__and__.Tensor` for a\\<b"
    assert md.heading("an odd ` tick") == md.prose("an odd ` tick")  # unbalanced: all escaped
