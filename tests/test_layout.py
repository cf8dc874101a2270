"""The package layout follows the data path: models -> frontends -> compiler -> execute -> tools
(-> fixes, which answer what the tools diagnose).

Dependencies point one way along it: the compiler side is a service that knows nothing of
torch; frontends produce IR with its help; execute and the tools read what the compiler
returns and never reach back up to frontends or models. Everything may read the leaves
(errors, versions, knowledge); the flows over the whole path (cli, port, emit, the
``harness.torchscript`` alias) may import anything. No module grows past ~600 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "harness"
CHAIN = ("models", "frontends", "compiler", "execute", "tools", "fixes")
LEAVES = {"errors", "versions", "knowledge", "enums"}
# What each package may import besides itself and the leaves.
ALLOWED = {
    "models": set(),
    "frontends": {"compiler"},
    "compiler": set(),
    "execute": {"compiler"},
    "tools": {"compiler", "execute"},
    "fixes": {"compiler", "execute", "tools"},  # named fixes: after the diagnosis they answer
    "leaf": set(),
}
FLOWS = {"cli", "port", "emit", "torchscript", "__main__", "__init__"}
MAX_LINES = 600


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> list[str]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every harness module ``path`` imports (top level or inside functions), absolute."""
    here = _dotted(path)
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "harness"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "harness":
                continue
            # `from harness.x import y` may name a module y: check the deepest one that exists.
            for alias in node.names:
                deeper = f"{target}.{alias.name}"
                found.append((node.lineno, deeper if _exists(deeper) else target))
    return found


def _exists(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _layer(dotted: list[str]) -> str:
    """The chain package, "leaf", or "flow" of a module named by its dotted parts."""
    if len(dotted) < 2:
        return "flow"
    head = dotted[1]
    if head in CHAIN:
        return head
    return "leaf" if head in LEAVES else "flow"


def test_the_chain_names_existing_packages():
    present = [p for p in CHAIN if (PACKAGE / p / "__init__.py").is_file()]
    assert present and set(present) <= set(CHAIN)
    assert {"models", "frontends", "compiler", "tools"} <= set(present)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down_the_data_path(path):
    layer = _layer(_dotted(path))
    if layer == "flow":
        return
    wrong = []
    for line, target in _imports(path):
        target_layer = _layer(target.split("."))
        if target_layer == layer or (target_layer == "leaf" and layer != "leaf"):
            continue
        if target_layer not in ALLOWED[layer]:
            wrong.append(f"line {line}: {target}")
    assert not wrong, f"{path.relative_to(PACKAGE)} ({layer}) imports against the data path: {wrong}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_the_size_limit(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {lines} lines (limit {MAX_LINES}): split it by job"


def test_the_checker_sees_a_violation(tmp_path):
    """The rule can fail: a tools module importing a model or a frontend is caught."""
    fake = PACKAGE / "tools" / "violation.py"
    fake.write_text("from harness.models import opt\nfrom ..frontends import fx\nfrom harness.compiler import records\n")
    try:
        with pytest.raises(AssertionError, match=r"line 1: harness.models.opt.*line 2: harness.frontends.fx"):
            test_imports_go_down_the_data_path(fake)
    finally:
        fake.unlink()
