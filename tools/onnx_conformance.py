#!/usr/bin/env python3
"""Upstream torch-mlir's e2e suite through the harness's paths, beside upstream's own configs.

Why: upstream holds its own paths to its e2e suite: the FX importer on to linalg, TOSA and
StableHLO (``FxImporterTestConfig``; e2e.py's ``fx``, ``fx_importer_tosa``,
``fx_importer_stablehlo``) and ONNX (``OnnxBackendTestConfig``: torch.onnx.export(dynamo=True)
of the eager module, the wheel's onnx_importer, ``torch-onnx-to-torch-backend-pipeline``; e2e.py's
``onnx`` and ``onnx_tosa``), TOSA and StableHLO checked on linalg and the RefBackend. The
harness's frontends and targets take the same routes. Running the same tests through both, on
the same machine, says what the harness's path passes that upstream's does not and the reverse,
test by test. ``--frontend fx|onnx`` (default onnx) and ``--target linalg|tosa|stablehlo``
(default linalg; harness/compiler/targets.py) pick the path; :data:`ANCHORS` names upstream's
config for it and the expectation sets the results are read against.

No upstream code lives in this repository. At run time the tool extracts upstream's e2e package
(``projects/pt1/python/torch_mlir_e2e_test``) and its expectation sets (``xfail_sets.py``) at
``--rev`` from a git clone of llvm/torch-mlir (``--mirror``, default ``$TORCH_MLIR_MIRROR``) into
a scratch folder, registers the tests, and runs each through a ``TestConfig`` whose ``compile``
and ``run`` are the harness's path (tools/conformance_paths.py: the frontend's export and import,
the frontend's and the target's pipelines.toml stages, the harness's RefBackend). Upstream's own
``compile_and_run_test`` and ``SingleTestReport`` make the golden trace and judge the results,
at upstream's tolerances.

Each test runs in a worker process (``--jobs`` of them); a worker that dies (a segfault, an LLVM
abort) costs that test only and is started again; a test past its timeout is killed.
The results JSON has the shape ``../shared/conformance/e2e.py --out`` writes, and ``--compare
UPSTREAM.json OURS.json`` lists, for every test, both outcomes and the differences by class.

    python tools/onnx_conformance.py --every 8 --jobs 1 --out /tmp/harness-onnx-every8.json -q
    python tools/onnx_conformance.py --compare /tmp/e2e-onnx-every8.json /tmp/harness-onnx-every8.json
    python tools/onnx_conformance.py --frontend fx --target tosa --every 8 --out /tmp/fx-tosa.json -q
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime
import importlib.util
import io
import json
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _folder in (ROOT, ROOT / "tools"):  # the harness, and this tool's paths beside it
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from conformance_paths import HarnessPath, first_line, make_config

#: The upstream paths a run needs: the e2e framework and tests, and the expectation sets.
UPSTREAM_PATHS = ("projects/pt1/python/torch_mlir_e2e_test", "projects/pt1/e2e_testing/xfail_sets.py")
PY_ROOT = "projects/pt1/python"
FRONTENDS, TARGETS = ("fx", "onnx"), ("linalg", "tosa", "stablehlo")


@dataclass(frozen=True)
class Anchor:
    """Upstream's own config for the same frontend and target: the e2e.py --config that runs it
    and its expectation sets in xfail_sets.py."""

    config: str
    xfail_set: str
    crashing_set: str


#: The anchor of each of the harness's paths (frontend, target). Upstream has no ONNX config
#: with StableHLO, so that path has no anchor (and is refused).
ANCHORS: dict[tuple[str, str], Anchor] = {
    ("fx", "linalg"): Anchor("fx", "FX_IMPORTER_XFAIL_SET", "FX_IMPORTER_CRASHING_SET"),
    ("fx", "tosa"): Anchor("fx_importer_tosa", "FX_IMPORTER_TOSA_XFAIL_SET", "FX_IMPORTER_TOSA_CRASHING_SET"),
    ("fx", "stablehlo"): Anchor("fx_importer_stablehlo", "FX_IMPORTER_STABLEHLO_XFAIL_SET",
                                "FX_IMPORTER_STABLEHLO_CRASHING_SET"),
    ("onnx", "linalg"): Anchor("onnx", "ONNX_XFAIL_SET", "ONNX_CRASHING_SET"),
    ("onnx", "tosa"): Anchor("onnx_tosa", "ONNX_TOSA_XFAIL_SET", "ONNX_TOSA_CRASHING_SET"),
}


def config_name(frontend: str, target: str) -> str:
    """The results' config name: harness-onnx (the tool's first and default path),
    harness-fx, harness-fx-tosa, ..."""
    return f"harness-{frontend}" + ("" if target == "linalg" else f"-{target}")
DEFAULT_WORKDIR = Path(tempfile.gettempdir()) / "onnx-conformance"
#: e2e.py's scratch folder: its torchvision (installed there when the environment has none)
#: is reused rather than installed a second time.
E2E_DEPS = Path(tempfile.gettempdir()) / "e2e-upstream" / "deps"

# Small stand-ins for two modules upstream's files import that the torch-mlir wheel and this
# environment lack: torch_mlir._version (the wheel does not ship it; torch_mlir is a namespace
# package there, so this folder merges into it) and `multiprocess` (framework.py imports it at
# module level for a pool this tool never uses).
VERSION_STANDIN = """\
import torch
from packaging import version


def torch_version_for_comparison():
    return version.parse(torch.__version__.partition("+")[0])
"""
MULTIPROCESS_STANDIN = """\
from multiprocessing import *  # noqa: F403
from multiprocessing import Pool, cpu_count, set_start_method  # noqa: F401
"""


class InputError(Exception):
    """A bad input of the command line: one paragraph naming it and what to do; exit 2."""


def log(message: str) -> None:
    print(message, flush=True)


# ------------------------------------------------------------------------------------------------
# Upstream's files, extracted at run time
# ------------------------------------------------------------------------------------------------


def _git(mirror: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", os.fspath(mirror), *args], capture_output=True, text=True,
                          check=False)


def resolve_rev(mirror: str | None, rev: str) -> tuple[Path, str]:
    """The clone and the full commit of ``rev`` in it; InputError when either is not there."""
    if not mirror:
        raise InputError("no torch-mlir clone given: set $TORCH_MLIR_MIRROR or pass --mirror to a "
                         "git clone (bare or not) of llvm/torch-mlir, e.g. the one the search "
                         "tool's fetch of github:llvm/torch-mlir made.")
    path = Path(mirror)
    if not path.is_dir() or _git(path, "rev-parse", "--git-dir").returncode != 0:
        why = "git rev-parse failed there" if path.is_dir() else "not a directory"
        raise InputError(f"--mirror {shlex.quote(mirror)} is not a git clone ({why}); "
                         "pass a clone of llvm/torch-mlir (bare or not), or set $TORCH_MLIR_MIRROR "
                         "to one.")
    done = _git(path, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if done.returncode != 0 or not done.stdout.strip():
        raise InputError(f"--rev {shlex.quote(rev)} names no commit in {mirror}; pass a commit, "
                         "tag or branch of that clone (default HEAD), e.g. one `git -C "
                         f"{shlex.quote(mirror)} log --oneline` lists.")
    return path, done.stdout.strip()


@dataclass(frozen=True)
class Upstream:
    sha: str
    date: str
    root: Path       # the extraction
    standins: Path   # torch_mlir/_version.py and multiprocess.py

    @property
    def python(self) -> Path:
        return self.root / PY_ROOT

    @property
    def xfail_sets(self) -> Path:
        return self.root / "projects/pt1/e2e_testing/xfail_sets.py"

    def to_json(self) -> dict[str, str]:
        return {"sha": self.sha, "date": self.date, "root": os.fspath(self.root),
                "standins": os.fspath(self.standins)}

    @classmethod
    def from_json(cls, data: dict[str, str]) -> Upstream:
        return cls(data["sha"], data["date"], Path(data["root"]), Path(data["standins"]))


def extract(mirror: Path, sha: str, workdir: Path) -> Upstream:
    """Upstream's e2e package and xfail sets at ``sha``, in ``workdir/src-SHA12`` (made once per
    commit: extracted beside it, then renamed, so a concurrent run never imports half a tree)."""
    root = workdir / f"src-{sha[:12]}"
    if not (root / ".extracted").is_file():
        staging = workdir / f"{root.name}.tmp-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", os.fspath(mirror), "archive", sha, *UPSTREAM_PATHS],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise InputError(f"{mirror} at {sha[:12]} has no {' or '.join(UPSTREAM_PATHS)} (git "
                             f"archive: {archive.stderr.decode(errors='replace').strip()[:200]}); "
                             "pass a --rev of torch-mlir that has the pt1 e2e suite.")
        subprocess.run(["tar", "-x", "-C", os.fspath(staging)], input=archive.stdout, check=True)
        (staging / ".extracted").write_text(sha + "\n")
        shutil.rmtree(root, ignore_errors=True)  # an interrupted extraction's leftovers
        try:
            staging.rename(root)
        except OSError:  # another run got there first
            shutil.rmtree(staging, ignore_errors=True)
    standins = workdir / "standins"
    (standins / "torch_mlir").mkdir(parents=True, exist_ok=True)
    _write_atomically(standins / "torch_mlir" / "_version.py", VERSION_STANDIN)
    _write_atomically(standins / "multiprocess.py", MULTIPROCESS_STANDIN)
    date = _git(mirror, "show", "-s", "--format=%cI", sha).stdout.strip()
    return Upstream(sha, date, root, standins)


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def bootstrap(upstream: Upstream) -> None:
    """Makes the extracted e2e package importable here, without its ``configs/__init__`` (it
    imports every upstream config, some of which need what the wheel lacks)."""
    for p in (upstream.python, upstream.standins):
        if os.fspath(p) not in sys.path:
            sys.path.insert(0, os.fspath(p))
    if importlib.util.find_spec("torchvision") is None and E2E_DEPS.is_dir():
        sys.path.append(os.fspath(E2E_DEPS))
    _import_torchvision()
    import torch_mlir_e2e_test

    name = "torch_mlir_e2e_test.configs"
    if name not in sys.modules:
        package = types.ModuleType(name)
        package.__path__ = [os.fspath(Path(torch_mlir_e2e_test.__file__).parent / "configs")]
        sys.modules[name] = package


def _import_torchvision() -> None:
    """Upstream's suite imports torchvision (its conv and vision tests). PyPI's torchvision is
    a CUDA build whose C++ ops do not load beside the CPU torch, and its import then fails
    registering their fake kernels; without that module the Python models still import (the
    tests of torchvision's own ops then fail in their golden run, in both configs)."""
    if importlib.util.find_spec("torchvision") is None:
        raise InputError("torchvision is not importable, and upstream's test suite imports it: "
                         "install it into the environment (torchvision matching torch), or run "
                         "../shared/conformance/e2e.py once, which installs it into "
                         f"{E2E_DEPS} where this tool finds it.")
    try:
        import torchvision
    except RuntimeError as error:
        if "torchvision::" not in str(error):
            raise
        for loaded in [m for m in sys.modules if m.split(".")[0] == "torchvision"]:
            del sys.modules[loaded]
        sys.modules["torchvision._meta_registrations"] = types.ModuleType(
            "torchvision._meta_registrations")
        import torchvision  # noqa: F401


def load_sets(upstream: Upstream, anchor: Anchor) -> tuple[set[str], set[str]]:
    """The anchor's expectation sets, xfail and crashing (xfail_sets.py prints the torch
    version: silenced)."""
    spec = importlib.util.spec_from_file_location("upstream_xfail_sets", upstream.xfail_sets)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(module)
    return set(getattr(module, anchor.xfail_set)), set(getattr(module, anchor.crashing_set))


def load_tests() -> dict[str, Any]:
    from torch_mlir_e2e_test.registry import GLOBAL_TEST_REGISTRY
    from torch_mlir_e2e_test.test_suite import register_all_tests

    if not GLOBAL_TEST_REGISTRY:
        register_all_tests()
    return {t.unique_name: t for t in GLOBAL_TEST_REGISTRY}


def select_tests(names: Sequence[str], pattern: str, every: int, offset: int) -> list[str]:
    """The sample e2e.py takes for the same arguments: the sorted names ``pattern`` matches
    (re.match), then every ``every``-th from ``offset``."""
    chosen = [n for n in sorted(names) if re.match(pattern, n)]
    return [n for i, n in enumerate(chosen) if i % every == offset % every]


# ------------------------------------------------------------------------------------------------
# The worker: upstream's framework runs the harness's path on one test at a time
# ------------------------------------------------------------------------------------------------


STAGE_IN_ERROR = re.compile(r"HarnessStageError: \[([\w.-]+)\] (.*)")


def classify(result: Any, report: Any) -> dict[str, Any]:
    """Upstream's TestResult and SingleTestReport as a record: status, stage, first error line."""
    if result.compilation_error is None and result.runtime_error is None:
        if not report.failed:
            return {"status": "pass"}
        text = report.error_str()
        line = next((x.strip() for x in text.splitlines() if "ERROR" in x), text.strip())
        return {"status": "fail", "stage": "mismatch", "summary": line[:400], "error": _clip(text)}
    error = result.compilation_error or result.runtime_error
    if error.startswith("Test timed out"):
        return {"status": "timeout", "stage": "timeout", "summary": error.strip().splitlines()[0]}
    found = STAGE_IN_ERROR.search(error)
    if found:
        stage, summary = found.group(1), found.group(2)
    elif "in generate_golden_trace" in error:
        stage, summary = "golden", _last_exception(error)
    else:
        stage, summary = "tool", _last_exception(error)
    return {"status": "fail", "stage": stage, "summary": summary[:400], "error": _clip(error)}


def _last_exception(text: str) -> str:
    lines = [x for x in text.rstrip().splitlines() if x.strip() and not x.startswith(" ")]
    return lines[-1].strip() if lines else ""


def _clip(text: str, head: int = 2000, tail: int = 3000) -> str:
    if len(text) <= head + tail:
        return text
    return f"{text[:head]}\n[... {len(text) - head - tail} characters left out ...]\n{text[-tail:]}"


def worker_main(upstream: Upstream, path: HarnessPath, folder: Path, timeout_s: float,
                default_export: bool) -> int:
    """A worker: test names in on stdin, one JSON record a line out on the original stdout;
    whatever tests, torch and MLIR print goes to stderr (the worker's log)."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    bootstrap(upstream)
    from torch_mlir_e2e_test.framework import compile_and_run_test
    from torch_mlir_e2e_test.reporting import ErrorContext, SingleTestReport

    tests = load_tests()
    config = make_config(path, folder, timeout_s, default_export)
    channel.write(json.dumps({"ready": os.getpid()}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            break
        request = json.loads(line)
        name = request["name"]
        test = tests[name]._replace(timeout_seconds=request["timeout"])
        config.test = name
        print(f"===== {name}", file=sys.stderr, flush=True)
        start = time.monotonic()
        try:
            result = compile_and_run_test(test, config)
            record = classify(result, SingleTestReport(result, ErrorContext.empty()))
        except Exception as error:  # outside upstream's own try blocks: this tool's bug
            record = {"status": "fail", "stage": "tool", "summary": first_line(error),
                      "error": _clip("".join(traceback.format_exception(error)))}
        record.update(name=name, duration_s=round(time.monotonic() - start, 2))
        if record["status"] == "pass":
            shutil.rmtree(folder / name, ignore_errors=True)  # a failure's files stay to read
        channel.write(json.dumps(record) + "\n")
    return 0


# ------------------------------------------------------------------------------------------------
# Scheduling (parent side)
# ------------------------------------------------------------------------------------------------


class Worker:
    """One worker process and its line channel, read with a deadline."""

    def __init__(self, command: list[str], log_path: Path, startup_s: float):
        self.log = log_path.open("ab")
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, start_new_session=True)
        self.buffer = b""
        self.log_path = log_path
        ready = self.read(time.monotonic() + startup_s)
        if ready is None or "ready" not in ready:
            self.kill()
            raise RuntimeError(f"a worker did not start; see {log_path}")

    def read(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON line; None at the deadline; EOFError when the worker died."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line) if line.startswith(b"{") else self.read(deadline)

    def ask(self, name: str, timeout: int, grace: float) -> dict[str, Any]:
        assert self.proc.stdin is not None
        offset = self.log_path.stat().st_size
        self.proc.stdin.write((json.dumps({"name": name, "timeout": timeout}) + "\n").encode())
        self.proc.stdin.flush()
        start = time.monotonic()
        try:
            record = self.read(start + timeout + grace)
        except EOFError:
            self.proc.wait(timeout=10)
            tail = self._log_since(offset)
            return {"name": name, "status": "crash", "stage": "crash",
                    "summary": f"worker {_exit_text(self.proc.returncode)}: {_crash_line(tail)}",
                    "error": _clip(tail), "duration_s": round(time.monotonic() - start, 2)}
        if record is None:
            self.kill()
            return {"name": name, "status": "timeout", "stage": "timeout",
                    "summary": f"killed after {timeout + grace:.0f} s (timeout {timeout} s, the "
                               "in-process alarm did not end it)",
                    "duration_s": round(time.monotonic() - start, 2)}
        return record

    def _log_since(self, offset: int) -> str:
        with self.log_path.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")[-6000:]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self.log.close()

    def close(self) -> None:
        if self.proc.poll() is None and self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.write(b"\n")
                self.proc.stdin.flush()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.kill()


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exited with status {code}"


def _crash_line(text: str) -> str:
    for pattern in (r"Assertion .* failed.*", r"LLVM ERROR: .*", r"Fatal Python error: .*",
                    r"\berror: .*"):
        found = re.search(pattern, text)
        if found:
            return found.group(0)[:300]
    return "no message"


def run_all(names: list[str], timeouts: dict[str, int], command: list[str], args: argparse.Namespace,
            log_dir: Path, save: Callable[[dict[str, dict[str, Any]]], None]) -> dict[str, dict[str, Any]]:
    """``names`` over ``args.jobs`` workers; a dead or stuck worker is replaced."""
    pending = collections.deque(names)
    results: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    start = time.monotonic()

    def slot(index: int) -> None:
        worker: Worker | None = None
        generation = 0
        while True:
            with lock:
                if not pending:
                    break
                name = pending.popleft()
            if worker is None or not worker.alive():
                generation += 1
                worker = Worker(command, log_dir / f"worker-{index}-{generation}.log", args.startup_timeout)
            record = worker.ask(name, timeouts[name], args.kill_grace)
            if record["status"] in ("crash", "timeout"):
                worker.kill()
                worker = None
            record.pop("name", None)
            with lock:
                results[name] = record
                done = len(results)
                if done % 25 == 0:
                    save(dict(results))
            if not args.quiet or record["status"] != "pass":
                extra = (f"  [{record.get('stage')}] {record.get('summary', '')[:150]}"
                         if record["status"] != "pass" else "")
                log(f"[{done}/{len(names)} {time.monotonic() - start:6.0f}s] {record['status'].upper():7} "
                    f"{name} ({record.get('duration_s', 0):.1f}s){extra}")
        if worker is not None:
            worker.close()

    threads = [threading.Thread(target=slot, args=(i,), daemon=True)
               for i in range(max(1, min(args.jobs, len(names))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


# ------------------------------------------------------------------------------------------------
# Comparison
# ------------------------------------------------------------------------------------------------


def load_results(path: str) -> dict[str, Any]:
    """A results JSON (this tool's or e2e.py's --out); InputError when it is not one."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as error:
        raise InputError(f"cannot read results file {path} ({error.strerror}); pass the --out "
                         "JSON of a run of this tool or of ../shared/conformance/e2e.py.") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{path} is not JSON ({error.msg} at line {error.lineno}); pass the "
                         "--out JSON of a finished run (not a log).") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tests"), dict):
        raise InputError(f"{path} has no \"tests\" object; pass the --out JSON of a run of this "
                         "tool or of ../shared/conformance/e2e.py.")
    return doc


def signature(record: dict[str, Any]) -> str:
    """The record's cause, with numbers, addresses and temp paths left out: equal signatures
    are one difference."""
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", record.get("summary", ""))
    text = re.sub(r"/tmp/\S+", "<tmp>", text)
    text = re.sub(r"\d+", "N", text)
    return f"{record.get('stage', '?')}: {text[:160]}"


def compare(upstream: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """Every test of both files with both outcomes, and the differences by class."""
    a, b = upstream["tests"], ours["tests"]
    tests = {}
    classes: dict[str, list[str]] = {k: [] for k in (
        "pass_both", "harness_only_fail", "upstream_only_fail", "fail_both", "skipped", "one_file_only")}
    for name in sorted(set(a) | set(b)):
        ra, rb = a.get(name), b.get(name)
        tests[name] = {"upstream": (ra or {}).get("status", "absent"),
                       "harness": (rb or {}).get("status", "absent")}
        if ra is None or rb is None:
            key = "one_file_only"
        elif "skipped" in (ra["status"], rb["status"]):
            key = "skipped"
        elif ra["status"] == "pass":
            key = "pass_both" if rb["status"] == "pass" else "harness_only_fail"
        else:
            key = "upstream_only_fail" if rb["status"] == "pass" else "fail_both"
        classes[key].append(name)
    by_cause: dict[str, dict[str, list[str]]] = {}
    for key, side in (("harness_only_fail", b), ("upstream_only_fail", a)):
        causes: dict[str, list[str]] = collections.defaultdict(list)
        for name in classes[key]:
            causes[signature(side[name])].append(name)
        by_cause[key] = dict(sorted(causes.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    return {"upstream": upstream.get("meta", {}).get("config", "?"),
            "harness": ours.get("meta", {}).get("config", "?"),
            "counts": {k: len(v) for k, v in classes.items()},
            "classes": classes, "by_cause": by_cause, "tests": tests}


def print_comparison(result: dict[str, Any], upstream: dict[str, Any], ours: dict[str, Any],
                     every_test: bool) -> None:
    c = result["counts"]
    log(f"{sum(c.values())} tests: pass in both {c['pass_both']}, fail only through the harness "
        f"{c['harness_only_fail']}, fail only in upstream's config {c['upstream_only_fail']}, fail "
        f"in both {c['fail_both']}, skipped by either {c['skipped']}, in one file only "
        f"{c['one_file_only']}")
    for key, title, side in (("harness_only_fail", "fail only through the harness (upstream passes)", ours),
                             ("upstream_only_fail", "fail only in upstream's config (the harness passes)",
                              upstream)):
        if not result["classes"][key]:
            continue
        log(f"\n{title}, by cause:")
        for cause, names in result["by_cause"][key].items():
            log(f"  {len(names):3d}  {cause}")
            for name in names:
                log(f"         {name}  [{side['tests'][name].get('stage')}] "
                    f"{side['tests'][name].get('summary', '')[:150]}")
    if every_test:
        log("\nevery test (upstream / harness):")
        for name, both in result["tests"].items():
            log(f"  {both['upstream']:8} {both['harness']:8} {name}")


# ------------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------------


def write_json(path: str, doc: dict[str, Any]) -> None:
    """``doc`` at ``path``, atomically (a temp file beside it, renamed into place)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".onnx-conformance-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mirror", default=os.environ.get("TORCH_MLIR_MIRROR"),
                   help="git clone of llvm/torch-mlir (default: $TORCH_MLIR_MIRROR)")
    p.add_argument("--rev", default="HEAD", help="upstream commit to extract (default HEAD)")
    p.add_argument("--frontend", choices=FRONTENDS, default="onnx",
                   help="the harness's frontend: fx (torch.export, the wheel's fx_importer, "
                        "fx-to-torch) or onnx (torch.onnx.export of that export, the wheel's "
                        "onnx_importer, onnx-to-torch); default onnx")
    p.add_argument("--target", choices=TARGETS, default="linalg",
                   help="the harness's target (harness/compiler/targets.py): its stages after the "
                        "frontend's pipeline, then the RefBackend; default linalg")
    p.add_argument("--workdir", default=os.fspath(DEFAULT_WORKDIR),
                   help="scratch folder: the extraction, worker logs, failing tests' files")
    p.add_argument("--filter", default=".*", help="regex re.match'ed against test names (as e2e.py)")
    p.add_argument("--every", type=int, default=1, help="keep every Nth test of the sorted selection")
    p.add_argument("--offset", type=int, default=0, help="the first index kept by --every")
    p.add_argument("--jobs", "-j", type=int, default=1, help="worker processes")
    p.add_argument("--timeout-per-test", type=int, default=120,
                   help="seconds; caps each test's own timeout (upstream's default is 120)")
    p.add_argument("--kill-grace", type=float, default=30.0,
                   help="seconds past the timeout before a stuck worker is killed")
    p.add_argument("--startup-timeout", type=float, default=300.0, help="seconds for a worker to start")
    p.add_argument("--run-crashing", action="store_true",
                   help="also run the tests of the anchor's CRASHING set (skipped by default, as e2e.py)")
    p.add_argument("--default-export", action="store_true",
                   help="diagnostic: export with torch.export's defaults (the FX frontend's), not "
                        "as torch.onnx.export's own capture does (the ONNX frontend's; see "
                        "docs/conformance.md)")
    p.add_argument("--out", help="results JSON, written atomically (and every 25 tests while running)")
    p.add_argument("--list", action="store_true", help="print the selected tests and exit")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the tests that do not pass")
    p.add_argument("--compare", nargs=2, metavar=("UPSTREAM.json", "HARNESS.json"),
                   help="compare e2e.py's JSON of the anchor config with this tool's, and exit")
    p.add_argument("--all", action="store_true", help="with --compare: list every test's two outcomes")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for flag, value, low in (("--every", args.every, 1), ("--jobs", args.jobs, 1),
                             ("--timeout-per-test", args.timeout_per_test, 1)):
        if value < low:
            raise InputError(f"{flag} {value} is below {low}; pass a whole number of at least {low}.")
    if (args.frontend, args.target) not in ANCHORS:
        raise InputError(f"--frontend {args.frontend} --target {args.target}: upstream has no e2e "
                         "config of that frontend and target to compare with (no expectation "
                         "sets); pass one of " + ", ".join(
                             f"--frontend {f} --target {t}" for f, t in ANCHORS) + ".")
    if args.default_export and args.frontend != "onnx":
        raise InputError("--default-export is the ONNX path's diagnostic (its export as the FX "
                         "frontend's); the FX path exports with those defaults already: leave it "
                         "out, or pass --frontend onnx.")
    if args.offset < 0:
        raise InputError(f"--offset {args.offset} is negative; pass 0 to {args.every - 1}.")
    try:
        re.compile(args.filter)
    except re.error as error:
        raise InputError(f"--filter {args.filter!r} is not a regular expression ({error}); pass "
                         "one Python's re accepts, e.g. 'Softmax|AddmmModule_basic'.") from None
    return args


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _main(argv: Sequence[str] | None) -> int:
    args = parse_args(argv)
    if args.worker:
        spec = json.loads(args.worker)
        return worker_main(Upstream.from_json(spec["upstream"]), HarnessPath(*spec["path"]),
                           Path(spec["folder"]), spec["timeout"], spec.get("default_export", False))
    if args.compare:
        upstream, ours = (load_results(p) for p in args.compare)
        result = compare(upstream, ours)
        print_comparison(result, upstream, ours, args.all)
        if args.out:
            write_json(args.out, result)
        return 0
    return run_command(args)


def run_command(args: argparse.Namespace) -> int:
    """The run: extract, select, run each test in a worker, write the results, summarize."""
    mirror, sha = resolve_rev(args.mirror, args.rev)
    started = time.monotonic()
    workdir = Path(args.workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    upstream = extract(mirror, sha, workdir)
    bootstrap(upstream)
    import torch

    tests = load_tests()
    path, anchor = HarnessPath(args.frontend, args.target), ANCHORS[args.frontend, args.target]
    config = config_name(args.frontend, args.target)
    xfail, crashing = load_sets(upstream, anchor)
    selected = select_tests(list(tests), args.filter, args.every, args.offset)
    if not selected:
        raise InputError(f"--filter {args.filter!r} with --every {args.every} --offset {args.offset} "
                         f"selects none of the {len(tests)} tests; widen the filter.")
    skipped = [] if args.run_crashing else [n for n in selected if n in crashing]
    to_run = [n for n in selected if n not in skipped]
    if args.list:
        for name in selected:
            log(("SKIP " if name in skipped else "") + name)
        log(f"{len(selected)} selected, {len(skipped)} skipped, of {len(tests)}")
        return 0
    run_id = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    log_dir, files = workdir / "logs" / run_id, workdir / "files" / run_id
    log_dir.mkdir(parents=True)
    timeouts = {n: min(tests[n].timeout_seconds, args.timeout_per_test) for n in to_run}
    command = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(
        {"upstream": upstream.to_json(), "path": [path.frontend, path.target], "folder": os.fspath(files),
         "timeout": args.timeout_per_test, "default_export": args.default_export})]
    meta = {"config": config, "frontend": path.frontend, "target": path.target,
            "anchor": anchor.config, "command": shlex.join([sys.executable, *sys.argv]),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "upstream": {"mirror": os.fspath(mirror), "rev": args.rev, "sha": sha, "date": upstream.date,
                         "extracted_to": os.fspath(upstream.root)},
            "torch": torch.__version__, "filter": args.filter, "every": args.every,
            "offset": args.offset, "default_export": args.default_export,
            "jobs": args.jobs, "timeout_per_test": args.timeout_per_test,
            "registered": len(tests), "expected_sets": [anchor.xfail_set, anchor.crashing_set],
            "worker_logs": os.fspath(log_dir), "failing_files": os.fspath(files)}

    def save(results: dict[str, dict[str, Any]], summary: dict[str, Any] | None = None) -> None:
        if not args.out:
            return
        doc: dict[str, Any] = {"meta": dict(meta, partial=summary is None), "summary": summary,
                               "skipped": skipped, "tests": {}}
        for name in selected:
            record = results.get(name) or ({"status": "skipped", "stage": "crashing-set"}
                                           if name in skipped else None)
            if record is not None:
                expected = name in xfail or name in crashing
                doc["tests"][name] = dict(record, expected_to_fail=expected)
        write_json(args.out, doc)

    log(f"[setup] upstream {sha[:12]} ({upstream.date[:10]}) -> {upstream.root}; {len(selected)} "
        f"selected of {len(tests)}, {len(skipped)} skipped ({anchor.crashing_set}), {len(to_run)} to run "
        f"with {args.jobs} worker(s); logs in {log_dir}")
    run_start = time.monotonic()
    results = run_all(to_run, timeouts, command, args, log_dir, save)
    counts = collections.Counter(r["status"] for r in results.values())
    failing = {n for n, r in results.items() if r["status"] != "pass"}
    expected = xfail | crashing
    summary = {"selected": len(selected), "run": len(results), "skipped": len(skipped),
               "pass": counts["pass"], "fail": counts["fail"], "timeout": counts["timeout"],
               "crash": counts["crash"], "not_passing_by_stage": dict(collections.Counter(
                   results[n].get("stage") for n in failing).most_common()),
               "unexpected_failures": sorted(failing - expected),
               "xpass": sorted((set(results) - failing) & expected)}
    meta["run_wall_s"] = round(time.monotonic() - run_start, 1)
    meta["total_wall_s"] = round(time.monotonic() - started, 1)
    save(results, summary)
    log(f"\n=== {config}: upstream {sha[:12]}, torch {torch.__version__}; {meta['run_wall_s']:.0f} s "
        f"wall with {args.jobs} worker(s)")
    log("not passing by stage: " + ", ".join(f"{k}={v}" for k, v in summary["not_passing_by_stage"].items()))
    log(f"vs upstream's {anchor.xfail_set}|{anchor.crashing_set}: "
        f"{len(summary['unexpected_failures'])} not passing and not expected to fail, "
        f"{len(summary['xpass'])} passing and expected to fail")
    log(f"{counts['pass']} passed, {len(failing)} failed, {len(skipped)} skipped")
    if args.out:
        log(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
