"""repro.sh (``templates/repro.sh.in``), the one launcher of every bundle kind: it finds its
program (``$TORCH_MLIR_OPT`` or ``$PYTHON`` first), says CANNOT RUN with the variable to set
when there is none, and runs it; exit 1 exactly when the bug reproduces, so it doubles as a
reducer's interestingness test. What differs by kind is a ``Launcher``.

A compile failure's runs the binary on the bundle's IR; the check is chosen by the original
outcome (a signal, a hang, an error in stderr); its texts come from the run of the very file
the script runs, falling back to the original run.
"""

from __future__ import annotations

import re
import shlex
import signal as signal_module
from dataclasses import dataclass

from harness.compiler.crash import CrashInfo
from harness.compiler.outcomes import Outcome
from harness.compiler.records import REPRODUCER_SUMMARY, RunRecord
from harness.compiler.runner import RunOptions, build_command

from ..onnx_terms import NAME_LOC
from .markdown import one_line
from .result import CANNOT_RUN_STATUS, EXIT_STATUSES, REPRODUCED_STATUS, BundleKind
from .template import render

_INPUT = "\0INPUT\0"  # stand-in for "$INPUT" in the command


# The bindings tool's console script (pyproject.toml), what repro.sh looks for on PATH.
BINDINGS_CONSOLE_SCRIPT = "harness-bindings-opt"
_BINDINGS_NOTE = """\
# Here the program is the bindings tool: torch-mlir-opt's command line over the torch-mlir
# wheel's MLIR Python bindings (python -m harness.execute.bindings_tool, from torch-mlir-harness;
# its console script is harness-bindings-opt), which register the upstream MLIR passes
# torch-mlir-opt does not. A torch-mlir-opt given as TORCH_MLIR_OPT rejects this pipeline.
# Without it, repro.py runs the same pipeline through torch_mlir.passmanager."""
_OPT_ABOUT = """\
# Runs {tool} on reduced.mlir (input.mlir when there is no reduced.mlir) in this folder. The
# wheel's bin/torch-mlir-opt is a Python wrapper that turns signal N into exit status 256-N;
# both that and a shell's 128+N count as the signal."""
_PYTHON_ABOUT = """\
# Runs repro.py with a Python that has torch {torch}, numpy and torch-mlir {torch_mlir} (its
# MLIR Python bindings and ExecutionEngine): it embeds the IR, the arguments and eager
# PyTorch's values, and judges the run itself."""


@dataclass(frozen=True, kw_only=True)
class Launcher:
    """The part of ``templates/repro.sh.in`` that differs by kind: the program it looks for,
    how it is overridden, and what runs once found (as ``$PROGRAM``)."""

    summary: str                # the "Reproduces:" line
    bug: str                    # what REPRODUCED_STATUS means
    tool: str                   # the program, as named in messages
    override: str               # the environment variable that names it
    fallback: str               # looked up on PATH
    about: str                  # comment lines: what it runs
    run: str                    # shell lines that end the script with its verdict
    recorded: str = ""          # the (redacted) path the report was made with
    not_found: str = ""         # shell lines tried before CANNOT RUN (another way to run it)


def launcher(spec: Launcher) -> str:
    """repro.sh: the one launcher of every bundle kind, ``spec`` filled in."""
    return render("repro.sh.in", {
        "SUMMARY": one_line(spec.summary),
        "BUG": one_line(spec.bug),
        **EXIT_STATUSES,
        "TOOL": spec.tool,
        "OVERRIDE": spec.override,
        "FALLBACK": spec.fallback,
        "ABOUT": spec.about,
        "RECORDED": shlex.quote(spec.recorded),
        "NOT_FOUND": spec.not_found,
        "RUN": spec.run,
    })


def python_launcher(summary: str, bug: str, packages: dict[str, str]) -> str:
    """repro.sh of a bundle with repro.py (a miscompile, a run-time failure): runs it with
    ``$PYTHON`` (default python3 on PATH), which exits with the verdict."""
    return launcher(Launcher(
        summary=summary, bug=bug, tool="python3", override="PYTHON", fallback="python3",
        about=_PYTHON_ABOUT.format(torch=packages.get("torch", "?"),
                                   torch_mlir=packages.get("torch-mlir", "?")),
        run='exec "$PROGRAM" repro.py'))


def repro_script(original: RunRecord, replay: RunRecord, textual: str, *, recorded_binary: str,
                 timeout_s: float, bindings: bool = False) -> str:
    """repro.sh of a compile failure: runs the binary on the bundle's IR and greps what shows
    the bug. ``recorded_binary`` is the (redacted) path of the binary used, the bindings tool
    when ``bindings`` (its launcher, else ``harness-bindings-opt`` on PATH)."""
    q = shlex.quote
    cmd = build_command("\0OPT\0", textual, _INPUT, RunOptions())
    words = " ".join('"$PROGRAM"' if a == "\0OPT\0" else '"$INPUT"' if a == _INPUT else q(a)
                     for a in cmd)
    hang = original.outcome is Outcome.TIMEOUT
    limit = max(1, round(timeout_s))
    tool = BINDINGS_CONSOLE_SCRIPT if bindings else "torch-mlir-opt"
    run = "\n".join([
        "if [ -f reduced.mlir ]; then INPUT=reduced.mlir; else INPUT=input.mlir; fi",
        *([_TIMEOUT_GUARD] if hang else []),
        f"ERR=$(mktemp) || exit {CANNOT_RUN_STATUS}",
        "trap 'rm -f \"$ERR\"' EXIT",
        "ulimit -c 0 2>/dev/null",
        "",
        f"CMD=({words})",
        "echo \"repro.sh: running:$(printf ' %q' \"${CMD[@]}\")\" >&2",
        (f"timeout -k 5 {limit} " if hang else "") + '"${CMD[@]}" 2>"$ERR"',
        "status=$?",
        'cat "$ERR" >&2',
        "",
        "reproduced=0",
        'why=""',
        _check(original, replay, limit),
        'if [ "$reproduced" = 1 ]; then',
        '  echo "repro.sh: REPRODUCED: $why"',
        f"  exit {REPRODUCED_STATUS}",
        "fi",
        'echo "repro.sh: NOT REPRODUCED: $why (exit status $status)"',
        "exit 0"])
    return launcher(Launcher(
        summary=str(original.signature), bug=BundleKind.COMPILE_FAILURE.bug, tool=tool,
        override="TORCH_MLIR_OPT", fallback=tool, recorded=recorded_binary,
        about=_OPT_ABOUT.format(tool=tool) + ("\n" + _BINDINGS_NOTE if bindings else ""),
        not_found=_NO_BINDINGS_TOOL if bindings else "", run=run))


# Without the bindings tool (the harness's), repro.py runs the same pipeline through the wheel's
# torch_mlir.passmanager: torch and torch-mlir are all it needs.
_NO_BINDINGS_TOOL = """\
  if [ -z "${TORCH_MLIR_OPT:-}" ] && [ -f repro.py ]; then
    python="${PYTHON:-python3}"
    echo "repro.sh: no harness-bindings-opt found; running repro.py (torch_mlir.passmanager)" \\
      "with $python"
    exec "$python" repro.py
  fi"""


_TIMEOUT_GUARD = """\
if ! command -v timeout >/dev/null 2>&1; then
  echo "repro.sh: NOT REPRODUCED: this hang needs coreutils' timeout on PATH"
  exit 0
fi"""


def _check(original: RunRecord, replay: RunRecord, limit: int) -> str:
    """Shell lines that set ``reproduced`` and ``why`` from ``$status`` and ``$ERR``."""
    q = shlex.quote
    if original.outcome is Outcome.TIMEOUT:
        return "\n".join([
            'case "$status" in',
            f'  124|137) reproduced=1; why={q(f"still running after {limit} s (a hang)")} ;;',
            f'  *) why={q(f"it finished within {limit} s")} ;;',
            'esac'])
    crash = original.crash
    if original.outcome in (Outcome.CRASH, Outcome.ASSERTION) and crash is not None:
        return _crash_check(crash, replay, original.outcome)
    keyed = replay if not replay.ok and replay.outcome is original.outcome else original
    lines = [_grep_check("error: " + diagnostic_key(keyed))]
    generic = next((op for op in keyed.illegal_ops() if op.startswith('torch.operator "')), "")
    if generic:  # the error quotes a generic op as 'torch.operator': its name tells which one
        name = "name = " + generic.removeprefix("torch.operator ")
        lines += [f'if [ "$reproduced" = 1 ] && ! grep -qF -- {q(name)} "$ERR"; then',
                  f"  reproduced=0; why={q('another torch.operator: stderr lacks ' + name)}",
                  'fi']
    return "\n".join(lines)


def _grep_check(key: str) -> str:
    q = shlex.quote
    return "\n".join([
        f'if [ "$status" -ne 0 ] && grep -qF -- {q(key)} "$ERR"; then',
        f'  reproduced=1; why={q("stderr has: " + key)}',
        'else',
        f'  why={q("stderr lacks: " + key)}',
        'fi'])


def _crash_check(crash: CrashInfo, replay: RunRecord, outcome: Outcome) -> str:
    """The check of a record that crashed (``crash``, its ``outcome``) against its replay."""
    q = shlex.quote
    same = replay.crash if replay.crash is not None and replay.outcome is outcome else crash
    lines: list[str] = []
    key = ""
    if same.assertion is not None:
        key = f"Assertion `{same.assertion.condition}' failed"
    elif same.fatal_error:
        key = f"LLVM ERROR: {same.fatal_error.splitlines()[0]}"
    if crash.signal and crash.signal.startswith("SIG"):
        number = int(signal_module.Signals[crash.signal])
        lines += ['case "$status" in',
                  f'  {128 + number}|{256 - number}) reproduced=1; '
                  f'why={q(crash.signal)}" (exit status $status)" ;;',
                  f'  *) why={q("no " + crash.signal)} ;;',
                  'esac']
        if key:
            lines += [f'if [ "$reproduced" = 1 ] && ! grep -qF -- {q(key)} "$ERR"; then',
                      f'  reproduced=0; why={q(f"{crash.signal}, but stderr lacks: {key}")}',
                      'fi']
    else:
        lines.append(_grep_check(key or "Stack dump:"))
    top = same.top_frame()
    if top is not None and top.name:
        # Informational: an unsymbolized build names no frames; the signal is the test.
        lines += ['if [ "$reproduced" = 1 ]; then',
                  f'  if grep -qF -- {q(top.name)} "$ERR"; then why="$why at "{q(top.name)}',
                  f'  else why="$why (the stack does not name "{q(top.name)}")"; fi',
                  'fi']
    return "\n".join(lines)


#: A name location that opens a diagnostic's message.
_NAME_LOC_FIRST = re.compile(NAME_LOC.pattern + ": ")


def diagnostic_key(record: RunRecord) -> str:
    """The text repro.sh greps: the op left over, or the first error up to its first SSA name."""
    illegal = next((d for d in record.diagnostics if d.is_error and d.illegal_op), None)
    if illegal is not None:
        # An op at a name location (the onnx_importer names each after its ONNX node) has the
        # location before the message: "error: loc("ss"): failed to legalize ...".
        at = _NAME_LOC_FIRST.match(illegal.message)
        return f"{at.group(0) if at else ''}failed to legalize operation '{illegal.illegal_op}'"
    first = record.first_error()
    if first is None:
        return record.stderr.strip().splitlines()[0] if record.stderr.strip() else ""
    message = first.message
    if REPRODUCER_SUMMARY in message:
        return REPRODUCER_SUMMARY
    cut = message.split("%", 1)[0].rstrip(" :(")
    return cut if len(cut) >= 12 else message
