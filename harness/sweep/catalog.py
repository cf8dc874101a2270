"""``harness sweep --all``: every transformers model type whose base model builds from a tiny
config on the CPU (and runs eagerly on token inputs), and the others with why.

Building all ~620 takes minutes, so the types are tried in child processes (``python -m
harness.sweep.catalog TYPE...``), ``jobs`` at a time, a batch each: a type that crashes or hangs
its process costs that type, and the rest of its batch goes on in a new one. The answer is kept
in ``DIR/models.json`` and reused unless forced."""

from __future__ import annotations

import faulthandler
import json
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path

from harness.compiler.irfile import write_atomically

from .children import CHILDREN
from .records import LOGS, MODELS_FILE
from .warm import WARM

#: Per type: a tiny model builds in well under a second; a hang costs this much.
BUILD_TIMEOUT_S = 60.0
#: Types per child process (each pays ~4 s to import torch and transformers).
BATCH = 25
#: A child past its batch's budget (every type at its limit, and start-up) is killed.
_START_S = 120.0
#: After BUILD_TIMEOUT_S, the alarm's grace; then faulthandler's watchdog ends the child and
#: writes this to its log.
_GRACE_S = 30.0
_WATCHDOG = "Timeout ("


def all_models(out: Path, force: bool = False, candidates: Sequence[str] | None = None,
               say: Callable[[str], None] | None = None, jobs: int = 2,
               python: str = sys.executable, warm: bool = True) -> tuple[list[str], list[dict[str, str]]]:
    """(the types that build, the skipped ones as {model_type, why}); ``candidates`` narrows
    the types looked at (default: every type with a config class and a base model). With
    ``warm``, the batches' processes fork from one warm server (:mod:`.warm`)."""
    path = out / MODELS_FILE
    if path.is_file() and not force and candidates is None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return list(data["built"]), list(data["skipped"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # unreadable: list them again
    from harness.models.hf_resolve import OPT, model_types

    types = list(candidates) if candidates is not None else [OPT, *[t for t in model_types() if t != OPT]]
    why: dict[str, str] = {OPT: "ok"} if OPT in types else {}
    batches = [b for b in _batches([t for t in types if t != OPT]) if b]
    done = [len(why)]

    def one(index_batch: tuple[int, list[str]]) -> dict[str, str]:
        index, batch = index_batch
        found = _try_batch(batch, out / LOGS / f"models-{index}.log", python)
        done[0] += len(found)
        if say is not None:
            say(f"--all: {done[0]}/{len(types)} model types tried")
        return found

    served = WARM.serving(python, None, out / LOGS / "warm-server.log", say) if warm else nullcontext()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool, served, CHILDREN.stopped_on_exit(pool):
        for found in pool.map(one, enumerate(batches, 1)):
            why.update(found)
    built = [t for t in types if why.get(t) == "ok"]
    skipped = [{"model_type": t, "why": why.get(t, "not tried")} for t in types if why.get(t) != "ok"]
    write_atomically(path, json.dumps({"built": built, "skipped": skipped}, indent=1) + "\n")
    return built, skipped


def _batches(types: list[str]) -> list[list[str]]:
    return [types[i:i + BATCH] for i in range(0, len(types), BATCH)]


def _try_batch(batch: list[str], log: Path, python: str) -> dict[str, str]:
    """Each type's verdict from child processes: one for the batch, and a new one after a
    type that ends its process (that type is charged with the crash or hang)."""
    from harness.errors import HarnessError

    from .runner import run_logged

    why: dict[str, str] = {}
    left = list(batch)
    attempt = 0
    while left:
        attempt += 1
        lines = log.with_name(f"{log.stem}.{attempt}.jsonl")
        child_log = log.with_name(f"{log.stem}.{attempt}.log")
        code, timed_out, _ = run_logged([python, "-m", "harness.sweep.catalog", *left], child_log,
                                        _START_S + BUILD_TIMEOUT_S * len(left), None, stdout=lines)
        rows = _rows(lines)
        lines.unlink(missing_ok=True)
        for row in rows:
            if row.get("model_type") in left and isinstance(row.get("why"), str):
                why[row["model_type"]] = row["why"]
        left = [t for t in left if t not in why]
        if not left:
            break
        hung = timed_out or _WATCHDOG in _text(child_log)
        if attempt == 1 and not rows and not hung and code is not None and code > 0:
            raise HarnessError(f"the model-type check (python -m harness.sweep.catalog) failed before "
                               f"trying any type (exit {code}): "
                               f"{(_text(child_log).strip().splitlines() or [''])[-1][:300]}. "
                               f"Its log is {child_log}; check that the project is installed "
                               "in this Python (pip install -e .) and run it again.")
        # The first type without a verdict ended the process (a crash, a hang, an exit).
        what = "hung" if hung else (f"crashed (signal {-code})" if code is not None and code < 0
                                    else f"ended its process (exit {code})")
        why[left.pop(0)] = f"building the tiny model {what}"
    return why


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _rows(path: Path) -> list[dict]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    rows = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _main(types: list[str]) -> int:
    """The child: one JSON line per type, as each is tried."""
    from harness.models.hf_list import ListDepth, check_type
    from harness.port.progress import StageTimeout, time_limit

    for model_type in types:
        # A hang inside C code never reaches the alarm's handler: the watchdog thread ends
        # the process after a grace period, and the parent charges this type with it.
        faulthandler.dump_traceback_later(BUILD_TIMEOUT_S + _GRACE_S, exit=True)
        try:
            with time_limit(BUILD_TIMEOUT_S):
                why = check_type(model_type, ListDepth.BUILD)
        except StageTimeout:
            why = f"building the tiny model took over {BUILD_TIMEOUT_S:g} s"
        finally:
            faulthandler.cancel_dump_traceback_later()
        print(json.dumps({"model_type": model_type, "why": why}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
