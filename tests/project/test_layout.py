"""The package layout follows the data path: models -> frontends -> compiler -> execute -> tools
(-> fixes, which answer what the tools diagnose).

Dependencies point one way along it: the compiler side is a service that knows nothing of
torch; frontends produce IR with its help; execute and the tools read what the compiler
returns and never reach back up to frontends or models. Everything may read the leaves
(errors, versions, knowledge); the flows over the whole path (cli, port (emit is in it), the
``harness.torchscript`` alias) may import anything. No module grows past ~600 lines.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from support import ROOT

PACKAGE = ROOT / "harness"
CHAIN = ("models", "frontends", "compiler", "execute", "diagnose", "fixes", "port", "sweep",
         "commands")
LEAVES = {"errors", "versions", "knowledge", "enums", "defaults"}
# What each package may import besides itself and the leaves.
ALLOWED = {
    "models": set(),
    "frontends": {"compiler"},
    "compiler": set(),
    "execute": {"compiler"},
    "diagnose": {"compiler", "execute"},
    "fixes": {"compiler", "execute", "diagnose"},  # named fixes: after the diagnosis they answer
    # the flows over the whole path, each over the ones before it (issue 41: port, sweep and
    # commands were "flow" and could import anything)
    "port": {"models", "frontends", "compiler", "execute", "diagnose", "fixes"},
    "sweep": {"models", "frontends", "compiler", "execute", "diagnose", "fixes", "port"},
    # never the CLI that parses for them
    "commands": {"models", "frontends", "compiler", "execute", "diagnose", "fixes", "port", "sweep",
                 "flow"},
    "leaf": set(),
}
FLOWS = {"cli", "compat", "torchscript", "__main__", "__init__"}
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
    assert {"models", "frontends", "compiler", "diagnose"} <= set(present)


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
        if target_layer not in ALLOWED[layer] or target in ("harness.cli", "harness.__main__"):
            wrong.append(f"line {line}: {target}")
    assert not wrong, f"{path.relative_to(PACKAGE)} ({layer}) imports against the data path: {wrong}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_the_size_limit(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, (f"{path.relative_to(PACKAGE)} has {lines} lines "
                                f"(limit {MAX_LINES}): split it by job")


MAX_TOP_LEVEL = 8  # issue 41: the package's own modules, besides __init__ and __main__


def top_level_modules(package: Path = PACKAGE) -> list[str]:
    """The modules directly in harness/ (the leaves, the CLI and the import aliases)."""
    return sorted(p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__"))


def test_at_most_eight_top_level_modules():
    """Everything else lives in the data path's packages; harness.torchscript and
    harness.importer stay, as upstream's conformance shim imports them by those names."""
    found = top_level_modules()
    assert {"torchscript", "importer", "cli"} <= set(found)
    assert len(found) <= MAX_TOP_LEVEL, f"{len(found)} top-level modules: {found}"


def test_the_top_level_count_can_fail(tmp_path):
    for name in ("__init__", "__main__", *(f"m{i}" for i in range(MAX_TOP_LEVEL + 1))):
        (tmp_path / f"{name}.py").write_text("")
    assert len(top_level_modules(tmp_path)) == MAX_TOP_LEVEL + 1


def test_the_checker_sees_a_violation(tmp_path):
    """The rule can fail: a tools module importing a model or a frontend is caught."""
    fake = PACKAGE / "diagnose" / "violation.py"
    fake.write_text("from harness.models import opt\nfrom ..frontends import fx\n"
                    "from harness.compiler import records\n")
    try:
        with pytest.raises(AssertionError, match=r"line 1: harness.models.opt.*line 2: harness.frontends.fx"):
            test_imports_go_down_the_data_path(fake)
    finally:
        fake.unlink()


def _folder_graph() -> dict[str, set[str]]:
    """Module -> the modules of its own folder it imports (a package's ``__init__`` counts as a
    module of the folder it opens)."""
    graph: dict[str, set[str]] = {}
    for path in _modules():
        here = ".".join(_dotted(path))
        folder = path.parent
        edges = graph.setdefault(here, set())
        for _, target in _imports(path):
            target_path = PACKAGE.parent.joinpath(*target.split("."))
            target_file = (target_path / "__init__.py" if (target_path / "__init__.py").is_file()
                           else target_path.with_suffix(".py"))
            if target != here and target_file.parent == folder:
                edges.add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_inside_a_folder():
    """Modules of one folder import each other one way: a shared helper goes down into a leaf
    module instead of two modules reaching into each other (lazy imports count too)."""
    cycles = _cycles(_folder_graph())
    assert not cycles, "import cycles inside a folder: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_checker_sees_a_cycle():
    graph = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}}
    assert _cycles(graph) == [["a.x", "a.y", "a.z"]]
    assert _cycles({"a.x": {"a.y"}, "a.y": set()}) == []


def test_the_cycle_checker_sees_a_planted_cycle_in_real_files():
    """Two real modules of one folder importing each other (one lazily) fail the rule."""
    first, second = PACKAGE / "diagnose" / "planted_a.py", PACKAGE / "diagnose" / "planted_b.py"
    first.write_text("from .planted_b import B\nA = 1\n")
    second.write_text("def b():\n    from harness.diagnose import planted_a\n    return planted_a.A\nB = 2\n")
    try:
        with pytest.raises(AssertionError,
                           match=r"harness.diagnose.planted_a <-> harness.diagnose.planted_b"):
            test_no_import_cycle_inside_a_folder()
    finally:
        first.unlink()
        second.unlink()
    test_no_import_cycle_inside_a_folder()  # and the tree itself has none


def _bare_base_raises(text: str) -> list[int]:
    """Lines that raise the base HarnessError itself (an error class says what kind it is)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) \
                and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "HarnessError":
            found.append(node.lineno)
    return found


def test_no_bare_harness_error_is_raised():
    bare = {str(p.relative_to(PACKAGE)): lines for p in _modules()
            if (lines := _bare_base_raises(p.read_text()))}
    assert not bare, f"raise a HarnessError subclass (UsageError, InputFileError, ...): {bare}"
    assert _bare_base_raises("raise HarnessError('x')\n") == [1]  # the checker sees one


def class_names(package: Path = PACKAGE) -> dict[str, list[str]]:
    """Each class name defined under ``package`` (top level or nested, in a class or a function)
    -> the modules, relative to ``package``, that define it."""
    found: dict[str, set[str]] = {}
    for path in sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts):
        module = path.relative_to(package).as_posix()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, set()).add(module)
    return {name: sorted(modules) for name, modules in sorted(found.items())}


def check_one_module_per_class_name(package: Path = PACKAGE) -> None:
    clashes = {name: modules for name, modules in class_names(package).items() if len(modules) > 1}
    assert not clashes, "class names defined in more than one module: " + "; ".join(
        f"{name} in {', '.join(modules)}" for name, modules in clashes.items())


def test_no_class_name_is_defined_in_two_modules():
    """Issue 41, one meaning per class name: a name (``Target``, ``Signature``) means one
    class across the package, so a reader never has to ask which one an annotation names."""
    check_one_module_per_class_name()


def test_the_class_name_check_can_fail(tmp_path):
    """Two modules defining one name fail it, a nested class counting as much as a top-level one."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("class Target:\n    pass\n\n\nclass Only:\n    pass\n")
    (tmp_path / "sub" / "b.py").write_text(
        "def f():\n    class Target:\n        pass\n    return Target\n")
    assert class_names(tmp_path) == {"Only": ["a.py"], "Target": ["a.py", "sub/b.py"]}
    with pytest.raises(AssertionError, match=r"Target in a\.py, sub/b\.py"):
        check_one_module_per_class_name(tmp_path)
    (tmp_path / "sub" / "b.py").write_text("class Other:\n    pass\n")
    check_one_module_per_class_name(tmp_path)


_FRONTEND_BRANCH = re.compile(r"(\bis\s+(not\s+)?|[!=]=\s*)FrontendName\.[A-Z]+\b"
                              r"|FrontendName\.[A-Z]+\s*(\bis\b|[!=]=)|\bin\s*\(FrontendName\.")


def frontend_branches(package: Path = PACKAGE) -> list[str]:
    """Lines outside ``frontends/`` that branch on which frontend a port is: what a frontend
    does differently belongs in its table entry (``FRONTENDS``), read through its fields."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts or (package / "frontends") in path.parents:
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if _FRONTEND_BRANCH.search(line):
                found.append(f"{path.relative_to(package)}:{number}: {line.strip()}")
    return found


def test_nothing_outside_the_frontends_branches_on_which_frontend_it_is():
    assert frontend_branches() == []


def test_the_frontend_branch_check_can_fail(tmp_path):
    (tmp_path / "frontends").mkdir()
    (tmp_path / "frontends" / "ok.py").write_text("if name is FrontendName.FX:\n    pass\n")
    (tmp_path / "port.py").write_text("if name is FrontendName.TORCHSCRIPT:\n    pass\n"
                                      "x = name == FrontendName.ONNX\n")
    assert frontend_branches(tmp_path) == ["port.py:1: if name is FrontendName.TORCHSCRIPT:",
                                           "port.py:3: x = name == FrontendName.ONNX"]


# What every frontend's Program holds; the rest is the payload, which only its frontend reads.
_PROGRAM_COMMON = {"name", "eager", "examples"}


def _program_api() -> set[str]:
    """Program's shared fields and the methods that read a payload through ``Payload``; not
    ``own``, a frontend's way to its own payload (elsewhere: asking which frontend made it)."""
    from harness.frontends.base import Program

    return _PROGRAM_COMMON | {n for n, v in vars(Program).items()
                              if callable(v) and not n.startswith("_") and n != "own"}


def _is_program(node: ast.expr) -> bool:
    """A name for a Program as the package spells one: ``program``, ``made.program``."""
    return (isinstance(node, ast.Name) and node.id == "program") or (
        isinstance(node, ast.Attribute) and node.attr == "program")


def _imports_frontends(tree: ast.Module) -> bool:
    """Whether a module imports the frontends (the modules that may hold a Program: elsewhere a
    ``program`` is another thing, the numerics search's cut of the IR)."""
    return any((isinstance(node, ast.ImportFrom) and "frontends" in (node.module or "").split("."))
               or (isinstance(node, ast.Import)
                   and any(a.name.startswith("harness.frontends") for a in node.names))
               for node in ast.walk(tree))


def program_field_reads(package: Path = PACKAGE, api: set[str] | None = None) -> list[str]:
    """Places outside ``frontends/`` that read what one frontend's program holds (a trace, an
    export, an .onnx file) other than through Program's own methods: its ``payload``, a field
    of a program that is not shared, or a ``replace(program, ...)`` that sets one."""
    api = _program_api() if api is None else api
    found = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts or (package / "frontends") in path.parents:
            continue
        tree = ast.parse(path.read_text(), str(path))
        if not _imports_frontends(tree):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and (
                    node.attr == "payload" or (_is_program(node.value) and node.attr not in api)):
                found.append(f"{path.relative_to(package)}:{node.lineno}: .{node.attr}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id == "replace" and node.args and _is_program(node.args[0])):
                found += [f"{path.relative_to(package)}:{node.lineno}: replace({k.arg}=)"
                          for k in node.keywords if k.arg not in _PROGRAM_COMMON]
    return found


def test_nothing_outside_the_frontends_reads_one_frontends_program():
    """Issue 41: a frontend owns its payload; the port asks a Program for a script, an export or
    a file (None where it has none), never for a field only one frontend's program has."""
    assert program_field_reads() == []


def test_the_program_field_check_can_fail(tmp_path):
    (tmp_path / "frontends").mkdir()
    (tmp_path / "frontends" / "ok.py").write_text("x = program.payload.module\n")
    (tmp_path / "other.py").write_text("a = program.text\n")  # no Program here: not read
    (tmp_path / "port.py").write_text(
        "from harness.frontends.base import Program\na = program.script\n"
        "b = made.program.onnx_path\nc = program.name, program.script_module()\n"
        "d = replace(program, dynamic_axes=())\ne = replace(program, name='m')\nf = thing.payload\n"
        "g = program.own(FxPayload)\n")
    assert program_field_reads(tmp_path, _PROGRAM_COMMON | {"script_module"}) == [
        "port.py:2: .script", "port.py:3: .onnx_path", "port.py:5: replace(dynamic_axes=)",
        "port.py:7: .payload", "port.py:8: .own"]
