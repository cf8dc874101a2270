"""Finding and identifying the torch-mlir-opt binary to run.

Order: an explicit path, then ``$TORCH_MLIR_OPT``, then the wheel's real binary in
``torch_mlir/_mlir_libs``. The wheel's ``bin/torch-mlir-opt`` is a Python wrapper that turns a
signal into exit status 256-N; the runner calls the real binary so a crash keeps its signal.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.errors import BinaryError

ENV_VAR = "TORCH_MLIR_OPT"


@dataclass(frozen=True)
class OptBinary:
    path: str
    llvm_version: str
    assertions: bool
    optimized: bool
    version_text: str

    @property
    def build_kind(self) -> str:
        return "assertions" if self.assertions else ("release" if self.optimized else "debug")

    def describe(self) -> str:
        return f"{self.path} (LLVM {self.llvm_version or 'unknown'}, {self.build_kind} build)"


def wheel_binary() -> Path | None:
    spec = importlib.util.find_spec("torch_mlir")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "_mlir_libs" / "torch-mlir-opt"
        if candidate.is_file():
            return candidate
    return None


def locate(explicit: str | os.PathLike | None = None) -> Path:
    """The path of the binary to use; a BinaryError naming what was tried otherwise."""
    if explicit:
        source, raw = "--opt", str(explicit)
    elif os.environ.get(ENV_VAR):
        source, raw = f"${ENV_VAR}", os.environ[ENV_VAR]
    else:
        found = wheel_binary()
        if found is None:
            raise BinaryError(
                "no torch-mlir-opt found: the torch-mlir wheel is not installed in this Python "
                f"and ${ENV_VAR} is not set. Install the project (pip install -e '.[test]') or "
                f"point ${ENV_VAR} at your own torch-mlir-opt build."
            )
        return found
    named = _named_build(raw)
    if named is not None:
        return named
    path = Path(raw).expanduser()
    if not path.exists():
        raise BinaryError(
            f"torch-mlir-opt given by {source} does not exist: {raw}. Fix the path, name a build "
            f"('harness builds list'), or unset {source} to use the wheel's binary."
        )
    if not path.is_file() or not os.access(path, os.X_OK):
        raise BinaryError(
            f"torch-mlir-opt given by {source} is not an executable file: {raw}. "
            f"Run 'chmod +x {raw}' or name the built binary (build/bin/torch-mlir-opt)."
        )
    return path.resolve()


def _named_build(raw: str) -> Path | None:
    """The binary of a build name (``wheel``, ``belfort-2026.7.1``, a user's added build), so
    every ``--opt`` takes names; None when ``raw`` is a path. See harness.compiler.builds."""
    from . import builds  # builds reads this module's identify()

    return builds.binary_for(raw)


_VERSION_RE = re.compile(r"LLVM version\s+(\S+)")


@lru_cache(maxsize=16)
def identify(path: str) -> OptBinary:
    """Runs ``--version`` and checks this is torch-mlir-opt, not some other LLVM tool."""
    try:
        proc = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BinaryError(
            f"could not run {path} --version ({e}). Name a working torch-mlir-opt binary."
        ) from None
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 or "LLVM" not in text:
        raise BinaryError(
            f"{path} does not look like torch-mlir-opt: '--version' exited {proc.returncode} "
            f"and printed {text.strip()[:200]!r}. Name the torch-mlir-opt binary of a "
            "torch-mlir build."
        )
    try:
        helped = subprocess.run(
            [path, "--help-list"], capture_output=True, text=True, timeout=60,
            stdin=subprocess.DEVNULL,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        helped = ""
    if "torch" not in helped:
        raise BinaryError(
            f"{path} is an LLVM tool without the torch dialect (its --help-list names no "
            "torch pass). Name the torch-mlir-opt binary of a torch-mlir build."
        )
    m = _VERSION_RE.search(text)
    return OptBinary(
        path=path,
        llvm_version=m.group(1) if m else "",
        assertions="with assertions" in text,
        optimized="Optimized build" in text,
        version_text=text.strip(),
    )


def resolve(explicit: str | os.PathLike | None = None) -> OptBinary:
    return identify(str(locate(explicit)))
