"""An upstream bug report a maintainer reproduces in one command: ``harness report``.

The end of the porting loop. From an IR file that fails a pipeline it builds one folder (and a
``.tar.gz`` of it beside it) holding:

- ``issue.md``: title from the record's signature, summary, versions, the exact command, the
  crash or the diagnostics, the failing pass (bisect), the reduced IR and how to reproduce;
- ``repro.sh``: runs ``$TORCH_MLIR_OPT`` (default: the binary used, see below) on
  ``reduced.mlir`` (``input.mlir`` when there is none) and exits non-zero exactly when the bug
  reproduces, so it doubles as an interestingness test;
- ``input.mlir`` (weights elided unless that changes the failure, or ``keep_weights``),
  ``reduced.mlir`` (harness.tools.reduce with a budget), ``backtrace.txt`` (the symbolized stack, or
  the stderr of a diagnostic) and ``record.json`` (the original RunRecord, bisect, reduce and
  the self-check).

Why it is built the way it is:

- The folder is assembled in a hidden sibling and renamed into a name reserved with
  ``irfile.unique_dir`` only at the end, so an error (or Ctrl-C) leaves nothing half-written
  and two reports never collide. The archive is linked into place, never over another file.
- Redaction (on by default) rewrites every text file: the bundle's own paths become relative,
  known folders become placeholders that keep the rest of the path (``<site-packages>/``,
  ``<venv>/``, ``<python>/``, ``<repo>/``, ``~/``), any other absolute path outside the system
  folders becomes ``<path>/BASENAME``, and the user name becomes ``<user>``. In IR files only
  string literals are touched (locations, file attributes), so the IR means the same thing; the
  self-check proves it by replaying the redacted files.
- The binary's path is redacted too, so ``repro.sh`` looks for it at run time: ``$TORCH_MLIR_OPT``;
  else the recorded path when it exists (``~`` is ``$HOME``; ``<site-packages>`` is looked up
  with ``python3``/``python`` on PATH); else ``torch-mlir-opt`` on PATH. On the machine that
  made the report the recorded binary is found whenever its Python (or venv) is on PATH.
- Self-check: the bundle's file is run again with the runner (same signature?) and ``repro.sh``
  is run with ``TORCH_MLIR_OPT`` set to the binary used (non-zero exit?). Both results go into
  ``record.json`` and ``issue.md``; a report that does not reproduce says so in its title.

This module reads files and records only: no torch, no importer or drivers (it is the end of
the data path); the MLIR bindings are used to re-print IR with weights elided.
"""

from __future__ import annotations

import errno
import getpass
import json
import os
import platform
import re
import shlex
import shutil
import signal as signal_module
import site
import sys
import sysconfig
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO

from harness import versions
from harness.compiler import binary as binary_module
from harness.compiler import pipelines
from harness.compiler.irfile import unique_dir, write_atomically
from harness.compiler.mlir import (
    PrintOptions,
    count_ops,
    is_bytecode,
    parse_ir,
    print_op,
)
from harness.compiler.pipeline_text import parse_pipeline
from harness.compiler.records import (
    REPRODUCER_SUMMARY,
    Outcome,
    RunRecord,
    render_record,
)
from harness.compiler.runner import (
    DEFAULT_TIMEOUT_S,
    RunOptions,
    build_command,
    execute,
    is_pass_flags,
    run_pipeline,
    shell_command,
)
from harness.errors import HarnessError, OutputError, ReportError

from .bisect import BisectResult, bisect
from .reduce import ReduceOptions, ReduceResult, reduce_file
from .report_versions import binary_versions, versions_markdown

DEFAULT_BUDGET_S = 60.0
REPORT_FORMAT = 1
BUNDLE_FILES = ("issue.md", "repro.sh", "input.mlir", "reduced.mlir", "backtrace.txt", "record.json")
# The reduced IR goes inline into issue.md up to this size; above it, issue.md points to the file.
INLINE_MAX_LINES = 150
INLINE_MAX_CHARS = 12_000
# repro.sh's exit status when the bug reproduces (0 when it does not).
REPRODUCED_STATUS = 1
_SYSTEM_DIRS = frozenset({"usr", "lib", "lib32", "lib64", "libx32", "bin", "sbin", "dev", "proc",
                          "sys", "etc", "run", "System", "Library"})


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """Where the bundle goes and how much work goes into it."""

    out_dir: str | os.PathLike            # parent of the bundle folder and its .tar.gz
    opt: str | None = None                # torch-mlir-opt (default: $TORCH_MLIR_OPT, the wheel's)
    keep_weights: bool = False            # input.mlir keeps resource blobs
    redact: bool = True                   # home, user name, absolute paths
    reduce: bool = True                   # False: no reduced.mlir, repro.sh runs input.mlir
    budget_s: float = DEFAULT_BUDGET_S    # wall clock for the reduction
    timeout_s: float = DEFAULT_TIMEOUT_S  # per torch-mlir-opt run (a hang's report needs less)
    progress: Callable[[str], None] | None = None  # one line per step, for the CLI


@dataclass
class SelfCheck:
    """Whether the written bundle reproduces: its IR through the runner, and repro.sh."""

    replayed_file: str          # reduced.mlir | input.mlir
    signature: str              # of that file through the pipeline
    signature_reproduced: bool  # equal to the original run's signature
    repro_exit_status: int | None
    repro_output: str
    detail: str = ""

    @property
    def repro_detected(self) -> bool:
        return self.repro_exit_status not in (None, 0)

    @property
    def reproduced(self) -> bool:
        return self.signature_reproduced and self.repro_detected

    def describe(self) -> str:
        if self.reproduced:
            return (f"reproduced: {self.replayed_file} fails with the same signature and "
                    f"'bash repro.sh' exits {self.repro_exit_status}")
        parts = []
        if not self.signature_reproduced:
            parts.append(f"{self.replayed_file} gives '{self.signature}' instead")
        if not self.repro_detected:
            parts.append(f"'bash repro.sh' exits {self.repro_exit_status} (it did not detect the bug)")
        return "NOT REPRODUCED: " + "; ".join(parts) + (f" ({self.detail})" if self.detail else "")


@dataclass
class ReportResult:
    folder: str
    archive: str
    title: str
    signature: str
    outcome: str
    input_path: str
    pipeline: str               # as run (textual, or pass flags)
    binary: str
    self_check: SelfCheck
    weights: str                # none | elided | kept | kept (eliding changed the failure) | ...
    reduced: bool
    ops_before: int | None
    ops_after: int | None
    reduce_summary: str = ""
    failing_pass: str = ""
    redacted: bool = True
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return self.self_check.reproduced

    def render(self) -> list[str]:
        """What ``harness report`` prints."""
        lines = [f"report: {self.folder}", f"archive: {self.archive}", f"title: {self.title}",
                 f"signature: {self.signature}"]
        if self.failing_pass:
            lines.append(f"failing pass: {self.failing_pass}")
        if self.reduced:
            lines.append(f"ops: {self.ops_before} -> {self.ops_after} ({self.reduce_summary})")
        else:
            lines.append(f"ops: {self.ops_before if self.ops_before is not None else '?'} (not reduced)")
        lines.append(f"weights: {self.weights}; paths {'redacted' if self.redacted else 'kept (--no-redact)'}")
        lines.append(f"self-check: {self.self_check.describe()}")
        lines += [f"note: {n}" for n in self.notes]
        return lines


# ---------------------------------------------------------------------------------------------
# The front door

def make_report(path: str | os.PathLike, pipeline: str, *, options: ReportOptions) -> ReportResult:
    """Builds the bug-report bundle for ``path``, which fails ``pipeline``.

    ``pipeline`` is a name from pipelines/, an upstream pipeline name, a textual pipeline, or
    pass flags (``-canonicalize``). Raises ReportError when the input passes or the bundle
    cannot be written, InputFileError / BinaryError for a bad input or binary.
    """
    src = Path(path)
    textual = resolve_pipeline(pipeline)
    out_dir = Path(options.out_dir)
    _check_out_dir(out_dir, src)
    say = options.progress or (lambda _line: None)
    exe = binary_module.resolve(options.opt)
    run_options = RunOptions(timeout_s=options.timeout_s)
    say(f"running {src.name} through {textual}")
    original = run_pipeline(src, textual, opt=exe.path, options=run_options)
    if original.ok:
        raise ReportError(str(src), "passes",
                          f"nothing to report: {src} passes {pipeline} (torch-mlir-opt exited 0 "
                          f"in {original.elapsed_s:.2f} s). A report needs a file and the pipeline "
                          "it fails; 'harness run FILE --pipeline P' shows what a file does.")
    try:
        staging = unique_dir(".report-partial-", parent=out_dir)
    except OutputError as e:
        raise ReportError(str(src), "output", f"cannot write the report for {src}: {e}") from None
    try:
        return _build(src, pipeline, textual, original, exe, staging, out_dir, options, say)
    except OSError as e:
        raise ReportError(str(src), "output",
                          f"cannot write the report for {src} under {out_dir}: "
                          f"{e.strerror or e}. Choose a writable --out folder with free space."
                          ) from None
    except OutputError as e:  # from write_atomically / unique_dir: already names file and cause
        raise ReportError(str(src), "output", f"cannot write the report for {src}: {e}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def resolve_pipeline(spec: str) -> str:
    """Pass flags (``-canonicalize``) as given; names and textual pipelines resolved."""
    return pipelines.default().resolve(spec)


def _check_out_dir(out_dir: Path, src: Path) -> None:
    """Fails before any run when --out cannot hold a folder (nothing is created here)."""
    probe = out_dir
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    problem = ""
    if probe.exists() and not probe.is_dir():
        problem = f"{probe} is a file, not a folder"
    elif not os.access(probe, os.W_OK | os.X_OK):
        problem = f"{probe} is not writable"
    if problem:
        raise ReportError(str(src), "output",
                          f"cannot write the report for {src} under {out_dir}: {problem}. "
                          "Choose a writable --out folder.")


# ---------------------------------------------------------------------------------------------
# Building the bundle

def _build(src: Path, spec: str, textual: str, original: RunRecord, exe: binary_module.OptBinary,
           staging: Path, out_dir: Path, options: ReportOptions,
           say: Callable[[str], None]) -> ReportResult:
    notes: list[str] = []
    redactor = Redactor.for_machine([staging], enabled=options.redact)
    run_options = RunOptions(timeout_s=options.timeout_s)
    input_file = staging / "input.mlir"

    say("writing input.mlir")
    weights, bundle_record = _write_input(src, input_file, textual, original, exe.path, options,
                                          redactor, notes)

    say("bisecting the pipeline")
    bisected: BisectResult | None = None
    try:
        with tempfile.TemporaryDirectory(prefix="harness-report-bisect-") as tmp:
            bisected = bisect(input_file, textual, opt=exe.path, out_dir=tmp,
                              timeout_s=options.timeout_s)
    except HarnessError as e:
        notes.append(f"bisect failed: {e}")

    reduced: ReduceResult | None = None
    reduced_file = staging / "reduced.mlir"
    if options.reduce:
        say(f"reducing (budget {options.budget_s:g} s)")
        try:  # the pipeline as the original ran it (pass flags too), so signatures compare
            reduced = reduce_file(input_file, textual, options=ReduceOptions(
                output_path=reduced_file, budget_s=options.budget_s, opt=exe.path,
                original=bundle_record))
        except HarnessError as e:
            notes.append(f"reduce failed: {e}")
            reduced_file.unlink(missing_ok=True)
        if reduced_file.is_file():
            redactor.redact_file(reduced_file, ir=True)
    replay_name = "reduced.mlir" if reduced_file.is_file() else "input.mlir"
    ops_before = reduced.ops_before if reduced else count_file_ops(input_file)
    ops_after = reduced.ops_after if reduced else ops_before

    say(f"self-check: replaying {replay_name}")
    replay = run_pipeline(staging / replay_name, textual, opt=exe.path, options=run_options)
    write_text(staging / "backtrace.txt", redactor.text(backtrace_text(original)))
    script = repro_script(original, replay, textual, recorded_binary=redactor.text(exe.path),
                          timeout_s=options.timeout_s)
    write_text(staging / "repro.sh", redactor.text(script))
    (staging / "repro.sh").chmod(0o755)
    check = _self_check(staging, replay_name, original, replay, exe.path, options.timeout_s)

    title = issue_title(original, bisected, textual, reproduced=check.reproduced)
    failing_pass = ""
    if bisected is not None and bisected.found:
        failing_pass = bisected.failing_pass
    versions = collect_versions(exe)
    summary = {
        "format": REPORT_FORMAT,
        "title": title,
        "signature": str(original.signature),
        "outcome": original.outcome.value,
        "input": str(src),
        "pipeline": textual,
        "pipeline_as_given": spec,
        "weights": weights,
        "redacted": options.redact,
        "versions": versions,
        "self_check": {**asdict(check), "reproduced": check.reproduced},
        "notes": notes,
    }
    record_json = {
        "report": summary,
        "record": original.to_json(),            # the run on the user's file
        "bundle_input_record": bundle_record.to_json(),
        "bisect": bisected.to_json() if bisected else None,
        "reduce": asdict(reduced) if reduced else None,
        "replay_record": replay.to_json(),       # the bundle's file, as the self-check ran it
    }
    write_text(staging / "record.json", json.dumps(redactor.json(record_json), indent=2) + "\n")
    issue = issue_markdown(
        title=title, original=original, bisected=bisected, reduced=reduced, textual=textual,
        replay_name=replay_name, staging=staging, versions=versions, check=check,
        weights=weights, notes=notes, ops_before=ops_before, ops_after=ops_after,
        redacted=options.redact, exe=exe)
    write_text(staging / "issue.md", redactor.text(issue))

    folder, archive = _publish(staging, out_dir, _slug(title), redacted=options.redact)
    files = sorted(p.name for p in folder.iterdir())
    return ReportResult(
        folder=str(folder), archive=str(archive), title=title, signature=str(original.signature),
        outcome=original.outcome.value, input_path=str(src), pipeline=textual, binary=exe.path,
        self_check=check, weights=weights, reduced=reduced is not None, ops_before=ops_before,
        ops_after=ops_after, reduce_summary=_reduce_line(reduced) if reduced else "",
        failing_pass=failing_pass, redacted=options.redact, notes=notes, files=files)


def _write_input(src: Path, dest: Path, textual: str, original: RunRecord, opt: str,
                 options: ReportOptions, redactor: Redactor,
                 notes: list[str]) -> tuple[str, RunRecord]:
    """input.mlir, weights elided when that keeps the failure; returns (weights, its record)."""
    bytecode = _is_bytecode(src)
    blobs = bytecode or _has_resources(src)
    run_options = RunOptions(timeout_s=options.timeout_s)
    if not blobs:
        weights = "none (no resource blobs)"
        _copy_redacted(src, dest, redactor, bytecode=False, notes=notes)
    elif options.keep_weights:
        weights = "kept (--keep-weights)"
        _copy_redacted(src, dest, redactor, bytecode=bytecode, notes=notes)
    else:
        if _print_through_bindings(src, dest, elide=True, bytecode=bytecode):
            redactor.redact_file(dest, ir=True, source_name=src.name)
            record = run_pipeline(dest, textual, opt=opt, options=run_options)
            if record.signature == original.signature:
                return "elided", record
            notes.append(f"eliding the weights changed the failure to '{record.signature}', so "
                         "input.mlir keeps them")
            weights = "kept (eliding them changed the failure)"
        else:
            notes.append("the MLIR Python bindings cannot parse the input, so its weights could "
                         "not be elided; input.mlir keeps them")
            weights = "kept (the bindings cannot parse the input)"
        _copy_redacted(src, dest, redactor, bytecode=bytecode, notes=notes)
    record = run_pipeline(dest, textual, opt=opt, options=run_options)
    if record.signature != original.signature:
        notes.append(f"input.mlir fails as '{record.signature}', not as the original "
                     f"'{original.signature}' (a flaky failure, or one that depends on paths)")
    return weights, record


def _copy_redacted(src: Path, dest: Path, redactor: Redactor, *, bytecode: bool,
                   notes: list[str]) -> None:
    if not bytecode:
        redactor.copy_file(src, dest, ir=True)
        return
    if redactor.enabled and _print_through_bindings(src, dest, elide=False, bytecode=True):
        redactor.redact_file(dest, ir=True, source_name=src.name)  # bytecode: print to redact
        return
    shutil.copyfile(src, dest)
    if redactor.enabled:
        notes.append("input.mlir is MLIR bytecode the bindings cannot read: copied as is, its "
                     "locations are NOT redacted")


def _is_bytecode(path: Path) -> bool:
    with open(path, "rb") as f:
        return is_bytecode(f.read(4))


def _has_resources(path: Path) -> bool:
    """Whether a text file has a ``dialect_resources`` section (read in chunks: files are big)."""
    needle, tail = b"dialect_resources", b""
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            if needle in tail + chunk:
                return True
            tail = chunk[-len(needle):]
    return False


def _print_through_bindings(src: Path, dest: Path, *, elide: bool, bytecode: bool) -> bool:
    """Re-prints ``src`` as text (resources over the elision limit left out when ``elide``)."""
    raw = src.read_bytes()
    parsed = parse_ir(raw if bytecode else raw.decode(errors="replace"))
    if parsed is None:
        return False
    _context, module = parsed
    with open(dest, "w") as f:
        print_op(module, PrintOptions(debug_info=bytecode or b"loc(" in raw, elide_weights=elide), file=f)
    return True


def count_file_ops(path: Path) -> int | None:
    """Ops in the module but the module itself; None when the bindings cannot parse it."""
    raw = path.read_bytes()
    parsed = parse_ir(raw if is_bytecode(raw) else raw.decode(errors="replace"))
    return count_ops(parsed[1]) if parsed is not None else None


def write_text(path: Path, text: str) -> None:
    """A plain write: bundle files go into the private staging folder, which _publish renames
    into place whole, so they need no atomic write of their own."""
    with open(path, "w") as f:
        f.write(text)


def _publish(staging: Path, out_dir: Path, slug: str, *, redacted: bool) -> tuple[Path, Path]:
    """Reserves a unique name, writes the archive, renames the folder into place, then links
    the archive beside it (a link never replaces a file). Undoes itself on any error."""
    final = unique_dir(f"report-{slug}-", parent=out_dir)
    archive = final.with_name(final.name + ".tar.gz")
    fd, tmp_archive = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tar.gz", dir=out_dir)
    os.close(fd)
    moved = False
    try:
        staging.chmod(0o755)

        def scrub(info: tarfile.TarInfo) -> tarfile.TarInfo:
            if redacted:  # tar headers carry the owner's name too
                info.uid = info.gid = 0
                info.uname = info.gname = ""
            return info

        with tarfile.open(tmp_archive, "w:gz") as tar:
            tar.add(staging, arcname=final.name, recursive=False, filter=scrub)
            for name in sorted(p.name for p in staging.iterdir()):
                tar.add(staging / name, arcname=f"{final.name}/{name}", filter=scrub)
        os.chmod(tmp_archive, 0o644)
        os.rename(staging, final)  # onto the empty folder unique_dir reserved
        moved = True
        try:
            os.link(tmp_archive, archive)
        except OSError as e:
            if e.errno == errno.EEXIST:
                raise
            # No hard links here (some network and FUSE file systems): reserve the name with
            # O_EXCL, then rename onto that empty file of ours.
            os.close(os.open(archive, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            os.replace(tmp_archive, archive)
    except BaseException:
        if moved:
            shutil.rmtree(final, ignore_errors=True)
        else:
            try:
                final.rmdir()
            except OSError:
                pass
        raise
    finally:
        try:
            os.unlink(tmp_archive)
        except FileNotFoundError:  # renamed into place
            pass
    return final, archive


def _reduce_line(reduced: ReduceResult) -> str:
    why = {"budget": ", budget spent", "max-tries": ", max tries reached"}.get(reduced.stopped, "")
    return f"reduce: {reduced.tries} tries, {reduced.kept} kept, {reduced.elapsed_s:.1f} s{why}"


def _slug(title: str) -> str:
    text = re.sub(r"^\[torch-mlir\]\s*", "", title).lower()
    text = re.sub(r"\(anonymous namespace\)::", "", text)
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:64].rstrip("-") or "failure"


# ---------------------------------------------------------------------------------------------
# Self-check

def _self_check(staging: Path, replay_name: str, original: RunRecord, replay: RunRecord,
                opt: str, timeout_s: float) -> SelfCheck:
    bash = shutil.which("bash")
    status: int | None = None
    output = ""
    detail = ""
    if bash is None:
        detail = "no bash on PATH to run repro.sh"
    else:
        # The runner's execute: on a timeout it kills the whole group, torch-mlir-opt included
        # (subprocess.run would kill bash only and leave the binary running).
        done = execute([bash, str(staging / "repro.sh")], RunOptions(
            timeout_s=timeout_s + 60, dump_on_timeout=False, env={"TORCH_MLIR_OPT": opt}))
        if done.timed_out:
            detail = f"repro.sh did not finish within {timeout_s + 60:g} s"
        else:
            status = done.returncode
            output = "\n".join(line for line in (done.stderr + done.stdout).splitlines()
                                if line.startswith("repro.sh:"))
    return SelfCheck(replayed_file=replay_name, signature=str(replay.signature),
                     signature_reproduced=replay.signature == original.signature,
                     repro_exit_status=status, repro_output=output, detail=detail)


# ---------------------------------------------------------------------------------------------
# repro.sh

def repro_script(original: RunRecord, replay: RunRecord, textual: str, *, recorded_binary: str,
                 timeout_s: float) -> str:
    """The script; its check is chosen by the original outcome, its texts come from the run of
    the very file it runs (``replay``), falling back to the original run."""
    q = shlex.quote
    placeholder_opt, placeholder_in = "\0OPT\0", "\0INPUT\0"
    cmd = build_command(placeholder_opt, textual, placeholder_in, RunOptions())
    words = " ".join('"$OPT"' if a == placeholder_opt else '"$INPUT"' if a == placeholder_in
                     else q(a) for a in cmd)
    hang = original.outcome is Outcome.TIMEOUT
    limit = max(1, round(timeout_s))
    run_line = f'timeout -k 5 {limit} "${{CMD[@]}}"' if hang else '"${CMD[@]}"'
    check = _repro_check(original, replay, limit)
    header = "\n".join(f"# {line}" if line else "#" for line in [
        f"Reproduces: {original.signature}",
        "",
        "  bash repro.sh",
        "  TORCH_MLIR_OPT=/path/to/your/torch-mlir-opt bash repro.sh",
        "",
        "Runs torch-mlir-opt on reduced.mlir (input.mlir when there is no reduced.mlir) in this",
        f"folder. Exit status: {REPRODUCED_STATUS} when the bug reproduces, 0 when it does not (also",
        "when no torch-mlir-opt is found), so it can serve as the interestingness test of a",
        "reducer.",
        "The binary: $TORCH_MLIR_OPT if set; else the one the report was made with (RECORDED_OPT",
        "below) if it exists here ('~' is $HOME, '<site-packages>' is looked up with python3",
        "or python on PATH); else torch-mlir-opt on PATH. The wheel's bin/torch-mlir-opt is a",
        "Python wrapper that turns signal N into exit status 256-N; both that and a shell's",
        "128+N count as the signal.",
    ])
    return f"""#!/usr/bin/env bash
{header}
set -u
cd "$(dirname "$0")" || exit 0

RECORDED_OPT={q(recorded_binary)}

find_opt() {{
  if [ -n "${{TORCH_MLIR_OPT:-}}" ]; then
    printf '%s\\n' "$TORCH_MLIR_OPT"
    return 0
  fi
  local candidate="$RECORDED_OPT" rest py site
  case "$candidate" in
    '~/'*) candidate="$HOME/${{candidate#'~/'}}" ;;
    '<site-packages>/'*)
      rest="${{candidate#'<site-packages>/'}}"
      for py in python3 python; do
        site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null) || continue
        if [ -x "$site/$rest" ]; then candidate="$site/$rest"; break; fi
      done ;;
  esac
  if [ -f "$candidate" ] && [ -x "$candidate" ]; then
    printf '%s\\n' "$candidate"
    return 0
  fi
  command -v torch-mlir-opt
}}

if ! OPT=$(find_opt); then
  echo "repro.sh: NOT REPRODUCED: no torch-mlir-opt found; run: TORCH_MLIR_OPT=/path/to/torch-mlir-opt bash repro.sh"
  exit 0
fi
if [ -f reduced.mlir ]; then INPUT=reduced.mlir; else INPUT=input.mlir; fi
{_timeout_guard() if hang else ""}
ERR=$(mktemp) || exit 0
trap 'rm -f "$ERR"' EXIT
ulimit -c 0 2>/dev/null

CMD=({words})
echo "repro.sh: running:$(printf ' %q' "${{CMD[@]}}")" >&2
{run_line} 2>"$ERR"
status=$?
cat "$ERR" >&2

reproduced=0
why=""
{check}
if [ "$reproduced" = 1 ]; then
  echo "repro.sh: REPRODUCED: $why"
  exit {REPRODUCED_STATUS}
fi
echo "repro.sh: NOT REPRODUCED: $why (exit status $status)"
exit 0
"""


def _timeout_guard() -> str:
    return ('if ! command -v timeout >/dev/null 2>&1; then\n'
            '  echo "repro.sh: NOT REPRODUCED: this hang needs coreutils\' timeout on PATH"\n'
            '  exit 0\nfi')


def _repro_check(original: RunRecord, replay: RunRecord, limit: int) -> str:
    q = shlex.quote
    if original.outcome is Outcome.TIMEOUT:
        return (f'case "$status" in\n'
                f'  124|137) reproduced=1; why={q(f"still running after {limit} s (a hang)")} ;;\n'
                f'  *) why={q(f"it finished within {limit} s")} ;;\n'
                f'esac')
    crash = original.crash
    if original.outcome in (Outcome.CRASH, Outcome.ASSERTION) and crash is not None:
        same = replay.crash if replay.crash is not None and replay.outcome is original.outcome else crash
        lines: list[str] = []
        key = ""
        if same.assertion is not None:
            key = f"Assertion `{same.assertion.condition}' failed"
        elif same.fatal_error:
            key = f"LLVM ERROR: {same.fatal_error.splitlines()[0]}"
        if crash.signal and crash.signal.startswith("SIG"):
            number = int(signal_module.Signals[crash.signal])
            lines += ['case "$status" in',
                      f'  {128 + number}|{256 - number}) reproduced=1; why={q(crash.signal)}" (exit status $status)" ;;',
                      f'  *) why={q("no " + crash.signal)} ;;',
                      'esac']
            if key:
                lines += [f'if [ "$reproduced" = 1 ] && ! grep -qF -- {q(key)} "$ERR"; then',
                          f'  reproduced=0; why={q(f"{crash.signal}, but stderr lacks: {key}")}',
                          'fi']
        else:
            key = key or "Stack dump:"
            lines += [f'if [ "$status" -ne 0 ] && grep -qF -- {q(key)} "$ERR"; then',
                      f'  reproduced=1; why={q("stderr has: " + key)}',
                      'else',
                      f'  why={q("stderr lacks: " + key)}',
                      'fi']
        top = same.top_frame()
        if top is not None and top.name:
            # Informational: an unsymbolized build names no frames; the signal is the test.
            lines += ['if [ "$reproduced" = 1 ]; then',
                      f'  if grep -qF -- {q(top.name)} "$ERR"; then why="$why at "{q(top.name)}',
                      f'  else why="$why (the stack does not name "{q(top.name)}")"; fi',
                      'fi']
        return "\n".join(lines)
    key = "error: " + diagnostic_key(replay if not replay.ok and replay.outcome is original.outcome
                                     else original)
    return (f'if [ "$status" -ne 0 ] && grep -qF -- {q(key)} "$ERR"; then\n'
            f'  reproduced=1; why={q("stderr has: " + key)}\n'
            f'else\n'
            f'  why={q("stderr lacks: " + key)}\n'
            f'fi')


def diagnostic_key(record: RunRecord) -> str:
    """The text repro.sh greps: the op left over, or the first error up to its first SSA name."""
    illegal = next((d.illegal_op for d in record.diagnostics if d.is_error and d.illegal_op), "")
    if illegal:
        return f"failed to legalize operation '{illegal}'"
    first = record.first_error()
    if first is None:
        return record.stderr.strip().splitlines()[0] if record.stderr.strip() else ""
    message = first.message
    if REPRODUCER_SUMMARY in message:
        return REPRODUCER_SUMMARY
    cut = message.split("%", 1)[0].rstrip(" :(")
    return cut if len(cut) >= 12 else message


# ---------------------------------------------------------------------------------------------
# Texts

def _no_anonymous(name: str) -> str:
    return name.replace("(anonymous namespace)::", "")


def _short_frame(name: str) -> str:
    """A frame name as a title shows it: no anonymous namespaces, no ``mlir::torch::`` prefix."""
    return re.sub(r"^(?:mlir::torch::(?:Torch::)?)", "", _no_anonymous(name))


def issue_title(record: RunRecord, bisected: BisectResult | None, textual: str, *,
                reproduced: bool = True) -> str:
    """``[torch-mlir] SIGFPE in ConvertTorchToLinalg at ConvertAtenViewOp::matchAndRewrite``."""
    crash = record.crash
    if crash is not None and record.outcome.is_crash:
        sig = record.signature
        short = replace(sig, frame=_short_frame(sig.frame), via=_no_anonymous(sig.via),
                        pass_name=_no_anonymous(sig.pass_name))
        text = short.summary
        if sig.assertion:
            where = f" in {short.pass_name}" if short.pass_name else ""
            at = f" at {short.frame}" + (f" via {short.via}" if short.via else "") if short.frame else ""
            text = f"Assertion `{sig.assertion}' failed{where}{at}"
    elif record.outcome is Outcome.TIMEOUT:
        text = f"torch-mlir-opt hangs in {_pipeline_label(textual)}"
    else:
        where = _pipeline_label(textual)
        if bisected is not None and bisected.found:
            where = bisected.responsible[0].responsible_pass if bisected.responsible and \
                not bisected.responsible[0].responsible_pass.startswith("(") else bisected.failing_pass
        text = f"{diagnostic_key(record)} in {where}"
    title = f"[torch-mlir] {text}"
    return title if reproduced else title + " (did not reproduce from the bundle)"


def _pipeline_label(textual: str) -> str:
    if is_pass_flags(textual):
        return textual.strip()
    try:
        refs = parse_pipeline(textual)
    except HarnessError:
        return textual
    return refs[0].name if len(refs) == 1 else textual


def backtrace_text(record: RunRecord) -> str:
    """The symbolized stack of a crash (every frame), or the stderr of a diagnostic."""
    lines = [f"command: {shell_command(record.command)}",
             f"outcome: {record.outcome.value} (exit status {record.returncode})",
             f"signature: {record.signature}", ""]
    crash = record.crash
    if crash is not None and crash.frames:
        if crash.signal:
            lines.append(f"signal: {crash.signal}")
        if crash.fatal_error:
            lines.append(f"LLVM ERROR: {crash.fatal_error}")
        if crash.assertion is not None:
            lines.append(crash.assertion.render())
        if crash.pass_name:
            lines.append(f"pass: {crash.pass_name}")
        how = f"offline by {crash.symbolizer}" if crash.symbolizer else "by the binary itself"
        if crash.symbolizer_note:
            how += f"; {crash.symbolizer_note}"
        top = crash.top_frame()
        lines += ["", f"stack (innermost first, symbolized {how}; '>' marks the first project frame):"]
        for f in crash.frames:
            where = f" {f.file}" + (f":{f.line}" if f.line else "") if f.file else ""
            module = ""
            if f.module:
                module = f" ({f.module}" + (f"+0x{f.offset:x}" if f.offset is not None else "") + ")"
            lines.append(f"{'>' if f is top else ' '} #{f.index:<3} 0x{f.address:016x} "
                         f"{f.function or '??'}{where}{module}")
        lines += ["", "--- stderr as printed ---"]
    lines.append(record.stderr.rstrip())
    return "\n".join(lines) + "\n"


def collect_versions(exe: binary_module.OptBinary) -> dict[str, str]:
    """Package versions from their metadata (nothing is imported), the binary's, the platform's."""
    out = versions.installed()
    out.update(binary_versions(exe))
    out["python"] = f"{platform.python_implementation()} {platform.python_version()}"
    out["platform"] = platform.platform()
    return out


def issue_markdown(*, title: str, original: RunRecord, bisected: BisectResult | None,
                   reduced: ReduceResult | None, textual: str, replay_name: str, staging: Path,
                   versions: dict[str, str], check: SelfCheck, weights: str, notes: list[str],
                   ops_before: int | None, ops_after: int | None, redacted: bool,
                   exe: binary_module.OptBinary) -> str:
    bundle_cmd = build_command("torch-mlir-opt", textual, replay_name, RunOptions())
    bundle_line = shell_command(bundle_cmd)
    out: list[str] = [f"# {title}", ""]
    if not check.reproduced:
        out += [(f"> **Warning: this bundle did NOT reproduce the failure when it was written.** "
                 f"{check.describe()}"), ""]
    # Summary
    what = {Outcome.CRASH: "crashes", Outcome.ASSERTION: "hits an assertion",
            Outcome.TIMEOUT: "hangs"}.get(original.outcome, "fails")
    crash = original.crash
    sentence = f"`torch-mlir-opt` {what} running `{textual}`"
    if crash is not None and crash.signal and original.outcome is not Outcome.TIMEOUT:
        sentence += f" ({crash.signal})"
    if bisected is not None and bisected.found:
        pos = (f", pass {'/'.join(map(str, bisected.pass_positions))} of {len(bisected.pipeline_passes)}"
               if bisected.pass_positions else "")
        sentence += f"; the first failing pass is `{bisected.failing_pass}` ({bisected.failing_pass_name}{pos})"
    if ops_after is not None:
        sentence += (f", on a {ops_after}-op input" +
                     (f" reduced from {ops_before} ops" if reduced is not None and ops_before != ops_after else ""))
    out += ["## Summary", "", sentence + ".", "", f"Signature: `{original.signature}`", ""]
    # Versions
    out += versions_markdown(exe, packages=versions)
    # Command
    out += ["## Command", "", "```sh", bundle_line, "```", "",
            "The harness ran, on the original file:", "", "```sh",
            shell_command(original.command), "```", ""]
    # What happened
    out += ["## What happened", "", "```"]
    out += [line.removeprefix("  ") for line in render_record(original, frames=12)]
    out += ["```", "", "The full stack (symbolized) and stderr are in `backtrace.txt`." if crash is not None
            else "The full stderr is in `backtrace.txt`.", ""]
    # Bisect
    out += ["## Failing pass", ""]
    if bisected is None:
        out += ["Bisect did not run (see the notes).", ""]
    elif bisected.found:
        out += [(f"`{bisected.failing_pass}` ({bisected.failing_pass_name} on {bisected.failing_on}) "
                 f"is the first pass that fails; replaying the IR just before it through "
                 f"`{bisected.failing_pass_pipeline}` alone "
                 f"{'reproduced' if bisected.reproduced else 'did NOT reproduce'} the failure."), ""]
        for r in bisected.responsible:
            also = f" (the pipeline also runs {', '.join(r.also_run)})" if r.also_run else ""
            out.append(f"- `{r.op}` is only reported by `{bisected.failing_pass}`; it should have "
                       f"been lowered by `{r.responsible_pass}`{also}.")
        if bisected.responsible:
            out.append("")
        if bisected.detail:
            out += [f"Note: {bisected.detail}", ""]
    else:
        out += [f"Bisect named no pass: {bisected.detail}", ""]
    # IR
    out += ["## IR", ""]
    ir_path = staging / replay_name
    small = ir_path.stat().st_size <= INLINE_MAX_CHARS and not _is_bytecode(ir_path)
    ir_text = ir_path.read_text(errors="replace") if small else ""
    if reduced is not None:
        out.append(f"`reduced.mlir` ({reduced.summary()}), reduced from `input.mlir` while it kept "
                   f"the signature:")
    else:
        out.append(f"Not reduced; `{replay_name}` ({ops_after if ops_after is not None else '?'} ops):")
    out.append("")
    if ir_text and len(ir_text) <= INLINE_MAX_CHARS and ir_text.count("\n") <= INLINE_MAX_LINES:
        out += ["```mlir", ir_text.rstrip("\n"), "```", ""]
    else:
        out += [f"(too large to inline: {ir_path.stat().st_size} bytes; attached as `{replay_name}`)", ""]
    out += [f"`input.mlir` is the whole input; weights: {weights}.", ""]
    # Reproduce
    out += ["## How to reproduce", "", "From this folder:", "", "```sh", "bash repro.sh",
            "TORCH_MLIR_OPT=/path/to/your/torch-mlir-opt bash repro.sh", "```", "",
            (f"`repro.sh` runs `{replay_name}` and exits {REPRODUCED_STATUS} when the bug reproduces, "
             "0 when it does not. Without `TORCH_MLIR_OPT` it uses the binary the report was made "
             "with when that exists on the machine, else `torch-mlir-opt` on PATH."), ""]
    # Self-check
    out += ["## Self-check", "", f"{check.describe()}."]
    if check.repro_output:
        out += ["", "```", check.repro_output, "```"]
    out.append("")
    if redacted:
        out += [("Paths are redacted: `<site-packages>` is Python's site-packages folder, `<venv>` "
                 "the virtual environment, `<python>` the Python installation, `<repo>` the "
                 "harness checkout, `~` the home folder, `<path>/NAME` any other folder, `<user>` "
                 "the user name."), ""]
    if notes:
        out += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    out += ["_Made by `harness report`._", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Redaction

_PATH = re.compile(r"(?<![\w.+~:/\\-])(?:/[\w.+@~-]+)+/?")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_TOKENS = ("<site-packages>", "<venv>", "<python>", "<repo>", "<path>", "<user>")
_BLOB_LINE = re.compile(r'^\s*[\w.$-]+: "0x[0-9A-Fa-f]*",?\s*$')


@dataclass
class Redactor:
    """Rewrites paths (and the user name) in the bundle's text files.

    ``prefixes`` map a folder to its placeholder ("" makes the path relative: the bundle's own
    folder); with ``enabled`` False only those bundle prefixes apply.
    """

    prefixes: list[tuple[str, str]]
    user: str = ""
    enabled: bool = True

    @classmethod
    def for_machine(cls, bundle_dirs: Iterable[str | os.PathLike], *, enabled: bool) -> Redactor:
        pairs: list[tuple[str, str]] = []

        def add(path: str | os.PathLike | None, token: str) -> None:
            if not path:
                return
            for variant in {os.path.abspath(path), os.path.realpath(path)}:
                parts = variant.split("/")
                if variant == "/" or (token and len(parts) > 1 and parts[1] in _SYSTEM_DIRS):
                    continue  # system folders are not private; never redact "/" itself
                if all(p != variant for p, _ in pairs):
                    pairs.append((variant, token))

        for d in bundle_dirs:
            add(d, "")
        user = ""
        if enabled:
            site_dirs = [sysconfig.get_paths().get(k) for k in ("purelib", "platlib")]
            try:
                site_dirs += site.getsitepackages() + [site.getusersitepackages()]
            except AttributeError:  # some embedded interpreters lack them
                pass
            for d in site_dirs:
                add(d, "<site-packages>")
            add(sys.prefix, "<venv>" if sys.prefix != sys.base_prefix else "<python>")
            add(sys.base_prefix, "<python>")
            add(Path(__file__).resolve().parents[2], "<repo>")
            add(os.path.expanduser("~"), "~")
            try:
                user = getpass.getuser()
            except (KeyError, OSError):
                user = os.environ.get("USER", "")
        pairs.sort(key=lambda pt: len(pt[0]), reverse=True)
        return cls(prefixes=pairs, user=user if len(user) >= 3 else "", enabled=enabled)

    def _path(self, m: re.Match) -> str:
        path = m.group(0)
        if m.string.endswith(_TOKENS, 0, m.start()):
            return path  # already redacted: redaction is idempotent
        trail = "/" if path.endswith("/") else ""
        p = path.rstrip("/")
        for prefix, token in self.prefixes:
            if p == prefix or p.startswith(prefix + "/"):
                rest = p[len(prefix):]
                if token == "":
                    return (rest.lstrip("/") or ".") + trail
                return token + rest + trail
        if not self.enabled or p.split("/")[1] in _SYSTEM_DIRS or p.startswith("/path/to/"):
            return path
        return f"<path>/{p.rsplit('/', 1)[1]}{trail}"

    def text(self, text: str) -> str:
        """Any text: every absolute path, then the user name as a whole word."""
        text = _PATH.sub(self._path, text)
        if self.enabled and self.user:
            text = re.sub(rf"(?<![\w]){re.escape(self.user)}(?![\w])", "<user>", text)
        return text

    def ir_line(self, line: str) -> str:
        """An IR line: only inside string literals, so no identifier or type changes."""
        if len(line) > 4096 and _BLOB_LINE.match(line):
            return line  # a hex blob holds no path
        if '"' not in line:
            return line
        return _STRING.sub(lambda m: self.text(m.group(0)), line)

    def json(self, value):
        """Every string in a JSON-able value (before dumping: escapes would hide paths)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {k: self.json(v) for k, v in value.items()}
        return value

    def copy_file(self, src: Path, dest: Path, *, ir: bool, source_name: str = "") -> None:
        """``src`` to ``dest`` line by line (files may be large), redacted. ``source_name``
        replaces the bindings' ``"-"`` file name in locations of re-printed IR."""
        with open(dest, "w", newline="") as fout:
            self._copy_lines(src, fout, ir=ir, source_name=source_name)

    def redact_file(self, path: Path, *, ir: bool, source_name: str = "") -> None:
        """``path`` redacted in place (atomically: a failure leaves the unredacted file whole)."""
        write_atomically(path, lambda f: self._copy_lines(path, f, ir=ir, source_name=source_name))

    def _copy_lines(self, src: Path, fout: IO[str], *, ir: bool, source_name: str) -> None:
        line_fn = self.ir_line if ir else self.text
        stdin_loc = 'loc("-":'
        named = 'loc("' + source_name.replace("\\", "\\\\").replace('"', '\\"') + '":'
        with open(src, errors="replace", newline="") as fin:
            for line in fin:
                if source_name and stdin_loc in line:
                    line = line.replace(stdin_loc, named)
                fout.write(line_fn(line))
