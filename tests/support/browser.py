"""Headless Chromium (Debian's ``chromium``; .ci/run installs it) on a page of ours: the sweep
board's and the timeline's tests read the DOM it built and the screenshots it takes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def chromium(page: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    binary = shutil.which("chromium") or CHROMIUM
    assert Path(binary).is_file(), ("chromium is not installed: apt-get install -y "
                                    "--no-install-recommends chromium (.ci/run does)")
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    profile.mkdir()
    return subprocess.run([binary, *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
                          capture_output=True, text=True, timeout=120)
