"""Fixtures shared by the test files. Keep this small; add new fixtures at the end."""

from __future__ import annotations

import json
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


def non_standard_json(folder: Path) -> list[str]:
    """The .json files under ``folder`` that are not standard JSON (``Infinity``/``NaN`` as bare
    words, which browsers and jq refuse): every record the harness writes must parse strictly."""
    from harness.compiler import jsonfile

    bad = []
    for path in sorted(folder.rglob("*.json")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            jsonfile.loads(path.read_bytes())
        except json.JSONDecodeError as e:
            if "is not JSON" in str(e):  # a malformed file may be a test's own bad input
                bad.append(f"{path.relative_to(folder)}: {e}")
        except UnicodeDecodeError:
            continue
    return bad


@pytest.fixture(autouse=True)
def records_are_strict_json(request):
    """After each test that used ``tmp_path``: every .json file in it parses as standard JSON
    (issue 41 item 7). A test that plants non-standard JSON as bad input marks itself
    ``@pytest.mark.plants_bad_json``."""
    if "tmp_path" not in request.fixturenames or request.node.get_closest_marker("plants_bad_json"):
        yield
        return
    folder = request.getfixturevalue("tmp_path")  # set up first, so it is torn down after this
    yield
    bad = non_standard_json(folder)
    assert not bad, "records written as non-standard JSON:\n" + "\n".join(bad)
