"""A child's stdout or stderr held in bounded memory: its head and its tail, the rest counted.

A binary that prints 1 GB cost the harness 4.2 GB of RSS and 77 s when all of it was kept:
Popen.communicate joins every chunk, decodes it, and the diagnostics parser then
walks it. What the harness reads of a run sits at the two ends: the first diagnostics and a
pipeline rejection at the start, the crash dump and the timeout's stack at the end. So each
stream keeps its first and last ``KEEP_BYTES`` and notes, on a line of its own where the cut is,
how many bytes were left out. 8 MiB at each end keeps whole every stderr the tests and the
catalog produce (200,000 diagnostics are 10 MB); 1 GB on each stream costs ~0.1 GB of RSS
(``python tools/bench_output.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

KEEP_BYTES = 8 * 2**20
_LINE = 4096  # how much of a line cut at either end is dropped to keep whole lines


@dataclass
class Capture:
    """One stream: ``add`` each chunk as it is read, ``text`` once at the end. The tail is a
    ring of ``keep`` bytes allocated once: a queue of freed chunks fragmented the heap into
    twice the RSS."""

    name: str                       # "stdout" or "stderr": said in the note at the cut
    keep: int = KEEP_BYTES          # bytes kept at each end
    total: int = 0                  # bytes the child wrote, kept or not
    head: bytearray = field(default_factory=bytearray)
    ring: bytearray = field(default_factory=bytearray)  # the tail, from ``past % keep`` on
    past: int = 0                   # bytes that went to the ring

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        if not self.ring:
            self.ring = bytearray(self.keep)
        view = memoryview(data)
        if len(view) > self.keep:
            self.past += len(view) - self.keep
            view = view[-self.keep:]
        at = self.past % self.keep
        first = min(len(view), self.keep - at)
        self.ring[at:at + first] = view[:first]
        self.ring[:len(view) - first] = view[first:]
        self.past += len(view)

    def _tail(self) -> bytes:
        if self.past <= self.keep:
            return bytes(self.ring[:self.past])
        at = self.past % self.keep
        return bytes(self.ring[at:]) + bytes(self.ring[:at])

    @property
    def cut(self) -> bool:
        return self.past > self.keep

    def text(self) -> str:
        """The kept bytes as text (undecodable bytes replaced, newlines as text mode reads
        them); when some were left out, a note in their place between whole lines."""
        tail = self._tail()
        if not self.cut:
            return _decode(memoryview(self.head + tail))
        # Whole lines on both sides of the note, unless that drops more than a line's worth.
        end = self.head.rfind(b"\n", len(self.head) - _LINE) + 1 or len(self.head)
        start = tail.find(b"\n", 0, min(_LINE, len(tail) - 1)) + 1
        head, kept = memoryview(self.head)[:end], memoryview(tail)[start:]
        left_out = self.total - len(head) - len(kept)
        note = (f"[harness: {left_out:,} bytes of {self.name} left out here, of {self.total:,}; "
                f"the first {len(head):,} and the last {len(kept):,} are kept]\n")
        before = "" if not head or head[-1] == ord("\n") else "\n"
        return _decode(head) + before + note + _decode(kept)


def _decode(data: memoryview) -> str:
    """As Popen's text mode would: UTF-8 with replacement, universal newlines."""
    text = str(data, "utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
