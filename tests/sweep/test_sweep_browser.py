"""The board in a real browser: headless Chromium (Debian's ``chromium``; .ci/run installs it)
opens index.html from the file, and the DOM it built has the table's rows and status cells.
A screenshot is saved with the test's output. Without chromium this test fails."""

from __future__ import annotations

from support.browser import chromium
from test_sweep_board import parse


def test_chromium_renders_the_rows_and_status_cells(sweep_run, tmp_path):
    out, _ = sweep_run
    page = out / "index.html"
    dom = chromium(page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    rows = parse(dom.stdout)
    assert [(r["attrs"]["data-model"], r["cells"]) for r in rows] == [
        ("bert", ["verified", "verified"]),
        ("gpt2", ["verified", "verified"]),
        ("nosuchmodel", ["crashed"]),
    ]
    # The DOM is the browser's own: it added the tbody-less parts back, and kept our table.
    assert "<html" in dom.stdout and 'id="board"' in dom.stdout

    shot = tmp_path / "board.png"
    proc = chromium(page, tmp_path, f"--screenshot={shot}", "--window-size=1400,900")
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_chromium_renders_a_column_per_frontend_target_and_backend(tmp_path):
    """``sweep --target linalg,stablehlo --backend refbackend,iree``: each (frontend, target,
    backend) is a column of its own, named as the record's port path, with its own status."""
    from support import harness

    out = tmp_path / "board"
    proc = harness("--no-progress", "sweep", "gpt2", "--frontend", "fx", "--target", "linalg,stablehlo",
                   "--backend", "refbackend,iree", "--out", out, "--jobs", "1", timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    dom = chromium(out / "index.html", tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    rows = parse(dom.stdout)
    assert [(r["attrs"]["data-model"], r["cells"]) for r in rows] == [
        ("gpt2", ["verified", "verified", "verified", "verified"])]
    import re

    columns = re.findall(r'<td class="cell"[^>]*data-frontend="([^"]+)"', dom.stdout)
    assert columns == ["fx", "fx-iree", "fx-stablehlo", "fx-stablehlo-iree"]
    stages = re.findall(r"iree-compile [0-9.]+", dom.stdout)
    assert len(stages) == 2  # the IREE columns' stage times name IREE's compile
