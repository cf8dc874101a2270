"""The bundle's templates (``templates/*.in``, installed as package data).

Placeholders are ``@NAME@``, as CMake's ``configure_file`` has them: neither bash (``$``,
``${CMD[@]}``) nor markdown uses that form, so the templates read as the files they make. A
line that holds only a placeholder whose value is empty goes, with the blank line after it, so
optional sections leave no gap.
"""

from __future__ import annotations

import re
import string
from importlib import resources


class _Template(string.Template):
    delimiter = "@"
    flags = re.RegexFlag(0)
    # A string, as string.Template documents (its __init_subclass__ compiles it with flags);
    # the .pyi types only the compiled form.
    pattern = (
        r"@(?:(?P<escaped>(?!))|(?P<named>[A-Z][A-Z0-9_]*)@|(?P<braced>(?!))|(?P<invalid>(?!)))"  # type: ignore[assignment]
    )


_ALONE = re.compile(r"^@([A-Z][A-Z0-9_]*)@$")


def load(name: str) -> _Template:
    return _Template(resources.files(__package__).joinpath("templates", name).read_text())


def render(name: str, values: dict[str, str]) -> str:
    """The template filled in; every placeholder must have a value and every value a place."""
    template = load(name)
    wanted = set(template.get_identifiers())
    if wanted != set(values):
        raise KeyError(f"template {name}: missing {sorted(wanted - set(values))}, "
                       f"unused {sorted(set(values) - wanted)}")
    lines = template.template.splitlines(keepends=True)
    kept: list[str] = []
    skip_blank = False
    for line in lines:
        if skip_blank and not line.strip():
            skip_blank = False
            continue
        skip_blank = False
        alone = _ALONE.match(line.rstrip("\n"))
        if alone and values[alone.group(1)] == "":
            skip_blank = True
            continue
        kept.append(line)
    return _Template("".join(kept)).substitute(values)
