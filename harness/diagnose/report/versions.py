"""A bug report's Versions: the torch-mlir-opt that ran, not only what is installed.

With another build given to ``--opt`` (an LLVM 23 release, a user's debug build) the installed
wheel's version says nothing about the binary that failed; a maintainer needs its ``--version``
and where it came from (the path category: the installed wheel, a release in the harness build
cache, a user build added by name, or a binary given by path). The installed packages still
matter: they produced the input IR.
"""

from __future__ import annotations

import platform

from harness import versions
from harness.compiler.binary import OptBinary
from harness.compiler.builds import Build, BuildKind, origin_of


def binary_versions(exe: OptBinary, build: Build | None = None) -> dict[str, str]:
    """The binary's entries of a report's ``versions`` (record.json): what ran and its origin."""
    build = build or origin_of(exe.path)
    return {
        "tool": "bindings" if exe.bindings else "torch-mlir-opt",
        "llvm": exe.llvm_version or "unknown",
        "build": exe.build_kind,
        "torch-mlir-opt": exe.path,
        "torch-mlir-opt-kind": build.kind.value,
        "torch-mlir-opt-name": build.name,
        "torch-mlir-opt-release": build.release,
        "torch-mlir-opt-version": _one_line(exe.version_text),
    }


def versions_markdown(exe: OptBinary, build: Build | None = None,
                      packages: dict[str, str] | None = None) -> list[str]:
    """The ``## Versions`` section of issue.md, ending with a blank line."""
    build = build or origin_of(exe.path)
    packages = packages or versions.installed()
    if exe.bindings:
        what = (f"the bindings tool (`harness-bindings-opt`: torch-mlir-opt's command line over "
                f"the MLIR Python bindings of the installed torch-mlir "
                f"{packages.get('torch-mlir', '?')} wheel; torch-mlir-opt does not register "
                "these upstream MLIR passes)")
    elif build.kind is BuildKind.WHEEL:
        what = f"torch-mlir {build.version}, the installed wheel's binary"
    elif build.kind is BuildKind.FETCHED:
        what = f"{build.release} (harness build `{build.name}`, {build.kind.describe()})"
    elif build.kind is BuildKind.ADDED:
        what = (f"harness build `{build.name}` ({build.kind.describe()}; its package version is "
                "not known: see `--version`)")
    else:
        what = "a binary given by path (its package version is not known: see `--version`)"
    installed = (f"torch-mlir {packages.get('torch-mlir', '?')}, torch {packages.get('torch', '?')}, "
                 f"transformers {packages.get('transformers', '?')}")
    produced = ("" if build.kind is BuildKind.WHEEL or exe.bindings else
                "; they produced the input IR, the binary above ran the pipeline")
    return [
        "## Versions", "",
        f"- {'tool' if exe.bindings else 'torch-mlir-opt'} that ran: {what}; "
        f"LLVM {exe.llvm_version or 'unknown'}, "
        f"{exe.build_kind} build",
        f"  - `--version`: {_one_line(exe.version_text)}",
        f"  - binary: `{exe.path}`",
        f"- installed packages: {installed}{produced}",
        f"- {platform.python_implementation()} {platform.python_version()} on {platform.platform()}",
        "",
    ]


def _one_line(text: str) -> str:
    return " / ".join(line.strip() for line in text.splitlines() if line.strip())
