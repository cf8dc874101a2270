"""Every JSON the harness writes names its schema one way: a ``"schema"`` key holding
``harness.NAME/MAJOR`` (no ``harness-NAME/1``, no ``"format": 1``)."""

from __future__ import annotations

import re
from pathlib import Path

from support import ROOT

PACKAGE = ROOT / "harness"
SPELLED = re.compile(r"""["']harness[.-][a-z-]+/\d+["']""")
RIGHT = re.compile(r"""["']harness\.[a-z-]+/\d+["']""")


def _sources() -> list[tuple[Path, str]]:
    return [(p, p.read_text()) for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts]


def test_every_schema_name_is_harness_dot_name_slash_major():
    wrong = [f"{p.relative_to(PACKAGE)}: {m.group(0)}" for p, text in _sources()
             for m in SPELLED.finditer(text) if not RIGHT.fullmatch(m.group(0))]
    assert not wrong, wrong


def test_no_record_names_its_schema_format():
    wrong = [f"{p.relative_to(PACKAGE)}:{n}" for p, text in _sources()
             for n, line in enumerate(text.splitlines(), 1) if re.search(r"""["']format["']\s*:""", line)]
    assert not wrong, wrong


def test_the_writers_use_the_one_spelling():
    from harness.compiler.builds import BUILD_SCHEMA
    from harness.diagnose.build_bisect import BUILD_BISECT_SCHEMA
    from harness.diagnose.diff import DIFF_SCHEMA
    from harness.diagnose.report.result import REPORT_SCHEMA

    for name in (BUILD_SCHEMA, BUILD_BISECT_SCHEMA, DIFF_SCHEMA, REPORT_SCHEMA):
        assert re.fullmatch(r"harness\.[a-z-]+/1", name), name
