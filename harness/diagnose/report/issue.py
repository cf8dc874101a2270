"""The texts a person reads: issue.md (from ``templates/issue.md.in``), its title, and
backtrace.txt.

Every piece that comes from the input or the machine is redacted first and then quoted for
markdown (``markdown.py``), so neither a path nor a line of backticks gets through.
"""

from __future__ import annotations

from harness.compiler.crash_text import CrashView, render_crash, short_name
from harness.compiler.outcomes import Outcome
from harness.compiler.pipeline_text import parse_pipeline
from harness.compiler.records import RunRecord, render_record
from harness.compiler.runner import RunOptions, build_command, is_pass_flags
from harness.errors import HarnessError

from ..bisect import BisectResult, Responsibility
from ..causes import shared_cause
from . import markdown as md
from .diagnosis import Diagnosis, expected_without_blocker
from .redact import Redactor, shell_words
from .repro import BINDINGS_CONSOLE_SCRIPT
from .result import REPRODUCED_STATUS, Findings
from .sections import TITLE_PREFIX, section_values, without_title_prefix
from .template import render
from .versions import versions_markdown

# Titles and the signature as shown stay readable whatever the input names (a 4 KB op name).
TITLE_MAX_CHARS = 160
SIGNATURE_MAX_CHARS = 400
NOT_REPRODUCED_SUFFIX = " (did not reproduce from the bundle)"


def bounded(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = md.one_line(text)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def issue_title(record: RunRecord, bisected: BisectResult | None, textual: str, *,
                reproduced: bool = True, diagnosis: Diagnosis | None = None,
                prefix: str = TITLE_PREFIX) -> str:
    """``[torch-mlir] SIGFPE in ConvertTorchToLinalg at ConvertAtenViewOp::matchAndRewrite``,
    from the signature's fields (frames by their last two scopes); a legalization failure with
    a blocker: ``[torch-mlir] convert-torch-to-linalg does not lower 'torch.aten.__and__.Tensor'
    (it lowers 'torch.aten.bitwise_and.Tensor')``."""
    sig = record.signature
    if record.crash is not None and record.outcome.is_crash:
        where = f" in {short_name(sig.pass_name, 1)}" if sig.pass_name else ""
        at = f" at {short_name(sig.frame)}" if sig.frame else ""
        if sig.frame and sig.via:
            at += f" via {short_name(sig.via)}"
        if sig.hang:
            text = f"hang{where}"
        elif sig.assertion:
            text = f"Assertion `{sig.assertion}' failed{where}{at}"
        else:
            text = f"{sig.signal or 'no signal'}{where}{at}"
            if not sig.frame and sig.fatal_error:
                text += f": LLVM ERROR: {sig.fatal_error}"
    elif record.outcome is Outcome.TIMEOUT:
        text = f"torch-mlir-opt hangs in {_pipeline_label(textual)}"
    elif diagnosis is not None:
        text = diagnosis.title()
    else:
        where = _pipeline_label(textual)
        if bisected is not None and bisected.found:
            first = bisected.responsible[0].responsible_pass if bisected.responsible else ""
            where = first or bisected.failing_pass
        text = f"{sig.summary or sig.outcome.value} in {where}"
    title = prefix + bounded(text, TITLE_MAX_CHARS - len(prefix))
    return title if reproduced else title + NOT_REPRODUCED_SUFFIX


def pipeline_label(textual: str) -> str:
    """The pipeline's name when it runs one registered pipeline or pass, else the text."""
    return _pipeline_label(textual)


def _pipeline_label(textual: str) -> str:
    if is_pass_flags(textual):
        return textual.strip()
    try:
        refs = parse_pipeline(textual)
    except HarnessError:
        return textual
    return refs[0].name if len(refs) == 1 else textual


def backtrace_text(record: RunRecord) -> str:
    """The symbolized stack of a crash (every frame, with addresses), or the stderr of a
    diagnostic; the caller redacts it."""
    lines = [f"command: {shell_words(record.command)}",
             f"outcome: {record.outcome.value} (exit status {record.returncode})",
             f"signature: {record.signature}", ""]
    crash = record.crash
    if crash is not None and crash.frames:
        view = CrashView(frames=None, addresses=True, full_names=True, mark_via=True, max_width=None)
        lines += render_crash(crash, view)
        lines += ["", "--- stderr as printed ---"]
    lines.append(record.stderr.rstrip())
    return "\n".join(lines) + "\n"


class _Quote:
    """Redacts, then quotes for markdown."""

    def __init__(self, redactor: Redactor):
        self.r = redactor

    def code(self, text: str) -> str:
        return md.code(self.r.text(text))

    def prose(self, text: str) -> str:
        return md.prose(self.r.text(text))

    def fence(self, text: str, info: str = "") -> str:
        return md.fence(self.r.text(text), info)

    def command(self, words: list[str]) -> str:
        return md.fence(shell_words(self.r.words(words)), "sh")


def issue_markdown(f: Findings, redactor: Redactor) -> str:
    q = _Quote(redactor)
    v = f.versions
    crash = f.original.crash
    values = {
        "TITLE": _heading(q, f.title),
        "WARNING": ("> **Warning: this bundle did NOT reproduce the failure when it was written.** "
                    + q.prose(f.check.describe())) if not f.check.reproduced else "",
        "SUMMARY": _summary(q, f),
        "SIGNATURE": q.code(bounded(str(f.original.signature), SIGNATURE_MAX_CHARS)),
        "VERSIONS": redactor.text("\n".join(versions_markdown(f.exe, packages=v)).rstrip("\n")),
        # An MLIR core pass's bug is shown by mlir-opt's command (MLIR_OPT), not the harness's tool.
        "BUNDLE_COMMAND": "" if _mlir_core(f) else q.command(build_command(
            _tool_word(f), f.replay_pipeline or f.textual, f.replay_name, RunOptions())),
        "MLIR_OPT": _mlir_opt(q, f),
        "REPRODUCE": _reproduce(f),
        "ORIGINAL_COMMAND": q.command(f.original.command),
        "WHAT_HAPPENED": q.fence("\n".join(line.removeprefix("  ")
                                           for line in render_record(f.original, frames=12))),
        "FULL_TEXT": ("The full stack (symbolized) and stderr are in `backtrace.txt`."
                      if crash is not None else "The full stderr is in `backtrace.txt`."),
        "EXPECTED": _expected(q, f),
        "FAILING_PASS": _failing_pass(q, f.bisected),
        "SAME_CAUSE": _same_cause(q, f),
        **_sections(q, f),
        "IR_INTRO": _ir_intro(q, f),
        "IR": (md.fence(f.inline_ir, "mlir") if f.inline_ir is not None else
               f"(too large to inline: {f.ir_size} bytes; attached as `{f.replay_name}`)"),
        "WEIGHTS": q.prose(f.weights.describe()),
        "SELF_CHECK": q.prose(f.check.describe()),
        "REPRO_OUTPUT": q.fence(f.check.repro_output) if f.check.repro_output else "",
        "REDACTION": ("Paths are redacted: `<site-packages>` is Python's site-packages folder, "
                      "`<venv>` the virtual environment, `<python>` the Python installation, "
                      "`<repo>` the harness checkout, `~` the home folder, `<path>/NAME` any other "
                      "folder, `<user>` the user name.") if f.redacted else "",
        "NOTES": "## Notes\n\n" + "\n".join(f"- {q.prose(n)}" for n in f.notes) if f.notes else "",
    }
    return render("issue.md.in", values)


def _same_cause(q: _Quote, f: Findings) -> str:
    """The other ops of a shared root cause (``report --each``): the cause, and each op's own
    reduced file with the command it fails."""
    cause = shared_cause(str(f.original.signature))
    if not f.same_cause or cause is None:
        return ""
    lines = ["## Same root cause", "", _markdown_prose(q, cause.explanation), "",
             f"This issue covers {len(f.same_cause) + 1} ops. The reproducer above is the first; "
             "each other op has its own reduced file in the bundle, made and self-checked by a "
             "report of its own, which fails like this:", ""]
    for m in f.same_cause:
        command = build_command(_tool_word(f), m.pipeline, m.file, RunOptions())
        lines += [f"- {', '.join(q.code(op.removeprefix('torch.')) for op in m.ops) or q.code(m.file)}: "
                  f"{q.code(m.file)} fails with {q.code(bounded(m.signature, SIGNATURE_MAX_CHARS))}:",
                  "", q.command(command), ""]
    return "\n".join(lines).rstrip("\n")


def _sections(q: _Quote, f: Findings) -> dict[str, str]:
    """Root cause, Reproduces through, Blocks, Upstream; prose with `code` spans quoted."""
    values = section_values(f.verdict, f.root_cause, f.provenance, f.src.name, q.code)
    for key in ("ROOT_CAUSE", "REPRODUCES_THROUGH"):
        values[key] = "\n".join(_markdown_prose(q, line) for line in values[key].splitlines())
    values["UPSTREAM"] = q.r.text(values["UPSTREAM"])
    return values


def _tool_word(f: Findings) -> str:
    """The command word of the bundle's command: the binary's, or the bindings tool's script."""
    return BINDINGS_CONSOLE_SCRIPT if f.exe.bindings else "torch-mlir-opt"


# Passes of torch-mlir's own, which upstream mlir-opt does not have.
_TORCH_MLIR_PASS_PREFIXES = ("torch-", "refback-", "tm-tensor-", "convert-torch-")


def _mlir_opt(q: _Quote, f: Findings) -> str:
    """For the bindings tool: the failing pass alone as the pass-pipeline string an upstream
    ``mlir-opt`` takes, and what running that string through the wheel's MLIR Python bindings
    gave (``Findings.single_pass``; no mlir-opt ships with the wheel)."""
    if not f.exe.bindings:
        return ""
    b = f.bisected
    if b is None or not b.found or not b.failing_pass_pipeline:
        return "No `mlir-opt` command: bisect named no failing pass (see \"Failing pass\")."
    if b.failing_pass.startswith(_TORCH_MLIR_PASS_PREFIXES):
        return (f"No `mlir-opt` command: the failing pass {q.code(b.failing_pass)} is "
                "torch-mlir's, not upstream MLIR's.")
    cmd = ["mlir-opt", f"--pass-pipeline={b.failing_pass_pipeline}", f.replay_name]
    single = f.single_pass
    if single is not None and single_pass_reproduces(single, f.original):
        return ("The failing pass is upstream MLIR's; this pass-pipeline string alone shows the "
                "bug, and an LLVM build's `mlir-opt` takes it as it is:\n\n" + q.command(cmd)
                + f"\n\nThis bundle ran that same string on `{f.replay_name}` through the torch-mlir "
                "wheel's MLIR Python bindings (`torch_mlir.passmanager.PassManager.parse`; no "
                "`mlir-opt` ships with the wheel), as `python3 repro.py` does (torch and the "
                "torch-mlir wheel only; it exits 1 on this error). What it printed when this "
                "bundle was made:\n\n" + q.fence(_first_lines(single.stderr)))
    if single is None:
        checked = "It was not checked through the bindings either."
    elif not single.ok and single.signature == f.original.signature:
        checked = (f"The same pass alone on `{f.replay_name}` through the bindings fails with "
                   "the same signature.")
    else:
        checked = (f"Note: the same pass alone on `{f.replay_name}` through the bindings gives "
                   f"{q.code(bounded(str(single.signature), SIGNATURE_MAX_CHARS))}, not the "
                   "signature above: run the whole pipeline (the command above).")
    return ("`python3 repro.py` runs the whole pipeline on the same IR through "
            "`torch_mlir.passmanager` (torch and torch-mlir only, no harness) and exits 1 when "
            "the same error shows.\n\n"
            "Upstream `mlir-opt` has the failing pass; the pass-pipeline string for it alone, as "
            "an LLVM build's `mlir-opt` takes it (the harness ran passes through the wheel's MLIR "
            "Python bindings, which parse the same string; no `mlir-opt` ships with the wheel):\n\n"
            + q.command(cmd) + "\n\n" + checked)


def _first_lines(stderr: str, limit: int = 6) -> str:
    """The error and its first notes, as the bindings printed them."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return "\n".join(lines[:limit]) + ("\n..." if len(lines) > limit else "")


def single_pass_reproduces(single: RunRecord, original: RunRecord) -> bool:
    """The failing pass alone fails as the whole pipeline did: the bug is that pass's."""
    return not single.ok and single.signature == original.signature


def _mlir_core(f: Findings) -> bool:
    """A bug of an upstream MLIR pass shown by that pass alone: issue.md then speaks MLIR's
    terms (``mlir-opt``, ``repro.py`` over the wheel's bindings), no harness tool."""
    b = f.bisected
    return (f.exe.bindings and f.single_pass is not None and b is not None and b.found
            and not b.failing_pass.startswith(_TORCH_MLIR_PASS_PREFIXES)
            and single_pass_reproduces(f.single_pass, f.original))


def _reproduce(f: Findings) -> str:
    if _mlir_core(f):
        b = f.bisected
        assert b is not None
        cmd = shell_words(["mlir-opt", f"--pass-pipeline={b.failing_pass_pipeline}", f.replay_name])
        return "\n".join([
            "From this folder, in a Python environment with torch and the torch-mlir wheel (the "
            "versions above):", "",
            "```sh", "python3 repro.py", "```", "",
            f"`repro.py` runs the failing pass alone (the pass-pipeline string under Command) on "
            f"`{f.replay_name}` through `torch_mlir.passmanager` and exits {REPRODUCED_STATUS} when "
            "the same error shows, 0 when it does not. With an LLVM build's `mlir-opt` instead, "
            "the same string:", "", "```sh", cmd, "```"])
    tool = "bindings tool (`harness-bindings-opt`)" if f.exe.bindings else "`torch-mlir-opt`"
    path = "/path/to/harness-bindings-opt" if f.exe.bindings else "/path/to/your/torch-mlir-opt"
    fallback = BINDINGS_CONSOLE_SCRIPT if f.exe.bindings else "torch-mlir-opt"
    text = ["From this folder:", "", "```sh", "bash repro.sh",
            f"TORCH_MLIR_OPT={path} bash repro.sh", "```", "",
            f"`repro.sh` runs `{f.replay_name}` through the {tool} and exits {REPRODUCED_STATUS} "
            "when the bug reproduces, 0 when it does not. Without `TORCH_MLIR_OPT` it uses the "
            f"binary the report was made with when that exists on the machine, else `{fallback}` "
            "on PATH."]
    if f.exe.bindings:
        text += ["", "The bindings tool comes with torch-mlir-harness (`pip install -e .` in its "
                 "checkout installs `harness-bindings-opt`); it takes torch-mlir-opt's flags, and "
                 "`TORCH_MLIR_OPT` must name it, not a torch-mlir-opt (which does not register "
                 "these passes)."]
    return "\n".join(text)


def _heading(q: _Quote, title: str) -> str:
    prefix, rest = without_title_prefix(title)
    return prefix + md.heading(q.r.text(rest))


def _summary(q: _Quote, f: Findings) -> str:
    what = {Outcome.CRASH: "crashes", Outcome.ASSERTION: "hits an assertion",
            Outcome.TIMEOUT: "hangs"}.get(f.original.outcome, "fails")
    crash = f.original.crash
    tool = (f"The bindings tool ({q.code(_tool_word(f))}: torch-mlir-opt's command line over "
            "the torch-mlir wheel's MLIR Python bindings)" if f.exe.bindings else "`torch-mlir-opt`")
    sentence = f"{tool} {what} running {q.code(f.textual)}"
    if crash is not None and crash.signal and f.original.outcome is not Outcome.TIMEOUT:
        sentence += f" ({q.prose(crash.signal)})"
    b = f.bisected
    if b is not None and b.found:
        pos = (f", pass {'/'.join(map(str, b.pass_positions))} of {len(b.pipeline_passes)}"
               if b.pass_positions else "")
        sentence += (f"; the first failing pass is {q.code(b.failing_pass)} "
                     f"({q.prose(b.failing_pass_name)}{pos})")
    if f.ops_after is not None:
        reduced = f.ops_before != f.ops_after and (f.reduced is not None or f.blocker_reproducer)
        how = " (the blocker alone)" if f.blocker_reproducer else ""
        sentence += (f", on a {f.ops_after}-op input"
                     + (f" reduced from {f.ops_before} ops{how}" if reduced else ""))
    sentence += "."
    d = f.diagnosis
    if d is None:
        return sentence
    out = [sentence, "", " ".join(_markdown_prose(q, s) for s in d.sentences())]
    if d.upstream:
        out += ["", "Possibly known upstream:", ""]
        out += [f"- {q.prose(r.describe())}" for r in d.upstream]
    return "\n".join(out)


def _markdown_prose(q: _Quote, text: str) -> str:
    """Prose in which `...` spans are code: each span quoted as code, the rest as prose."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # unbalanced: all prose
        return q.prose(text)
    return "".join(q.code(part) if i % 2 else q.prose(part) for i, part in enumerate(parts))


def _expected(q: _Quote, f: Findings) -> str:
    if f.diagnosis is not None:
        return _markdown_prose(q, f.diagnosis.expected())
    return _markdown_prose(q, expected_without_blocker(f.original))


def _failing_pass(q: _Quote, b: BisectResult | None) -> str:
    if b is None:
        return "Bisect did not run (see the notes)."
    if not b.found:
        return f"Bisect named no pass: {q.prose(b.detail)}"
    out = [(f"{q.code(b.failing_pass)} ({q.prose(b.failing_pass_name)} on {q.prose(b.failing_on)}) "
            f"is the first pass that fails; replaying the IR just before it through "
            f"{q.code(b.failing_pass_pipeline)} alone "
            f"{'reproduced' if b.reproduced else 'did NOT reproduce'} the failure.")]
    if b.responsible:
        out.append("")
    for r in b.responsible:
        kind = "the blocker" if r.blocker else "a symptom"
        out.append(f"- {q.code(r.op)} ({kind}, replayed alone through the pipeline's conversion "
                   f"passes one at a time): {_markdown_prose(q, _code_ops(r.describe(), r))}.")
    if b.detail:
        out += ["", f"Note: {q.prose(b.detail)}"]
    return "\n".join(out)


def _code_ops(text: str, r: Responsibility) -> str:
    """Marks the op and pass names of a bisect sentence as code spans."""
    names = {r.op, r.equivalent_op, *r.converted_by, *r.equivalent_converted_by, *r.symptom_of}
    for name in sorted(filter(None, names), key=len, reverse=True):
        text = text.replace(name, f"`{name}`")
    return text.replace("``", "`")


def _ir_intro(q: _Quote, f: Findings) -> str:
    if f.blocker_reproducer and f.diagnosis is not None:
        return (f"`reduced.mlir`: {q.code(f.diagnosis.op)} alone in a function (its tensor "
                "operands as arguments, its constant operands cloned), which fails the pipeline "
                "the same way:")
    if f.reduced is not None:
        return (f"`reduced.mlir` ({q.prose(f.reduced.summary())}), reduced from `input.mlir` "
                "while it kept the signature:")
    ops = f.ops_after if f.ops_after is not None else "?"
    return f"Not reduced; `{f.replay_name}` ({ops} ops):"
