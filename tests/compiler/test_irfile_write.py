"""write_atomically: a temp file renamed into place, except over a file that is not a regular one.

Renaming over /dev/null as root replaces the device with a regular file for the whole machine
(it happened here: the bindings tool was given -o /dev/null). A fifo stands in for the device,
so the test runs as any user and never touches /dev/null.
"""

from __future__ import annotations

import os
import stat
import threading

from harness.compiler.irfile import write_atomically


def test_a_regular_file_is_replaced_whole(tmp_path):
    target = tmp_path / "out.mlir"
    target.write_text("old")
    write_atomically(target, "new text")
    assert target.read_text() == "new text"
    assert [str(p.name) for p in tmp_path.iterdir()] == ["out.mlir"]  # no temp file left


def test_a_fifo_is_written_in_place_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "sink"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    write_atomically(fifo, lambda f: f.write("module {}\n"))
    reader.join(timeout=10)  # without the in-place write it waits for a writer that never comes
    assert received == ["module {}\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert [str(p.name) for p in tmp_path.iterdir()] == ["sink"]
