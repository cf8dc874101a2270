"""One line per finished model: done/total, elapsed, ETA, and that model's outcome."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


def clock(seconds: float) -> str:
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


@dataclass
class SweepProgress:
    """Counts finished models (threads may finish at once) and prints a line for each.
    ETA: the mean wall time per finished model so far, times the models left, over the
    models running side by side."""

    total: int
    say: Callable[[str], None] | None
    jobs: int = 1
    started: float = field(default_factory=time.monotonic)
    done: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def finished(self, model: str, outcome: str, seconds: float, reused: bool = False) -> str:
        with self._lock:
            self.done += 1
            elapsed = time.monotonic() - self.started
            left = self.total - self.done
            eta = elapsed / self.done * left if self.done else 0.0
            took = f"{seconds:.1f} s" + (", record reused" if reused else "")
            line = (f"[{self.done}/{self.total}] {model}: {outcome} ({took}) | elapsed "
                    f"{clock(elapsed)}, ETA {clock(eta) if left else '0:00'}")
            if self.say is not None:
                self.say(line)
            return line
