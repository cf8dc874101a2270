"""A RefBackend that stays up: one child process lowers and runs many small programs.

Why: localizing and reducing a miscompile runs the RefBackend tens of times on programs of a
few ops. ``run_refbackend`` starts two children per run (lowering, execution), and each spends
most of its time starting Python and loading the bindings. The worker is one child that serves
requests, so a run of a small program costs its lowering and code generation only.

- Requests go to the child's stdin and replies come back on a pipe of their own (fd
  ``--reply-fd``), one JSON object a line. The child points its fd 1 at its stderr: a runtime
  check's message (C ``puts``) cannot corrupt the replies, and it lands in the parent's log.
- Before each stage the child says which one starts; a crash, an ``abort()`` of a runtime check
  or a hang then ends only the child. The request's result names the stage, the signal and what
  the child printed, and the next request starts a new child.
- The child runs in its own session; on timeout or close the whole group is killed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Sequence

import numpy as np

from harness import defaults
from harness.compiler import forked
from harness.compiler.crash import decode_exit_status
from harness.compiler.process import watchdog
from harness.compiler.irfile import unique_dir, write_atomically

from .dtypes import TensorSignature
from .jit import check_inputs
from .lowering import LLVM_PIPELINE, resolve
from .refbackend import RefBackendResult, Stage

MODULE = "harness.execute.worker"
_PRINTED_MAX = 2000  # characters of the child's output kept in an error


@dataclass
class VariantLowering:
    """One pipeline of ``RefBackendWorker.lower_variants``: did it lower, and to what."""

    pipeline: str
    ok: bool
    llvm_path: str = ""
    digest: str = ""   # of the LLVM text: equal digests run alike
    error: str = ""


class RefBackendWorker:
    """Lowers linalg-on-tensors files to LLVM and runs them, in one long-lived child.

    Use as a context manager (the child is killed on exit). ``runs`` counts the programs
    executed: what a localization's "RefBackend runs" are.
    """

    def __init__(self, *, timeout_s: float = defaults.TIMEOUT_S, opt_level: int = 0,
                 work_dir: str | os.PathLike | None = None):
        self.timeout_s = timeout_s
        self.opt_level = opt_level
        self.folder = unique_dir("harness-worker-", work_dir)
        self.runs = 0
        self._proc: subprocess.Popen | forked.ForkedProcess | None = None
        self._reply_fd = -1
        self._log = self.folder / "worker.log"
        self._buffer = b""
        self._next_id = 0

    def __enter__(self) -> RefBackendWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- requests ---------------------------------------------------------------------------

    def run(self, linalg_path: str | os.PathLike, inputs: Sequence[np.ndarray], signature: TensorSignature,
            *, pipeline: str = LLVM_PIPELINE) -> RefBackendResult:
        """``linalg_path`` through ``pipeline`` (a pipelines.toml name or textual), then
        ``signature.name`` on ``inputs``: ``run_refbackend`` without the two process starts."""
        return self._run(linalg_path, inputs, signature, resolve(pipeline)[0])

    def execute(self, llvm_path: str | os.PathLike, inputs: Sequence[np.ndarray],
                signature: TensorSignature) -> RefBackendResult:
        """An LLVM-dialect file (already lowered) on ``inputs``."""
        return self._run(llvm_path, inputs, signature, "")

    def lower_variants(self, linalg_path: str | os.PathLike,
                       pipelines: Sequence[str]) -> list[VariantLowering]:
        """``linalg_path`` through each textual pipeline, the file parsed once; a pipeline that
        crashes the child costs that variant only."""
        out: list[VariantLowering] = []
        folder = Path(tempfile.mkdtemp(prefix="variants-", dir=self.folder))
        while len(out) < len(pipelines):
            start = len(out)
            request = {"kind": "variants", "input": os.fspath(linalg_path),
                       "pipelines": list(pipelines[start:]), "out_dir": str(folder), "first": start}
            replies, failure = self._request(request)
            for reply in replies:
                if reply.get("variant") is not None and "ok" in reply:
                    out.append(VariantLowering(pipelines[reply["variant"]], reply["ok"],
                                               reply.get("llvm", ""), reply.get("digest", ""),
                                               reply.get("error", "")))
            if failure is not None:
                crashed = len(out)
                if crashed < len(pipelines):
                    out.append(VariantLowering(pipelines[crashed], False, error=failure))
        return out

    def _run(self, path: str | os.PathLike, inputs: Sequence[np.ndarray], signature: TensorSignature,
             pipeline: str) -> RefBackendResult:
        inputs = [np.asarray(a) for a in inputs]
        check_inputs(inputs, signature.args, "the inputs")
        folder = Path(tempfile.mkdtemp(prefix="run-", dir=self.folder))
        inputs_path, outputs_path = folder / "inputs.npz", folder / "outputs.npz"
        write_atomically(inputs_path, lambda f: np.savez(f, allow_pickle=False,
                                                          **{f"arg{i}": a for i, a in enumerate(inputs)}),
                         binary=True)
        request = {"kind": "run", "input": os.fspath(path), "pipeline": pipeline,
                   "function": signature.name, "signature": signature.to_json(),
                   "inputs": str(inputs_path), "outputs": str(outputs_path), "opt_level": self.opt_level}
        start = time.perf_counter()
        log_start = self._log.stat().st_size if self._log.exists() else 0
        replies, failure = self._request(request)
        self.runs += 1
        result = RefBackendResult(signature.name, work_dir=str(folder))
        stages = [r["stage"] for r in replies if "stage" in r]
        final = next((r for r in replies if "ok" in r), None)
        if failure is not None:
            result.failed_stage = Stage.parse(stages[-1]) if stages else Stage.LOWERING
            result.error = failure
            return result
        assert final is not None
        result.seconds = {**final.get("seconds", {}), "process": time.perf_counter() - start}
        if not final["ok"]:
            result.failed_stage = Stage.parse(final["stage"])
            result.error = final["error"]
            if result.failed_stage is Stage.EXECUTION:
                # What the engine printed first ("JIT session error: Symbols not found: [ ... ]"),
                # as the isolated child's error has it: the exception alone does not name them.
                printed = self._printed_since(log_start).strip()[-_PRINTED_MAX:]
                if printed:
                    result.error = f"{printed}\nerror: {result.error}"
            return result
        with np.load(outputs_path) as npz:
            result.outputs = tuple(npz[f"result{i}"] for i in range(len(npz.files)))
        return result

    # --- the child --------------------------------------------------------------------------

    def _start(self) -> None:
        read_fd, write_fd = os.pipe()
        src_root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ,
               "PYTHONPATH": os.pathsep.join(filter(None, [src_root, os.environ.get("PYTHONPATH")]))}
        cmd = [sys.executable, "-m", MODULE, "--reply-fd", str(write_fd)]
        with open(self._log, "ab") as log:
            self._proc = _forked(cmd, log.fileno(), write_fd, env) if forked.forkable(cmd) else None
            if self._proc is None:
                watchdog.ready()
                self._proc = subprocess.Popen(
                    cmd, stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(write_fd,),
                    start_new_session=True, env=watchdog.environment(env))
                watchdog.watch(self._proc.pid)
        os.close(write_fd)
        self._reply_fd = read_fd
        self._buffer = b""

    def _request(self, request: dict) -> tuple[list[dict], str | None]:
        """Sends ``request``; its replies (stage markers, then the result) and, when the child
        died or hung first, why."""
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            self._start()
        assert self._proc is not None and self._proc.stdin is not None
        self._next_id += 1
        request = {**request, "id": self._next_id}
        log_start = self._log.stat().st_size
        try:
            self._proc.stdin.write((json.dumps(request) + "\n").encode())
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass  # it died: read_reply sees the end of the pipe
        replies: list[dict] = []
        deadline = time.monotonic() + self.timeout_s
        while True:
            line = self._read_line(deadline)
            if line is None:
                timed_out = time.monotonic() >= deadline
                return replies, self._died(log_start, timed_out)
            reply = json.loads(line)
            replies.append(reply)
            if reply.get("done"):
                return replies, None

    def _read_line(self, deadline: float) -> bytes | None:
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            with selectors.DefaultSelector() as sel:
                sel.register(self._reply_fd, selectors.EVENT_READ)
                if not sel.select(timeout=remaining):
                    return None
            chunk = os.read(self._reply_fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _printed_since(self, log_start: int) -> str:
        """What the child wrote to its log since ``log_start`` (all of it: callers trim)."""
        try:
            with open(self._log, "rb") as f:
                f.seek(log_start)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def _died(self, log_start: int, timed_out: bool) -> str:
        """Ends the child; what to say about it (the signal and what it printed)."""
        proc = self._proc
        if timed_out and proc is not None and proc.poll() is None:
            _kill_group(proc.pid)
        status = proc.wait() if proc is not None else None
        self._stop()
        printed = self._printed_since(log_start).split("Fatal Python error:")[0].strip()[-_PRINTED_MAX:]
        if timed_out:
            return f"timed out after {self.timeout_s:g} s"
        name = decode_exit_status(status, printed)
        what = f"the code died by {name}" if name else f"the worker exited with status {status}"
        return what + (f": {printed}" if printed else "")

    def _stop(self) -> None:
        if self._reply_fd >= 0:
            os.close(self._reply_fd)
            self._reply_fd = -1
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            _kill_group(proc.pid)
            proc.wait()
        watchdog.forget(proc.pid)
        if proc.stdin is not None:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass

    def close(self) -> None:
        self._stop()


def _forked(cmd: list[str], log: int, reply: int, env: dict[str, str]) -> forked.ForkedProcess | None:
    """The worker forked from this warm process (harness.compiler.forked), with Popen's
    ``stdin`` pipe; None when it could not be: start it cold then."""
    stdin_r, stdin_w = os.pipe()
    try:
        child = forked.fork_module(cmd, {0: stdin_r, 1: log, 2: log, reply: reply}, env=env)
    except OSError:
        os.close(stdin_w)
        return None
    finally:
        os.close(stdin_r)
    watchdog.watch(child.pid)
    child.stdin = os.fdopen(stdin_w, "wb")
    return child


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# --- the child's side --------------------------------------------------------------------------


def _serve_run(request: dict, say: Callable[[dict], None]) -> dict:
    from torch_mlir import ir, passmanager

    from .bindings_tool import diagnostics_text
    from .context import bindings_context
    from .jit import JitModule

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    context = bindings_context()
    with context:
        lowering = bool(request["pipeline"])
        say({"stage": Stage.LOWERING.value if lowering else Stage.EXECUTION.value})
        try:
            module = ir.Module.parseFile(request["input"])
            if lowering:
                pm = passmanager.PassManager.parse(request["pipeline"])
                pm.enable_verifier(True)
                pm.run(module.operation)
        except (ir.MLIRError, ValueError) as e:
            return {"ok": False, "stage": Stage.LOWERING.value if lowering else Stage.EXECUTION.value,
                    "error": diagnostics_text(e) if isinstance(e, ir.MLIRError) else str(e)}
        seconds["lower"] = time.perf_counter() - start
        say({"stage": Stage.EXECUTION.value})
        data = request["signature"]
        signature = TensorSignature.from_json(data)
        with np.load(request["inputs"]) as npz:
            inputs = [npz[f"arg{i}"] for i in range(len(npz.files))]
        try:
            jit = JitModule.from_module(module, opt_level=request["opt_level"])
            results = jit.invoke(request["function"], inputs, signature)
        except Exception as e:  # the engine's and ours, reported as the stage's
            return {"ok": False, "stage": Stage.EXECUTION.value, "error": f"{type(e).__name__}: {e}"}
    seconds.update(jit=jit.timings.jit_s, run=jit.timings.run_s)
    np.savez(request["outputs"], allow_pickle=False, **{f"result{i}": r for i, r in enumerate(results)})
    return {"ok": True, "seconds": seconds}


def _serve_variants(request: dict, say: Callable[[dict], None]) -> dict:
    import hashlib

    from torch_mlir import ir, passmanager

    from .bindings_tool import diagnostics_text
    from .context import bindings_context

    context = bindings_context()
    with context:
        module = ir.Module.parseFile(request["input"])
        for i, pipeline in enumerate(request["pipelines"], start=request["first"]):
            say({"stage": "variant", "index": i})
            clone = module.operation.clone()
            try:
                passmanager.PassManager.parse(pipeline).run(clone)
                clone.verify()
            except (ir.MLIRError, ValueError) as e:
                error = diagnostics_text(e) if isinstance(e, ir.MLIRError) else str(e)
                say({"variant": i, "ok": False, "error": error[-_PRINTED_MAX:]})
                clone.erase()
                continue
            text = str(clone)
            clone.erase()
            path = Path(request["out_dir"]) / f"variant{i}.llvm.mlir"
            path.write_text(text)
            say({"variant": i, "ok": True, "llvm": str(path),
                 "digest": hashlib.blake2b(_canonical(text).encode(), digest_size=16).hexdigest()})
    return {"ok": True}


def _canonical(text: str) -> str:
    """The LLVM text with the runtime checks' message globals (``@assert_msg_N``, numbered by a
    counter that runs on across modules) renumbered in order of appearance."""
    names: dict[str, str] = {}
    return _ASSERT_MSG.sub(lambda m: names.setdefault(m.group(), f"@assert_msg_{len(names)}"), text)


_ASSERT_MSG = re.compile(r"@assert_msg_\d+")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=f"python -m {MODULE}")
    p.add_argument("--reply-fd", type=int, required=True)
    args = p.parse_args(argv)
    import faulthandler

    from .jit_child import _unbuffer_c_stdout

    faulthandler.enable()
    replies = os.fdopen(args.reply_fd, "w", buffering=1)
    os.dup2(2, 1)  # C's stdout (runtime checks) to the log, never into the replies
    _unbuffer_c_stdout()

    for line in sys.stdin:
        request = json.loads(line)
        rid = request["id"]

        def say(message: dict, rid: int = rid) -> None:
            replies.write(json.dumps({**message, "id": rid}) + "\n")

        handler = {"run": _serve_run, "variants": _serve_variants}[request["kind"]]
        say({**handler(request, say), "done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
