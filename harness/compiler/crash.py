"""What a crashed torch-mlir-opt printed, as data: signal, LLVM ERROR, assertion, stack.

The runner hands a crashed run's stderr to :func:`parse_crash`; tools read the resulting
:class:`CrashInfo` from the record instead of re-reading stderr. Formats understood (see
tests/data/crashers/README.md for what the pinned release binary prints):

- ``LLVM ERROR: ...`` (``report_fatal_error``; may span several lines);
- ``<prog>: <file>:<line>: <func>: Assertion `<cond>' failed.`` (glibc, assertions builds) and
  ``UNREACHABLE executed at <file>:<line>!`` (``llvm_unreachable``);
- LLVM's ``Stack dump:`` with numbered pretty-stack entries (``0.\tProgram arguments: ...``,
  ``1.\tRunning pass 'X' on ...``) and frames symbolized in-process
  (``#N 0xADDR function File.cpp:LINE:COL`` or ``#N 0xADDR function (module+0xOFF)``), or
  unsymbolized (``N  torch-mlir-opt 0xADDR``, glibc's ``module(+0xOFF) [0xADDR]``).

Unsymbolized frames are named offline by ``compiler.symbolize``. This module is pure text
processing: no subprocess, no torch, no records.
"""

from __future__ import annotations

import re
import signal as signal_module
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from harness.compiler import jsonfile
from .outcomes import Outcome, CrashPassSource, Signature
from .text import closing_brackets, decimal, drop_numbers, hexadecimal, split_scope


@dataclass
class Frame:
    """One stack frame; ``function`` is empty until something symbolized it."""

    index: int
    address: int
    function: str = ""
    file: str = ""
    line: int = 0
    column: int = 0
    module: str = ""           # the binary or shared library the frame is in, as printed
    offset: int | None = None  # module-relative offset, when printed (needed for PIE binaries)

    @property
    def name(self) -> str:
        """The function without return type, parameters or clone suffixes: what signatures use."""
        return function_name(self.function) if self.function else ""


@dataclass
class Assertion:
    """A failed ``assert`` (or ``llvm_unreachable``) as an assertions build prints it."""

    condition: str
    file: str = ""
    line: int = 0
    function: str = ""
    program: str = ""

    def render(self) -> str:
        where = f" at {self.file}:{self.line}" if self.file else ""
        within = f" in {self.function}" if self.function else ""
        return f"Assertion `{self.condition}' failed{where}{within}"


@dataclass
class CrashInfo:
    """Everything a crash printed; ``signature`` groups duplicates of the same bug."""

    signal: str = ""                 # SIGSEGV, SIGABRT, ... ("" if the run ended without one)
    exit_status: int | None = None   # the raw status the runner saw (negative, 256-N or 128+N)
    fatal_error: str = ""            # the text after "LLVM ERROR: "
    assertion: Assertion | None = None
    program_arguments: str = ""
    stack_entries: list[str] = field(default_factory=list)   # pretty-stack lines after arguments
    running_passes: list[str] = field(default_factory=list)  # from "Running pass 'X'" entries
    frames: list[Frame] = field(default_factory=list)
    has_stack_dump: bool = False     # "Stack dump:" was printed (worker-thread crashes lose it)
    symbolizer: str = ""             # the llvm-symbolizer that symbolized frames offline, if any
    symbolizer_note: str = ""        # why offline symbolization did not happen, if it did not
    pass_name: str = ""              # the pass blamed for the crash
    pass_source: CrashPassSource = CrashPassSource.NONE  # how pass_name was found
    at_timeout: bool = False         # the harness sent SIGABRT to a hung run to get this dump

    @property
    def symbolized(self) -> bool:
        """Frames outside libc carry names (raw dumps name only a few libc frames via dladdr)."""
        return any(f.function and not _is_system_module(f.module) for f in self.frames)

    def below_handler(self) -> list[Frame]:
        """The frames under the signal machinery (handler, raise, abort, __assert_fail)."""
        frames = self.frames
        if frames and not self.symbolized:
            # No names: LLVM's first two frames are PrintStackTrace and SignalHandler, then the
            # libc trampoline; keep what is left in the binary.
            return [f for f in frames[2:] if not _is_system_module(f.module)]
        start = 0
        for f in frames:  # the handler region: leading handler and libc frames
            if not (_is_handler_frame(f) or _is_system_frame(f)):
                break
            start += 1
        return frames[start:]

    def top_frame(self) -> Frame | None:
        """The first frame in project (torch-mlir/MLIR) code: what the crash is "at"."""
        for f in self.below_handler():
            if f.function and not _is_library_frame(f):
                return f
        below = self.below_handler()
        return below[0] if below and not self.symbolized else None

    def torch_frame(self) -> Frame | None:
        """The first ``mlir::torch::`` frame under the top frame and above the pass, when the
        top frame is generic MLIR code (``mlir::detail::readBits``): which torch-mlir code
        got there."""
        top = self.top_frame()
        if top is None or not top.name.startswith("mlir::") or _is_torch_frame(top):
            return None
        below = self.below_handler()
        for f in below[below.index(top) + 1:]:
            if f.name.endswith("::runOnOperation"):
                return None
            if f.name.startswith("mlir::torch::"):
                return f
        return None

    def relevant_frames(self, limit: int = 10) -> list[Frame]:
        return self.below_handler()[:limit]

    @property
    def outcome(self) -> Outcome:
        if self.at_timeout:
            return Outcome.TIMEOUT
        return Outcome.ASSERTION if self.assertion else Outcome.CRASH

    @property
    def signature(self) -> Signature:
        """``SIGFPE in Canonicalizer at mlir::torch::Torch::AtenRemainderIntOp::fold``: the pass
        plus the first project frame by name (no addresses; offsets only when nothing could be
        symbolized), the signal and, for assertions, the condition. A hang names the pass only."""
        if self.at_timeout:
            return Signature(Outcome.TIMEOUT, signal=self.signal, pass_name=self.pass_name,
                             from_dump=True, hang=True)
        top = self.top_frame()
        via = self.torch_frame() if top is not None else None
        return Signature(
            self.outcome, signal=self.signal, pass_name=self.pass_name,
            frame=(top.name or _offset_name(top)) if top is not None else "",
            via=via.name if via is not None else "",
            assertion=drop_numbers(self.assertion.condition) if self.assertion else "",
            fatal_error=drop_numbers(self.fatal_error.splitlines()[0]) if self.fatal_error else "",
            from_dump=True)

    def to_json(self) -> dict:
        return jsonfile.plain(asdict(self))

    @classmethod
    def from_json(cls, d: dict) -> CrashInfo:
        d = dict(d)
        d["pass_source"] = CrashPassSource.parse(d.get("pass_source", ""))
        d["frames"] = [Frame(**f) for f in d.get("frames", [])]
        if d.get("assertion"):
            d["assertion"] = Assertion(**d["assertion"])
        return cls(**d)


# ---------------------------------------------------------------------------------------------
# Names

_CLONE_BODY = re.compile(r"\(\.[\w.]+\)")          # (.cold), (.constprop.0)
_QUALIFIERS = ("const", "volatile", "&&", "&", "noexcept")
_OPEN = "(<[{"
_CLOSE = ")>]}"
_BRACKET_OR_SPACE = re.compile(r"[(<\[{)>\]} ]")
_OPEN_PAREN = re.compile(r"\(")
_ANONYMOUS = "anonymous namespace"


@lru_cache(maxsize=1024)  # a frame's name is asked for by every frame predicate
def function_name(demangled: str) -> str:
    """``ret ns::Cls<T>::f(args)::'lambda'(int) const (.cold)`` → ``ns::Cls<T>::f::'lambda'``.

    Return type, parameter lists, cv-qualifiers and compiler clone suffixes go: they change
    with unrelated edits and builds, the qualified name does not. Linear in the name's length
    (frames of deeply templated code run to tens of KB).
    """
    name = _drop_parameter_lists(_strip_suffixes(demangled.strip()))
    # The return type is whatever precedes the last space outside brackets.
    depth = 0
    cut = -1
    for m in _BRACKET_OR_SPACE.finditer(name):
        ch, i = m.group(), m.start()
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE and not (ch == ">" and name[i - 1:i] == "-"):
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0 and not name.endswith("operator", 0, i):
            cut = i
    return name[cut + 1:].strip()


def _strip_suffixes(name: str) -> str:
    """Drops trailing clone suffixes (``(.cold)``, ``[clone .isra.0]``) and qualifiers
    (``const``, ``&&``), in any order and number, working back from the end."""
    end = len(name)
    while True:
        while end and name[end - 1].isspace():
            end -= 1
        if name.endswith(")", 0, end):
            start = name.rfind("(", 0, end)
            if start >= 0 and _CLONE_BODY.fullmatch(name, start, end):
                end = start
                continue
        if name.endswith("]", 0, end):
            # the first "[clone " after the last other "]": what a regex's leftmost match takes
            start = name.find("[clone ", name.rfind("]", 0, end - 1) + 1, end)
            if start >= 0:
                end = start
                continue
        qualifier = next((q for q in _QUALIFIERS if name.endswith(q, 0, end)), "")
        if qualifier and end > len(qualifier) and name[end - len(qualifier) - 1].isspace():
            end -= len(qualifier)
            continue
        return name[:end]


def _drop_parameter_lists(name: str) -> str:
    """Removes ``(...)`` groups that follow a name (calls, lambdas), keeping
    ``(anonymous namespace)``, ``operator()`` and function types such as ``long (long)``."""
    closes = closing_brackets(name)
    kept: list[str] = []
    tail = ""  # the last characters kept so far: all the decision looks at
    pos = 0
    for m in _OPEN_PAREN.finditer(name):
        i = m.start()
        if i < pos:  # inside a group already dropped
            continue
        tail = (tail + name[max(pos, i - 16):i])[-16:]
        end = closes.get(i, -1)
        last = tail[-1:]
        follows_name = bool(last) and not last.isspace() and (
            last.isalnum() or last in "_>'" or tail.endswith("operator()"))
        anonymous = end - i - 1 == len(_ANONYMOUS) and name.startswith(_ANONYMOUS, i + 1)
        if end > 0 and follows_name and not tail.endswith("operator") and not anonymous:
            kept.append(name[pos:i])
            pos = end + 1
        else:
            kept.append(name[pos:i + 1])
            tail = (tail + "(")[-16:]
            pos = i + 1
    kept.append(name[pos:])
    return "".join(kept)


def canonical_pass_name(name: str) -> str:
    """``mlir::(anonymous namespace)::CanonicalizerPass`` and ``Canonicalizer`` → ``Canonicalizer``.

    MLIR's reproducer note prints ``Pass::getName()`` (``CanonicalizerPass``,
    ``DecomposeComplexOps``) while the stack has the class (``Canonicalizer``,
    ``DecomposeComplexOpsPass``); dropping the scope and a trailing ``Pass`` makes them meet.
    """
    base = split_scope(name.strip())[-1]
    if base.endswith(">") and "<" in base:  # template arguments
        base = base[:base.index("<")]
    if base.endswith("Pass") and len(base) > len("Pass"):
        base = base[: -len("Pass")]
    return base


def pass_from_frames(frames: Sequence[Frame]) -> str:
    """The class of the innermost ``...::runOnOperation()`` on the stack (adaptors skipped)."""
    for f in frames:
        name = f.name
        if name.endswith("::runOnOperation") and "OpToOpPassAdaptor" not in name:
            scope = split_scope(name)
            if len(scope) >= 2:
                return canonical_pass_name(scope[-2])
    return ""


# Frames of the signal machinery above the crash site.
_HANDLER_FUNCS = re.compile(
    r"^(?:llvm::sys::PrintStackTrace|llvm::sys::RunSignalHandlers|SignalHandler|"
    r"PrintStackTraceSignalHandler|__restore_rt|__pthread_kill\w*|pthread_kill|raise|gsignal|"
    r"abort|__assert_fail\w*|__assert_perror_fail|__GI_\w+|llvm::report_fatal_error|"
    r"llvm::llvm_unreachable_internal|llvm::reportFatal\w*)$"
)
# Frames that are library helpers rather than where the bug is.
_LIBRARY_FUNCS = re.compile(
    r"^(?:std::|__gnu_cxx::|__cxxabiv1::|llvm::|__|_start$|main$|report_size_overflow$|"
    r"report_at_maximum_capacity$|mlir::detail::reportFatal\w*$)"
)
_LIBRARY_FILES = {"Signals.cpp", "Signals.inc", "ErrorHandling.cpp", "SmallVector.cpp",
                  "Casting.h", "raise.c", "abort.c", "pthread_kill.c", "assert.c"}


def _is_system_module(module: str) -> bool:
    base = Path(module).name
    return bool(re.match(r"(?:libc|libpthread|libstdc\+\+|libgcc_s|ld-linux|libm)[.-]", base))


def _is_system_frame(f: Frame) -> bool:
    """libc and friends: by module, or by glibc's relative source paths (./nptl/..., ./csu/...)."""
    return _is_system_module(f.module) or f.file.startswith("./")


def _is_handler_frame(f: Frame) -> bool:
    if not f.function:
        return _is_system_module(f.module)  # the libc signal trampoline prints no name
    return bool(_HANDLER_FUNCS.match(f.name))


def _is_library_frame(f: Frame) -> bool:
    if _is_system_frame(f) or Path(f.file).name in _LIBRARY_FILES:
        return True
    return bool(_LIBRARY_FUNCS.match(f.name))


def _is_torch_frame(f: Frame) -> bool:
    return f.name.startswith("mlir::torch::") or "torch-mlir" in f.file


def _offset_name(f: Frame) -> str:
    off = f.offset if f.offset is not None else f.address
    return f"{Path(f.module).name or '?'}+0x{off:x}"


# ---------------------------------------------------------------------------------------------
# Signals and exit statuses

_CRASH_MARKERS = ("Stack dump:", "PLEASE submit a bug report", "LLVM ERROR:", "' failed.",
                  "UNREACHABLE executed")


def has_crash_text(stderr: str) -> bool:
    return any(m in stderr for m in _CRASH_MARKERS)


def signal_name(number: int) -> str:
    try:
        return signal_module.Signals(number).name
    except ValueError:
        return f"signal {number}"


def decode_exit_status(returncode: int | None, stderr: str) -> str:
    """The signal a status means: negative (direct child), 256-N (the wheel's Python wrapper:
    245 = SIGSEGV, 248 = SIGFPE, 250 = SIGABRT) or 128+N (a shell wrapper). The wrapped forms
    count only when stderr shows LLVM's crash output, since they are also ordinary statuses."""
    if returncode is None or returncode == 0:
        return ""
    if returncode < 0:
        return signal_name(-returncode)
    if not has_crash_text(stderr):
        return ""
    if 256 - 64 < returncode < 256:
        return signal_name(256 - returncode)
    if 128 < returncode < 128 + 64:
        return signal_name(returncode - 128)
    return ""


# ---------------------------------------------------------------------------------------------
# Parsing

_FATAL = re.compile(r"^LLVM ERROR: (?P<msg>.*)$")
_ASSERT = re.compile(
    r"^(?P<prog>\S+?): (?P<file>[^:\s][^:]*):(?P<line>\d+): (?P<func>.+?): "
    r"Assertion `(?P<cond>.*)' failed\.\s*$"
)
_UNREACHABLE = re.compile(r"^UNREACHABLE executed(?: at (?P<file>.+?):(?P<line>\d+))?!\s*$")
_ENTRY = re.compile(r"^\s*(?P<n>\d+)\.\t(?P<text>.*)$")
_RUNNING_PASS = re.compile(r"^Running pass '(?P<pass>[^']+)'")
_SYM_FRAME = re.compile(r"^\s*#(?P<idx>\d+) 0x(?P<addr>[0-9a-fA-F]+)(?: (?P<rest>.*))?$")
_RAW_FRAME = re.compile(
    r"^(?P<idx>\d+)\s+(?P<module>\S+)\s+0x(?P<addr>[0-9a-fA-F]+)(?: (?P<sym>.+?) \+ (?P<soff>\d+))?\s*$"
)
_GLIBC_FRAME = re.compile(
    r"^(?P<module>[^\s()\[\]]+)\((?P<sym>[^()+]*)(?:\+0x(?P<off>[0-9a-fA-F]+))?\)"
    r" \[0x(?P<addr>[0-9a-fA-F]+)\]\s*$"
)
_MODULE_SUFFIX = re.compile(r"^(?P<func>.*?) ?\((?P<module>[^()]+)\+0x(?P<off>[0-9a-fA-F]+)\)$")
_FILE_SUFFIX = re.compile(r"^(?P<func>.*) (?P<file>\S+?):(?P<line>\d+)(?::(?P<col>\d+))?$")
_STOP_FATAL = ("PLEASE submit a bug report", "Stack dump:")


def _parse_frame_rest(index: int, address: int, rest: str) -> Frame:
    rest = rest.strip()
    m = _MODULE_SUFFIX.match(rest)
    if m:
        return Frame(index, address, m.group("func").strip(), module=m.group("module"),
                     offset=hexadecimal(m.group("off")))
    m = _FILE_SUFFIX.match(rest)
    if m and ("." in m.group("file") or "/" in m.group("file")):
        return Frame(index, address, m.group("func").strip(), file=m.group("file"),
                     line=decimal(m.group("line")), column=decimal(m.group("col")))
    return Frame(index, address, rest)


def parse_frames(lines: Iterable[str]) -> list[Frame]:
    """Frames in any of the three printed forms, in order."""
    frames: list[Frame] = []
    for raw in lines:
        line = raw.rstrip("\n")
        m = _SYM_FRAME.match(line)
        if m:
            frames.append(_parse_frame_rest(decimal(m.group("idx")), hexadecimal(m.group("addr")),
                                            m.group("rest") or ""))
            continue
        m = _RAW_FRAME.match(line)
        if m:
            frames.append(Frame(decimal(m.group("idx")), hexadecimal(m.group("addr")), m.group("sym") or "",
                                module=m.group("module")))
            continue
        m = _GLIBC_FRAME.match(line)
        if m:
            frames.append(Frame(len(frames), hexadecimal(m.group("addr")), m.group("sym") or "",
                                module=m.group("module"),
                                offset=(hexadecimal(m.group("off"))
                                        if m.group("off") and not m.group("sym") else None)))
    return frames


def parse_crash(stderr: str, *, returncode: int | None = None, pass_hint: str = "",
                at_timeout: bool = False) -> CrashInfo | None:
    """The crash in ``stderr``, or None when it shows none and the status is no signal.

    ``pass_hint`` is the pass the caller knows it ran (a one-pass pipeline); it is used only
    when neither a ``Running pass`` entry nor a ``runOnOperation`` frame names one.
    """
    sig = decode_exit_status(returncode, stderr)
    if not sig and not has_crash_text(stderr) and not at_timeout:
        return None
    info = CrashInfo(signal=sig, exit_status=returncode, at_timeout=at_timeout)
    lines = stderr.splitlines()
    dump_at = _read_messages(lines, info)
    info.frames = parse_frames(lines[dump_at + 1:] if dump_at >= 0 else lines)
    blame(info, pass_hint)
    return info


def _read_messages(lines: Sequence[str], info: CrashInfo) -> int:
    """Fills the fatal error, the assertion and the pretty-stack entries of ``info``; returns
    the index of the ``Stack dump:`` line (-1 if none). Only the first of each counts: a second
    crash while the first was printed ends the reading."""
    dump_at = -1
    fatal_seen = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if not fatal_seen and (fatal := _FATAL.match(line)):
            fatal_seen = True
            info.fatal_error, i = _read_fatal(fatal, lines, i)
            continue
        if info.assertion is None:
            info.assertion = _assertion(lines, i)
        if line.startswith("Stack dump:"):
            if dump_at >= 0:
                break
            dump_at, info.has_stack_dump = i, True
        elif dump_at >= 0:
            _read_entry(line, info)
        i += 1
    return dump_at


def _read_fatal(fatal: re.Match[str], lines: Sequence[str], i: int) -> tuple[str, int]:
    """``LLVM ERROR: ...`` (``fatal``, the match of ``lines[i]``) and the lines that continue it
    (up to a blank line or the banner); the message and the index after it."""
    message = [fatal.group("msg")]
    j = i + 1
    while j < len(lines) and lines[j].strip() and not lines[j].startswith(_STOP_FATAL):
        message.append(lines[j])
        j += 1
    return "\n".join(message).strip(), j


def _assertion(lines: Sequence[str], i: int) -> Assertion | None:
    """A failed ``assert`` on line ``i``, or ``llvm_unreachable`` (whose message is the line
    before)."""
    line = lines[i]
    m = _UNREACHABLE.match(line)
    if m:
        message = lines[i - 1].strip() if i > 0 else ""
        return Assertion(f"UNREACHABLE: {message}" if message else "UNREACHABLE",
                         m.group("file") or "", decimal(m.group("line")))
    # The suffix first: without it the pattern backtracks over every "Assertion `" on the line.
    m = _ASSERT.match(line) if line.rstrip().endswith("' failed.") else None
    if m:
        return Assertion(m.group("cond"), m.group("file"), decimal(m.group("line")), m.group("func"),
                         m.group("prog"))
    return None


def _read_entry(line: str, info: CrashInfo) -> None:
    """A numbered pretty-stack entry after ``Stack dump:`` (``0.\tProgram arguments: ...``,
    ``1.\tRunning pass 'X' on ...``)."""
    m = _ENTRY.match(line)
    if not m:
        return
    text = m.group("text")
    if text.startswith("Program arguments: "):
        info.program_arguments = text[len("Program arguments: "):].strip()
        return
    info.stack_entries.append(text.strip())
    rp = _RUNNING_PASS.match(text)
    if rp:
        info.running_passes.append(rp.group("pass"))


def blame(info: CrashInfo, pass_hint: str) -> None:
    if info.running_passes:
        info.pass_name = canonical_pass_name(info.running_passes[-1])
        info.pass_source = CrashPassSource.RUNNING_PASS_LINE
        return
    from_frames = pass_from_frames(info.frames)
    if from_frames:
        info.pass_name, info.pass_source = from_frames, CrashPassSource.FRAME
    elif pass_hint:
        info.pass_name, info.pass_source = pass_hint, CrashPassSource.CALLER
    else:
        info.pass_name, info.pass_source = "", CrashPassSource.NONE
