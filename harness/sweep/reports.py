"""``harness sweep --reports``: one upstream report bundle per distinct blocker, made by the
``harness report`` command its port printed (into ``PORT/report``, where the board links it).
A blocker that stops ten models is reported once, from the first port it stops."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .records import LOGS, SweepDir, file_name
from .runner import SweepOptions, run_logged


@dataclass
class ReportRun:
    signature: str
    bundle: Path
    ok: bool
    reused: bool = False


def report_command(commands: list[str]) -> list[str] | None:
    """The port's ``harness report ...`` command, as argv, or None."""
    for command in commands:
        argv = shlex.split(command)
        if "report" in argv:
            return argv
    return None


def make_reports(sweep: SweepDir, options: SweepOptions,
                 say: Callable[[str], None] | None = None) -> list[ReportRun]:
    seen: set[str] = set()
    runs = []
    for result in sweep.models:
        if result.record is None:
            continue
        for variant, port in result.record.ports():
            argv = report_command(port.commands)
            for blocker in port.blockers:
                if blocker.signature in seen or argv is None or not port.folder:
                    continue
                seen.add(blocker.signature)
                bundle = Path(port.folder) / "report"
                if bundle.is_dir() and any(bundle.iterdir()) and not options.force:
                    runs.append(ReportRun(blocker.signature, bundle, True, reused=True))
                    continue
                log = (options.out / LOGS /
                       f"{file_name(result.model)}.{file_name(variant.name)}.{port.frontend}.report.log")
                code, timed_out, seconds = run_logged(argv, log, options.timeout_s, options.cwd)
                ok = not timed_out and code in (0, 1) and bundle.is_dir()
                runs.append(ReportRun(blocker.signature, bundle, ok))
                if say is not None:
                    say(f"report for {blocker.signature}: {'written' if ok else 'failed, see ' + str(log)} "
                        f"({seconds:.1f} s)")
    return runs
