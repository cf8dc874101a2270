"""Helpers shared by the test files (tests/<package>/test_*.py), imported as ``support`` and
``support.NAME``: tests/ is on sys.path (``pythonpath`` in pyproject.toml's pytest options).

This module holds the paths every test folder reaches and ``harness()``, the command line as a
user runs it; the modules beside it hold what a few folders share (fake builds, sweep folders,
mutations of real stderr, process watching, small programs, headless Chromium)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# The checkout under test, and its test data (tests/data/crashers/README.md says what each is).
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CRASHERS = DATA / "crashers"


def harness(*args: object, env: Mapping[str, str | None] | None = None, cwd: Path | str = ROOT,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python -m harness ARGS`` (each ``str()``-ed) with the venv's Python, its output captured as
    text and its exit status left to the test (no ``check``); killed after ``timeout`` seconds.

    It runs in ``cwd`` (the repository root unless given) with this checkout's harness first on
    PYTHONPATH, so a run from another folder imports the code under test and not an installed
    copy. ``env`` changes the environment the tests run in: a value sets a variable, None removes
    it; a PYTHONPATH given comes after the checkout's."""
    child = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            child.pop(name, None)
        else:
            child[name] = value
    child["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), child.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=child, timeout=timeout)
