"""``harness sweep --cluster``: a real ``dask scheduler`` and ``dask worker`` processes on
127.0.0.1 (no mock): the records match a local sweep's, a worker killed under a model makes
the model run again elsewhere or ``lost``, and nothing is left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from support import ROOT

DASK = Path(sys.executable).with_name("dask")


class Cluster:
    """A scheduler and workers in their own process groups; everything goes at the end."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.tmp = folder / "tmp"  # the workers' temp folder: their task folders land here
        self.tmp.mkdir()
        self.file = folder / "scheduler.json"
        self.processes: list[subprocess.Popen] = []
        self.scheduler = self._start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                      "--no-dashboard", "--scheduler-file", str(self.file)], "scheduler")
        _until(lambda: self.file.is_file() and "address" in self.file.read_text(), 60, "the scheduler file")
        self.address = json.loads(self.file.read_text())["address"]

    def _start(self, argv: list[str], name: str) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "w")  # noqa: SIM115 - the child process writes it
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                   cwd=self.folder, env={**os.environ, "TMPDIR": str(self.tmp)})
        self.processes.append(process)
        return process

    def add_worker(self) -> subprocess.Popen:
        """One worker process, one thread, no nanny (a killed worker stays dead)."""
        n = len(self.processes)
        return self._start([str(DASK), "worker", "--scheduler-file", str(self.file), "--nthreads", "1",
                            "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"], f"worker{n}")

    def wait_for_workers(self, count: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=30) as client:
            client.wait_for_workers(count, timeout=120)

    def close(self) -> None:
        for process in self.processes:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(timeout=30)


@pytest.fixture
def cluster(tmp_path):
    made = Cluster(tmp_path)
    try:
        yield made
    finally:
        made.close()


def _until(condition, seconds: float, what: str):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _sweep(*args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness", "--no-progress", "sweep", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, **popen)


def _cells(out: Path) -> dict[tuple[str, str], str]:
    from harness.sweep import records
    from harness.sweep.status import rows_of

    return {(c.model, str(c.frontend)): c.status.value
            for r in rows_of(records.load(out)) for c in r.cells.values()}


def _gone(process: psutil.Process) -> bool:
    """Dead, or a zombie nobody reaped yet (this sandbox's init may not)."""
    try:
        return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _ports_of(model: str, cluster: Cluster | None = None) -> list[psutil.Process]:
    """The ``harness port MODEL`` processes (of ``cluster``'s workers only, when given: other
    jobs on this machine may port the same model)."""
    if cluster is None:
        candidates = list(psutil.process_iter())
    else:
        candidates = []
        for process in cluster.processes:
            try:
                candidates += psutil.Process(process.pid).children(recursive=True)
            except psutil.NoSuchProcess:
                pass
    found = []
    for p in candidates:
        try:
            cmd = p.cmdline()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        if "port" in cmd and model in cmd and "--json" in cmd and "harness" in cmd and "-m" in cmd:
            found.append(p)
    return found


def test_a_cluster_sweep_gives_the_local_sweeps_outcomes(cluster, sweep_run, tmp_path):
    from harness.sweep.runner import IR_SUFFIXES

    local, done = sweep_run  # conftest: gpt2, bert, nosuchmodel with --numerics-check, -j 2
    assert done.returncode in (0, 1), done.stderr
    for _ in range(2):
        cluster.add_worker()
    cluster.wait_for_workers(2)
    out = tmp_path / "on-cluster"
    proc = _sweep("gpt2", "bert", "nosuchmodel", "--numerics-check", "--cluster", cluster.address,
                  "--out", str(out))
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 1, stdout + stderr  # nosuchmodel leaves no record, as locally
    assert _cells(out) == _cells(local)
    logs = {m: (out / "logs" / f"{m}.log").read_text() for m in ("gpt2", "bert")}
    assert all(text.startswith("(ported on tcp://127.0.0.1:") for text in logs.values())
    # The ports' folders came back: every path a record names lies under --out, and its inputs
    # are there; the IR of a port that verified was dropped (--keep-files failing, the default).
    record = json.loads((out / "records" / "gpt2.json").read_text())
    assert record["folder"].startswith(str(out / "ports"))
    ports = [p for v in record["variants"] for p in v["ports"]]
    assert [p["outcome"] for p in ports] == ["verified", "verified"]
    outputs = [s["output"] for p in ports for s in p["stages"] if s["output"]]
    assert outputs and all(o.startswith(str(out)) for o in outputs)
    assert all(list(Path(p["folder"]).rglob("inputs.npz")) for p in ports)
    assert not [o for o in outputs if o.endswith(IR_SUFFIXES) and Path(o).exists()]
    assert all(Path(o).is_file() for o in outputs if not o.endswith(IR_SUFFIXES))
    assert (out / "index.html").is_file()


def _kill_the_worker_running(model: str, cluster: Cluster) -> psutil.Process:
    """SIGKILLs the worker whose port child runs ``model`` (once that child has started): the
    whole group its ``dask worker`` command started (the command runs the worker as a child)."""
    ports = _until(lambda: _ports_of(model, cluster), 300, f"the port of {model} to start")
    workers = {p.pid for p in cluster.processes}
    owner = next(p for port in ports for p in [port, *port.parents()] if p.pid in workers)
    worker = port_parent = ports[0].parent()
    os.killpg(owner.pid, signal.SIGKILL)
    return worker if port_parent is not None else owner


def _sweep_gpt2_on_two_workers(cluster: Cluster, out: Path) -> tuple[subprocess.Popen, list[psutil.Process]]:
    """A sweep of gpt2 (FX, no numbers: quick) on two fresh workers, once its port has started:
    (the sweep, the port's processes)."""
    for _ in range(2):
        cluster.add_worker()
    cluster.wait_for_workers(2)
    proc = _sweep("gpt2", "--frontend", "fx", "--no-numerics", "--cluster", cluster.address,
                  "--out", str(out))
    return proc, _until(lambda: _ports_of("gpt2", cluster), 300, "the port to start")


def test_a_worker_killed_under_a_model_runs_it_again_elsewhere(cluster, tmp_path):
    out = tmp_path / "retry"
    proc, first_ports = _sweep_gpt2_on_two_workers(cluster, out)
    orphan = _until(lambda: list(cluster.tmp.glob("harness-cluster-*")), 60, "the task's folder")
    first = _kill_the_worker_running("gpt2", cluster)
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stdout + stderr
    assert _cells(out) == {("gpt2", "fx"): "lowered"}
    # The killed worker's port went with it (its watchdog), and nothing else is left: its task
    # folder (the port's IR), which it could not remove, went at the next task's start.
    _until(lambda: not [p for p in first_ports if not _gone(p)], 30, "the killed port to go")
    assert _gone(first)
    assert not [f for f in orphan if f.exists()] and not list(cluster.tmp.glob("harness-cluster-*"))


def test_a_scheduler_lost_mid_sweep_keeps_what_arrived_and_writes_the_board(cluster, tmp_path):
    """Round-4 probe: the scheduler killed mid-run was a traceback (FutureCancelledError, exit
    3) and no board; the records that arrived stay, the rest are lost, saying why."""
    cluster.add_worker()
    cluster.wait_for_workers(1)
    out = tmp_path / "gone"
    proc = _sweep("gpt2", "bert", "--frontend", "fx", "--no-numerics", "--cluster", cluster.address,
                  "--out", str(out))
    arrived = _until(lambda: list((out / "records").glob("*.json")), 600, "the first record")
    os.killpg(cluster.scheduler.pid, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1, stdout + stderr
    assert "Traceback" not in stderr and (out / "index.html").is_file()
    records = {p.stem: json.loads(p.read_text()) for p in (out / "records").glob("*.json")}
    assert set(records) == {"gpt2", "bert"} and arrived[0].stem in records
    lost = records[({"gpt2", "bert"} - {arrived[0].stem}).pop()]
    assert lost["reason"] == "lost" and "scheduler went away" in lost["detail"]
    assert "crashed (lost)" in stdout


def test_only_task_folders_whose_owner_is_gone_are_removed(tmp_path):
    from harness.sweep.cluster import OWNER, TASK_PREFIX, remove_orphans

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    folders = {}
    for name, owner in (("dead", dead), ("alive", str(os.getpid())), ("starting", None),
                        ("garbled", "x")):
        folder = folders[name] = tmp_path / f"{TASK_PREFIX}{name}"
        (folder / "ports").mkdir(parents=True)
        (folder / "ports" / "weights.mlir").write_text("ir")
        if owner is not None:
            (folder / OWNER).write_text(owner)
    other = tmp_path / "elsewhere"
    (other / OWNER).parent.mkdir()
    (other / OWNER).write_text(dead)
    link = tmp_path / f"{TASK_PREFIX}link"
    link.symlink_to(other, target_is_directory=True)
    assert remove_orphans(tmp_path) == [folders["dead"]]
    assert not folders["dead"].exists()
    assert all(folders[n].exists() for n in ("alive", "starting", "garbled"))
    assert link.is_symlink() and (other / OWNER).is_file()  # a link is never followed


def test_a_model_whose_workers_die_twice_is_lost_naming_the_worker(cluster, tmp_path):
    out = tmp_path / "lost"
    proc, first_ports = _sweep_gpt2_on_two_workers(cluster, out)
    _kill_the_worker_running("gpt2", cluster)
    _until(lambda: all(_gone(p) for p in first_ports), 60, "the first port to go")
    _kill_the_worker_running("gpt2", cluster)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1, stdout + stderr
    failure = json.loads((out / "records" / "gpt2.json").read_text())
    assert failure["reason"] == "lost"
    assert "died 2 times, last tcp://127.0.0.1:" in failure["detail"]
    assert "crashed (lost)" in stdout
    _until(lambda: not [p for p in _ports_of("gpt2", cluster) if not _gone(p)], 30,
           "no port left running")


def test_cluster_errors_are_one_paragraph(tmp_path):
    for address, expected in (("local:0", "local:N wants N >= 1"),
                              ("example.org:8786", "neither local:N nor a scheduler address"),
                              ("tcp://127.0.0.1:9", "no Dask scheduler answers there")):
        proc = _sweep("gpt2", "--cluster", address, "--out", str(tmp_path / address.replace("/", "_")))
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 2, stdout + stderr
        assert expected in stderr and "Traceback" not in stderr


def test_without_dask_the_error_names_the_extra(tmp_path):
    """An environment without the extra: a ``distributed`` that cannot be imported."""
    shadow = tmp_path / "shadow" / "distributed"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('no distributed here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow.parent), str(ROOT)])}
    proc = _sweep("gpt2", "--cluster", "local:1", "--out", str(tmp_path / "out"), env=env)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 2, stdout + stderr
    assert "pip install -e '.[cluster]'" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("address", ["tcp://", ":notaport", "tcp://[::1", "inproc://", "ucx://h:1",
                                     "tcp://127.0.0.1:99999", "tcp://127.0.0.1:x"])
def test_a_malformed_scheduler_address_is_a_usage_error(address):
    """Round-4 probes: these were tracebacks (exit 3)."""
    from harness.errors import UsageError
    from harness.sweep.cluster import connect

    with pytest.raises(UsageError, match="neither local:N nor a scheduler address"), connect(address):
        pass


def _listener(reply: bytes | None):
    """A TCP listener on 127.0.0.1 that accepts, sends ``reply`` (None: nothing) and holds the
    connection open: (port, stop)."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held = []
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            if reply is not None:
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()

    def close():
        stop.set()
        for conn in held:
            conn.close()
        server.close()

    return server.getsockname()[1], close


@pytest.mark.parametrize("reply, says", [
    (None, "sent nothing in 2 s"),                                       # accepts, never answers: hung
    (b"HTTP/1.1 400 Bad Request\r\n\r\n", "is not a Dask scheduler"),  # MemoryError (exabytes)
])
def test_a_listener_that_is_no_scheduler_is_refused_in_time(reply, says, monkeypatch):
    import time

    from harness.errors import UsageError
    from harness.sweep import cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 2.0)
    port, close = _listener(reply)
    try:
        began = time.monotonic()
        with pytest.raises(UsageError, match=says), cluster.connect(f"tcp://127.0.0.1:{port}"):
            pass
        assert time.monotonic() - began < 10
    finally:
        close()



def test_a_task_folder_left_by_a_killed_worker_goes_with_the_next_cluster_sweep(tmp_path):
    """Round-4 probe (leak 5): a worker killed outright (SIGKILL to a sweep's local cluster, a
    lost machine) leaves its task folder (``harness-cluster-*``, the port's IR) in its temp
    folder; the next cluster sweep on that machine removes it, and leaves no folder of its own."""
    from harness.sweep.cluster import OWNER, TASK_PREFIX

    tmp = tmp_path / "tmp"
    orphan = tmp / f"{TASK_PREFIX}killed" / "ports"
    orphan.mkdir(parents=True)
    (orphan / "gpt2.torch.mlir").write_text("weights")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (orphan.parent / OWNER).write_text(dead)
    proc = _sweep("gpt2", "--frontend", "fx", "--no-numerics", "--cluster", "local:1", "--out",
                  str(tmp_path / "out"), env={**os.environ, "TMPDIR": str(tmp)})
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stdout + stderr
    assert not list(tmp.glob(f"{TASK_PREFIX}*"))
