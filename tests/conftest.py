"""Fixtures shared by the test files. Keep this small; add new fixtures at the end."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from support import harness

# The `filecheck` console script of the venv running the tests (the Python port of LLVM's).
FILECHECK = Path(sys.executable).with_name("filecheck")


@pytest.fixture(scope="session", autouse=True)
def temp_dir_in_basetemp(tmp_path_factory):
    """Points TMPDIR (for this process and every child) into pytest's base folder: what the
    harness writes to the temp dir by default (work folders it keeps for the user) then goes
    where pytest rotates it, and a CI machine that runs the suite day after day does not fill
    its /tmp (it did: "No space left on device" in the middle of a run)."""
    folder = tmp_path_factory.mktemp("tmpdir", numbered=False)
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    yield folder
    if before is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = before
    tempfile.tempdir = None


@pytest.fixture
def filecheck(tmp_path):
    """``filecheck(text, checks)``: runs FileCheck with ``checks`` (CHECK lines, dedented) on
    ``text`` and fails the test with FileCheck's own diagnostic when they do not match."""
    counter = iter(range(1_000_000))

    def check(text: str, checks: str) -> None:
        check_file = tmp_path / f"checks{next(counter)}.txt"
        check_file.write_text(textwrap.dedent(checks))
        proc = subprocess.run([str(FILECHECK), str(check_file)], input=text, capture_output=True,
                              text=True, timeout=60)
        if proc.returncode != 0:
            pytest.fail(f"FileCheck failed:\n{proc.stderr}\n--- input ---\n{text}", pytrace=False)

    return check


# One real sweep for the sweep tests (tests/sweep/test_sweep*.py): three tiny ports, each in its own
# process, with the op-level check; 'nosuchmodel' is a port that leaves no record.
SWEEP_MODELS = ("gpt2", "bert", "nosuchmodel")


@pytest.fixture(scope="session")
def sweep_run(tmp_path_factory):
    """(the sweep folder, the finished process) of ``harness sweep SWEEP_MODELS --numerics-check``,
    with ``--keep-files all``: tests make failing ports from the verified ports' IR."""
    out = tmp_path_factory.mktemp("sweep") / "board"
    proc = harness("--progress", "sweep", *SWEEP_MODELS, "--out", out, "--numerics-check", "--jobs", "2",
                   "--keep-files", "all", timeout=900)
    return out, proc
