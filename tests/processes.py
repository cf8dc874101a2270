"""Finding the processes a test started, by what their command lines hold (Linux /proc)."""

from __future__ import annotations

import time
from pathlib import Path


def command_lines() -> dict[int, list[str]]:
    """Every process's arguments (the ones that are readable and not zombies)."""
    out: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                raw = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if raw:
                out[int(entry.name)] = raw.decode(errors="replace").rstrip("\0").split("\0")
    return out


def processes_mentioning(text: str) -> list[int]:
    return [pid for pid, argv in command_lines().items() if any(text in a for a in argv)]


def compiler_processes(marker: str) -> list[int]:
    """The torch-mlir-opt processes running on a file whose name holds ``marker``."""
    return [pid for pid, argv in command_lines().items()
            if argv[0].endswith("torch-mlir-opt") and any(marker in a for a in argv[1:])]


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            if f"\nPPid:\t{pid}\n" in status:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie, dead but not reaped, does not count)."""
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_for(predicate, timeout_s: float = 60.0, interval_s: float = 0.02):
    """Polls until ``predicate()`` is truthy and returns it; fails the test at the timeout."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {predicate}")


def catches(pid: int, signum: int) -> bool:
    """Whether ``pid`` has a handler for ``signum`` (/proc's SigCgt mask)."""
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return False
    mask = next((int(line.split()[1], 16) for line in status.splitlines()
                 if line.startswith("SigCgt:")), 0)
    return bool(mask & (1 << (signum - 1)))
