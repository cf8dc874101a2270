"""Finding the processes a test started, by what their command lines hold (Linux /proc)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path


def _each(name: str) -> Iterator[tuple[int, str]]:
    """(pid, /proc/PID/NAME) of every process that can be read."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                yield int(entry.name), (entry / name).read_text(errors="replace")
            except OSError:
                continue


def command_lines() -> dict[int, list[str]]:
    """Every process's arguments (zombies, which have none, left out)."""
    return {pid: raw.rstrip("\0").split("\0") for pid, raw in _each("cmdline") if raw}


def processes_mentioning(text: str) -> list[int]:
    return [pid for pid, argv in command_lines().items() if any(text in a for a in argv)]


def compiler_processes(marker: str) -> list[int]:
    """The torch-mlir-opt processes running on a file whose name holds ``marker``."""
    return [pid for pid, argv in command_lines().items()
            if argv[0].endswith("torch-mlir-opt") and any(marker in a for a in argv[1:])]


def children(pid: int) -> list[int]:
    return [child for child, status in _each("status") if f"\nPPid:\t{pid}\n" in status]


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
