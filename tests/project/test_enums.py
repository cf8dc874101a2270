"""Every closed set in the package is a plain enum (``ParsableEnum`` or ``Enum``): none mixes in
``str`` or ``int``. A mixed-in member equals its value (``DType.FLOAT32 == "float32"``), so
mypy's ``strict_equality`` (pyproject.toml) cannot flag a member compared with a string, and a
misspelt string compares False without a word."""

from __future__ import annotations

import ast
from pathlib import Path

from support import ROOT

PACKAGE = ROOT / "harness"
_ENUMS = {"Enum", "ParsableEnum", "IntEnum", "StrEnum", "Flag", "IntFlag"}
_MIXINS = {"str", "int", "float", "bytes"}


def _name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def mixed_in_enums(package: Path = PACKAGE) -> list[str]:
    """Enum classes deriving from a builtin value type too, or from IntEnum/StrEnum (which do)."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {_name(b) for b in node.bases}
            if bases & {"IntEnum", "StrEnum", "IntFlag"} or (bases & _ENUMS and bases & _MIXINS):
                found.append(f"{path.relative_to(package)}:{node.lineno}: {node.name}")
    return found


def test_no_enum_mixes_in_a_value_type():
    assert mixed_in_enums() == []


def test_the_mixin_check_can_fail(tmp_path):
    (tmp_path / "a.py").write_text(
        "import enum\nfrom enum import Enum, StrEnum\n\n\nclass Plain(Enum):\n    A = 'a'\n\n\n"
        "class Mixed(str, Enum):\n    A = 'a'\n\n\nclass Strs(StrEnum):\n    A = 'a'\n\n\n"
        "class Ints(int, enum.Enum):\n    A = 1\n\n\nclass Text(str):\n    pass\n")
    assert mixed_in_enums(tmp_path) == ["a.py:9: Mixed", "a.py:13: Strs", "a.py:17: Ints"]
