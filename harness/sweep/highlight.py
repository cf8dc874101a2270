"""MLIR snippets as highlighted HTML, with inline CSS (the board opens from a file, offline).

The lexer is ``mlir-pygments``' (pinned in pyproject.toml); an environment installed before
that pin falls back to pygments' LLVM IR lexer, which colours SSA values, types and numbers but
not dialect ops, and the board's footer says which one ran.
"""

from __future__ import annotations

import html

from pygments import highlight as _highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer

CSS_CLASS = "mlir"


def lexer() -> tuple[Lexer, str]:
    """The MLIR lexer and its name as the footer shows it."""
    try:
        from mlir_pygments import MLIRLexer
    except ImportError:
        from pygments.lexers.asm import LlvmLexer

        return LlvmLexer(), "pygments' LLVM lexer (mlir-pygments is not installed)"
    import importlib.metadata

    return MLIRLexer(), f"mlir-pygments {importlib.metadata.version('mlir-pygments')}"


def css() -> str:
    return HtmlFormatter(style="default").get_style_defs(f".{CSS_CLASS}")


def mlir_html(text: str, max_lines: int = 40) -> str:
    """``text`` as a highlighted ``<pre>``, cut after ``max_lines`` lines (the cut is said)."""
    lines = text.splitlines()
    cut = len(lines) - max_lines
    shown = "\n".join(lines[:max_lines]) + "\n"
    try:
        body = _highlight(shown, lexer()[0], HtmlFormatter(nowrap=True))
    except Exception:  # a lexer bug must not cost the page: plain text then
        body = html.escape(shown)
    more = f'<span class="cut">… {cut} more lines</span>' if cut > 0 else ""
    return f'<pre class="{CSS_CLASS}">{body}{more}</pre>'
