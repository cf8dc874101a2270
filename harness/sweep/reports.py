"""``harness sweep --reports``: one upstream report bundle per distinct blocker, made by
``harness report`` on the input and pipeline its port's printed command names (into
``PORT/report``, where the board links it). A blocker that stops ten models is reported once,
from the first port it stops; blockers of one shared root cause (``harness.diagnose.causes``:
ops without shape or dtype functions) are one bundle too, made with ``--each`` so that it lists
every op of that cause its port meets, and the run names the other blockers it covers.

Records are input, never run: the program, ``--opt`` and ``--out`` are the sweep's own; from
the record only the IR file (inside the sweep's folder), the pipeline name and ``--no-reduce``
are taken."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.diagnose.causes import shared_cause

from .children import CHILDREN
from .records import LOGS, RECORDS, SweepDir, file_name
from .runner import SweepOptions, rebuilt_command, run_logged, thread_env


@dataclass
class ReportRun:
    signature: str
    bundle: Path
    ok: bool
    reused: bool = False
    covers: list[str] = field(default_factory=list)  # other blockers of the same root cause


def report_command(commands: list[str], folder: str, options: SweepOptions) -> list[str] | None:
    """``harness report FILE --pipeline P --out FOLDER/report`` for the port's printed report
    command, as argv run by the sweep's Python with its ``--opt``; None when the record names
    none, or a file or folder outside the sweep."""
    return rebuilt_command("report", commands, folder, options, carry=("--no-reduce",))


def make_reports(sweep: SweepDir, options: SweepOptions,
                 say: Callable[[str], None] | None = None) -> list[ReportRun]:
    with CHILDREN.stopped_on_exit():  # a stop signal ends the report runs; a new run starts clean
        return _make_reports(sweep, options, say)


def _make_reports(sweep: SweepDir, options: SweepOptions,
                  say: Callable[[str], None] | None) -> list[ReportRun]:
    seen: dict[str, ReportRun] = {}  # a blocker's key -> the run that reports it
    runs = []
    for result in sweep.models:
        if result.record is None:
            continue
        for variant, port in result.record.ports():
            argv = report_command(port.commands, port.folder, options)
            for blocker in port.blockers:
                cause = shared_cause(blocker.signature)
                key = cause.key if cause is not None else blocker.signature
                if key in seen:
                    earlier = seen[key]
                    if blocker.signature != earlier.signature \
                            and blocker.signature not in earlier.covers:
                        earlier.covers.append(blocker.signature)
                    continue
                if argv is None or not port.folder:
                    continue
                bundle = Path(port.folder) / "report"
                if bundle.is_dir() and any(bundle.iterdir()) and not options.force:
                    run = ReportRun(blocker.signature, bundle, True, reused=True)
                    seen[key] = run
                    runs.append(run)
                    continue
                log = (options.out / LOGS /
                       f"{file_name(result.model)}.{file_name(variant.name)}.{port.path}.report.log")
                run_argv = [*argv, "--each"] if cause is not None else list(argv)
                record = options.out / RECORDS / f"{file_name(result.model)}.json"
                if record.is_file():  # the sweep's own record of the model: frontends, Blocks
                    run_argv += ["--port-record", str(record)]
                code, timed_out, seconds = run_logged(run_argv, log, options.timeout_s, options.cwd,
                                                      env=thread_env(1))  # one at a time
                ok = not timed_out and code in (0, 1) and bundle.is_dir()
                run = ReportRun(blocker.signature, bundle, ok)
                seen[key] = run
                runs.append(run)
                if say is not None:
                    say(f"report for {blocker.signature}: {'written' if ok else 'failed, see ' + str(log)} "
                        f"({seconds:.1f} s)")
    return runs
