"""``harness sweep --cluster ADDRESS``: each model's port as a task of a Dask distributed cluster
(an existing engine: the scheduling, the retries and the cluster managers are Dask's).

- ``local:N`` starts a ``LocalCluster`` of N single-threaded worker processes here; a scheduler
  address (``tcp://host:8786``) uses a running cluster, however it was started (``dask
  scheduler``/``dask worker``, dask-jobqueue on Slurm or PBS, dask-kubernetes).
- A task runs ``harness port`` in a child process on its worker, as the local sweep does
  (:func:`.runner.run_logged`: its own process group, killed on the model's timeout and when
  the worker dies), so a crash or a hang costs one model. The child forks from the worker's
  warm server (:mod:`.warm`, started by the worker's first task, gone with the worker).
- Workers need no shared filesystem: a task returns the record, the log and the port's folder
  (a tar archive), and the submitting process writes them under ``--out`` with the record's
  paths moved there. The archive is unpacked with tarfile's ``data`` filter: a member that
  points out of the folder is refused.
- A worker lost in the middle of a model: Dask runs the task again elsewhere once
  (``allowed-failures`` = 1); lost a second time, the model's record is a ``lost``
  :class:`~.records.RunFailure` naming the worker.
- The scheduler lost in the middle of a sweep: Dask cancels every task; the records that
  arrived stay, each model still out is a ``lost`` record saying so, and the board is written.
- A task's folder names the worker process that owns it (:data:`OWNER`): a worker killed
  outright (SIGKILL, a lost machine, the end of a ``local:N`` sweep stopped by a signal) cannot
  remove its folder, which holds the port's IR, weights included; the next task on that machine,
  and a ``local:N`` sweep as it ends, remove the folders whose owner is gone.
- ``--numerics-check`` runs here, on the unpacked ports, after each record arrives.

Dask is an optional extra (``pip install -e '.[cluster]'``).
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.compiler.irfile import write_atomically
from harness.errors import HarnessError, UsageError
from harness.port.record import PortRecord

from .children import CHILDREN
from .progress import SweepProgress
from .records import LOGS, PORTS, RECORDS, FailureReason, RunFailure, file_name, read_result, write_failure
from .runner import (
    ModelRun,
    SweepOptions,
    drop_ir_files,
    verified_folders,
    drops_before_checks,
    finish,
    port_flags,
    recorded_refusal,
    run_failure,
    run_logged,
)
from .warm import WARM

if TYPE_CHECKING:  # the [cluster] extra: imported only where a sweep uses it
    from distributed.scheduler import Scheduler

#: A task's folder, in its worker's temp folder: ``harness-cluster-XXXX``.
TASK_PREFIX = "harness-cluster-"
#: The file in a task's folder that holds the pid of the worker process that owns it.
OWNER = ".harness-owner"
#: A worker may die under a model once; the second death makes the model ``lost``.
ALLOWED_FAILURES = 1
#: The most a task sends back of a port's folder (IR files, inputs); a larger one is left out.
MAX_FOLDER_BYTES = 512 * 1024 * 1024
#: The most a task sends back of the port's log (its tail).
MAX_LOG_BYTES = 1024 * 1024
_EXTRA_HINT = ("Dask is an optional extra of the harness: install it with "
               "pip install -e '.[cluster]' (dask and distributed), in the Python that runs "
               "'harness sweep' and in the workers' one.")


@dataclass(frozen=True)
class PortTaskResult:
    """What one task sends back: plain values, so any Dask serializer takes them."""

    model: str
    worker: str            # the worker's address
    root: str              # the task's folder on the worker (the record's paths start there)
    returncode: int | None
    timed_out: bool
    seconds: float
    log: str               # the port's output (its tail past MAX_LOG_BYTES)
    record: str            # record.json's text, "" when the port wrote none
    folder: bytes          # the port's folder as a .tar.gz, b"" when too large or absent
    note: str = ""         # why the folder was left out


def port_task(model: str, flags: Sequence[str], timeout_s: float,
              drop_verified: bool = False) -> PortTaskResult:
    """Runs on a worker: ``harness port MODEL`` in a child process, in a folder of its own that
    is removed once its contents are packed. ``drop_verified``: a verified port's IR files are
    dropped here, before packing, as the sweep would drop them once the record is in
    (``--keep-files failing`` without ``--numerics-check``, which reads them): packing tiny
    llama's 13 MB of IR cost 0.75 s a model, for files deleted on arrival."""
    from distributed import get_worker

    worker = get_worker().address
    remove_orphans()  # what earlier tasks of a worker killed outright left here
    with tempfile.TemporaryDirectory(prefix=TASK_PREFIX) as tmp:
        root = Path(tmp)
        (root / OWNER).write_text(str(os.getpid()))
        record, log = root / "record.json", root / "port.log"
        argv = [sys.executable, "-m", "harness", "--no-progress", "port", model,
                "--json", str(record), "--out", str(root / PORTS), *flags]
        WARM.keep(sys.executable, None)  # the worker's warm server, started by its first task
        code, timed_out, seconds = run_logged(argv, log, timeout_s, cwd=tmp)
        if drop_verified and not timed_out and code in (0, 1):
            _drop_verified(record, root / PORTS)
        folder, note = _pack(root / PORTS)
        return PortTaskResult(model, worker, str(root), code, timed_out, seconds,
                              _tail_text(log, MAX_LOG_BYTES),
                              record.read_text(encoding="utf-8") if record.is_file() else "",
                              folder, note)


def remove_orphans(parent: Path | None = None) -> list[Path]:
    """Remove the task folders in ``parent`` (default: the temp folder) whose owning worker
    process is gone; a folder with no readable owner (not ours, or its task just starting),
    another user's, or a link is left alone."""
    removed = []
    for folder in Path(parent or tempfile.gettempdir()).glob(f"{TASK_PREFIX}*"):
        try:
            if folder.is_symlink() or not folder.is_dir() or folder.stat().st_uid != os.getuid():
                continue
            owner = int((folder / OWNER).read_text())
        except (OSError, ValueError):
            continue
        if owner > 0 and not _alive(owner):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs; a zombie does not (a worker killed with its parent is
    re-parented to an init that may never reap it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _drop_verified(record: Path, ports: Path) -> None:
    """The IR files of the record's verified ports, dropped (inside ``ports`` only)."""
    try:
        result = read_result(record)
    except HarnessError:  # no readable record: the folder goes as it is (the sweep says why)
        return
    if isinstance(result, PortRecord):
        for folder in verified_folders(result):
            drop_ir_files(folder, ports)


def _pack(folder: Path) -> tuple[bytes, str]:
    if not folder.is_dir():
        return b"", ""
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    if size > MAX_FOLDER_BYTES:
        return b"", (f"the port's folder ({size / 2**20:.0f} MiB, over {MAX_FOLDER_BYTES / 2**20:.0f}"
                     " MiB) was not sent back: the files the record names are absent")
    data = io.BytesIO()
    # gzip's fastest level: IR text shrinks about as much (13 MB of tiny llama: 6.9 MB against
    # 6.5 MB at level 9) in a fifth of the time (0.14 s against 0.75 s)
    with tarfile.open(fileobj=data, mode="w:gz", compresslevel=1) as archive:
        archive.add(folder, arcname=".")
    return data.getvalue(), ""


def _tail_text(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - limit))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


#: How long a scheduler address may take to answer (connect, then its handshake) before the
#: sweep gives up with exit 2: a listener that accepts and never answers hung Dask's Client.
CONNECT_TIMEOUT_S = 30.0
#: A Dask comm message starts with its length (a little-endian u64); a handshake is small. A
#: length past this is not Dask (an HTTP server's "HTTP/1.1" read so asked for exabytes).
MAX_HANDSHAKE_BYTES = 1 << 26
_START_ONE = ("Start one ('dask scheduler', then 'dask worker ADDRESS' on each machine) or use "
              "--cluster local:N.")


def scheduler_address(address: str) -> tuple[str, int]:
    """``tcp://HOST:PORT`` (or ``tls://``) as (host, port); UsageError for anything else."""
    from urllib.parse import urlsplit

    scheme, sep, _ = address.partition("://")
    try:
        parts = urlsplit(address)
        host, port = parts.hostname, parts.port
    except ValueError:  # an unclosed '[', a port that is not a number or out of range
        host, port = None, None
    if not sep or scheme not in ("tcp", "tls") or not host or port is None or not 0 < port < 65536:
        raise UsageError(f"--cluster {address!r} is neither local:N nor a scheduler address "
                         "tcp://HOST:PORT (e.g. tcp://127.0.0.1:8786, tcp://[::1]:8786).")
    return host, port


def probe(address: str, host: str, port: int, *, speaks_first: bool = True,
          timeout_s: float | None = None) -> None:
    """Connects within ``timeout_s`` and, over plain TCP (``speaks_first``: a TLS server waits
    for the client's hello), reads the first 16 bytes a Dask scheduler sends on its own (its
    handshake's length and frame count): UsageError when nothing listens, nothing comes, or
    what comes is not Dask's framing."""
    import socket
    import struct

    limit = CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        sock = socket.create_connection((host, port), timeout=limit)
    except TimeoutError:
        raise UsageError(f"--cluster {address}: no connection within {limit:g} s. "
                         f"{_START_ONE}") from None
    except OSError as e:
        raise UsageError(f"--cluster {address}: no Dask scheduler answers there "
                         f"({e.strerror or e}). {_START_ONE}") from None
    if not speaks_first:
        sock.close()
        return
    data = b""
    try:
        with sock:
            sock.settimeout(limit)
            while len(data) < 16:
                chunk = sock.recv(16 - len(data))
                if not chunk:
                    break
                data += chunk
    except TimeoutError:
        raise UsageError(f"--cluster {address}: it accepts connections but sent nothing in "
                         f"{limit:g} s, as a Dask scheduler does at once. {_START_ONE}") from None
    except OSError as e:
        raise UsageError(f"--cluster {address}: the connection broke off "
                         f"({e.strerror or e}). {_START_ONE}") from None
    length, frames = struct.unpack("<QQ", data) if len(data) == 16 else (0, 0)
    if len(data) < 16 or not (0 < length < MAX_HANDSHAKE_BYTES and 0 < frames < 1024):
        raise UsageError(f"--cluster {address}: what answers there is not a Dask scheduler (its "
                         f"first bytes {data[:16]!r}). {_START_ONE}")


@contextmanager
def connect(address: str) -> Iterator[Any]:
    """A Dask client of the cluster ``address`` names; the cluster it started goes with it."""
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError(f"--cluster {address}: {_EXTRA_HINT}") from None
    if address.startswith("local:"):
        count = address.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise UsageError(f"--cluster {address}: local:N wants N >= 1 worker processes, e.g. "
                             "--cluster local:2.")
        with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}), \
                LocalCluster(n_workers=int(count), threads_per_worker=1, processes=True,
                             dashboard_address=None) as cluster, Client(cluster) as client:
            yield client
        return
    host, port = scheduler_address(address)
    probe(address, host, port, speaks_first=address.startswith("tcp://"))
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S)
    except Exception as e:  # a scheduler that breaks off: one paragraph, never a traceback
        raise UsageError(f"--cluster {address}: no Dask scheduler answers there ({type(e).__name__}: "
                         f"{e}). {_START_ONE}") from None
    # a scheduler lost mid-sweep: Dask's client logs each failed reconnect with a traceback;
    # the sweep says it once, in the lost models' records and on the board
    quiet = logging.getLogger("distributed.client")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        client.run_on_scheduler(_limit_failures)
        yield client
    finally:
        client.close()
        quiet.setLevel(level)


def _limit_failures(dask_scheduler: Scheduler | None = None) -> None:
    """On the scheduler: one retry of a task whose worker died (its own config may allow more)."""
    assert dask_scheduler is not None  # run_on_scheduler passes it by this name
    dask_scheduler.allowed_failures = ALLOWED_FAILURES


def run_sweep_on_cluster(models: Sequence[str], options: SweepOptions, address: str,
                         say: Callable[[str], None] | None = None) -> list[ModelRun]:
    """Every model as a task of the cluster; one progress line as each record arrives."""
    try:
        import distributed  # noqa: F401 - the extra's check, before any record is touched
    except ImportError:
        raise UsageError(f"--cluster {address}: {_EXTRA_HINT}") from None
    (options.out / RECORDS).mkdir(parents=True, exist_ok=True)
    # the records' checks run here, one at a time: each gets the whole machine's threads
    serial = replace(options, jobs=1)
    runs: dict[str, ModelRun] = {}
    todo = []
    for model in models:
        path = options.out / RECORDS / f"{file_name(model)}.json"
        if path.is_file() and not options.force:
            runs[model] = finish(model, read_result(path), True, serial, time.monotonic())
        else:
            path.unlink(missing_ok=True)
            todo.append(model)
    try:
        _run_tasks(todo, runs, models, options, address, serial, say)
    finally:
        if address.startswith("local:"):  # its workers are gone now: their folders go too
            remove_orphans()
    return [runs[m] for m in models]


def _run_tasks(todo: list[str], runs: dict[str, ModelRun], models: Sequence[str],
               options: SweepOptions, address: str, serial: SweepOptions,
               say: Callable[[str], None] | None) -> None:
    """The tasks of ``todo`` on the cluster, each model's run into ``runs`` as it arrives."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    with connect(address) as client, CHILDREN.stopped_on_exit():
        workers = max(1, sum(client.nthreads().values()))
        progress = SweepProgress(len(models), say, workers)
        for model, run in runs.items():
            progress.finished(model, run.outcome, run.seconds, run.reused)
        started = time.monotonic()
        drop = drops_before_checks(options)
        futures = {client.submit(port_task, model, port_flags(options, model), options.timeout_s, drop,
                                 key=f"harness-port-{file_name(model)}-{uuid.uuid4().hex[:8]}",
                                 pure=False): model for model in todo}
        try:
            for future in as_completed(futures):
                model = futures[future]
                try:
                    task = future.result()
                    result: PortRecord | RunFailure = _store(task, options)
                    begun = time.monotonic() - task.seconds  # the model's own time, not the queue's
                except KilledWorker as e:
                    last = getattr(e, "last_worker", None)
                    where = getattr(last, "address", "") or "an unknown worker"
                    result, begun = _lost(model, f"the worker running it died {ALLOWED_FAILURES + 1} "
                                          f"times, last {where}; Dask gave up on the task",
                                          time.monotonic() - started, options), started
                except CancelledError as e:  # the scheduler went away: Dask cancels them all
                    result, begun = _lost(model, "the cluster's scheduler went away before the "
                                          f"task came back ({type(e).__name__}); run the sweep "
                                          "again to port it (the records that came back are "
                                          "reused)", time.monotonic() - started, options), started
                runs[model] = run = finish(model, result, False, serial, begun)
                progress.finished(model, run.outcome, run.seconds, run.reused)
        finally:
            client.cancel(list(futures), force=True)


def _store(task: PortTaskResult, options: SweepOptions) -> PortRecord | RunFailure:
    """The task's record, log and folder under ``--out``, paths moved from the worker's folder."""
    root = options.out
    log = root / LOGS / f"{file_name(task.model)}.log"
    note = f"; {task.note}" if task.note else ""
    write_atomically(log, f"(ported on {task.worker}{note})\n{task.log}")
    if task.folder:
        with tarfile.open(fileobj=io.BytesIO(task.folder), mode="r:gz") as archive:
            archive.extractall(root / PORTS, filter="data")
    if not task.timed_out and task.returncode in (0, 1) and task.record:
        text = task.record.replace(str(Path(task.root) / PORTS), str(root / PORTS))
        path = root / RECORDS / f"{file_name(task.model)}.json"
        write_atomically(path, text)
        return read_result(path)
    failure = run_failure(task.model, task.returncode, task.timed_out, task.seconds, log, options,
                          refusal=recorded_refusal(task.record))
    write_failure(root, failure)
    return failure


def _lost(model: str, detail: str, seconds: float, options: SweepOptions) -> RunFailure:
    failure = RunFailure(model, FailureReason.LOST, round(seconds, 2), None, detail)
    write_failure(options.out, failure)
    return failure
