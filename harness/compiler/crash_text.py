"""A crash as text: the one renderer behind ``harness run``, issue.md and backtrace.txt.

The views differ only in how much they show (a few frames under the signal handler, or every
frame of the dump with addresses and full names) and in what they mark, so they are options
of one renderer rather than three formats.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .text import split_scope

if TYPE_CHECKING:
    from .crash import CrashInfo, Frame
    from .outcomes import Signature

TOP_MARK = ">"  # the first project frame: what the crash is "at"
VIA_MARK = "+"  # the torch-mlir frame that reached a generic MLIR top frame


@dataclass(frozen=True, kw_only=True)
class CrashView:
    """How much of a crash to show, and how."""

    frames: int | None = 10       # frames under the signal handler; None: every frame of the dump
    addresses: bool = False       # each frame's address, in aligned columns (backtrace.txt)
    full_names: bool = False      # demangled names with parameters, module paths in full
    mark_top: bool = True         # TOP_MARK before the first project frame
    mark_via: bool = False        # VIA_MARK before the torch-mlir frame that led to it
    max_width: int | None = 200   # longer frame lines are cut with "..."


def render_frame(frame: Frame, *, address: bool = False, full: bool = False) -> str:
    """``#4 ns::Cls::f TorchOps.cpp:12`` or ``#4 ns::Cls::f (torch-mlir-opt+0x86fcb1)``;
    ``address`` adds the frame's address, ``full`` the name's parameters and the module's path."""
    where = ""
    if frame.file:
        where = f" {frame.file}" + (f":{frame.line}" if frame.line else "")
    elif frame.module:
        off = frame.offset if frame.offset is not None else frame.address
        where = f" ({frame.module if full else Path(frame.module).name}+0x{off:x})"
    name = frame.function if full else frame.name
    if address:
        return f"#{frame.index:<3} 0x{frame.address:016x} {name or '??'}{where}"
    return f"#{frame.index} {name or f'0x{frame.address:x}'}{where}"


def render_crash(crash: CrashInfo, view: CrashView = CrashView(), *,
                 signature: Signature | None = None) -> list[str]:
    """What the crash printed, as data: signal (or the hang), LLVM ERROR, assertion, pass, the
    signature when given, notes on the dump, then the frames ``view`` asks for."""
    lines: list[str] = []
    if crash.at_timeout:
        lines.append("hung: the harness sent SIGABRT after the timeout; the stack shows where it was")
    elif crash.signal:
        lines.append(f"signal:    {crash.signal} (exit status {crash.exit_status})")
    if crash.fatal_error:
        lines.append(f"LLVM ERROR: {crash.fatal_error.splitlines()[0]}")
    if crash.assertion:
        lines.append(f"assertion: {crash.assertion.render()}")
    if crash.pass_name:
        lines.append(f"pass:      {crash.pass_name} (from {crash.pass_source.describe()})")
    if signature is not None:
        lines.append(f"signature: {signature}")
    if not crash.has_stack_dump:
        lines.append("no 'Stack dump:' was printed (a crash on a worker thread loses it; "
                     "rerun with -mlir-disable-threading)")
    if crash.symbolizer_note:
        lines.append(f"note: {crash.symbolizer_note}")
    shown = crash.frames if view.frames is None else crash.relevant_frames(view.frames)
    if not shown:
        return lines
    top = crash.top_frame() if view.mark_top else None
    via = crash.torch_frame() if view.mark_via else None
    lines.append(_frames_header(crash, view, top is not None, via is not None) + ":")
    for f in shown:
        mark = TOP_MARK if f is top else VIA_MARK if f is via else " "
        text = render_frame(f, address=view.addresses, full=view.full_names)
        if view.max_width is not None and len(text) > view.max_width:
            text = text[:view.max_width - 3] + "..."
        lines.append(f"{mark} {text}")
    return lines


def _frames_header(crash: CrashInfo, view: CrashView, top: bool, via: bool) -> str:
    what = "frames below the signal handler" if view.frames is not None else \
        "stack, innermost first"
    notes = []
    if view.frames is None:
        notes.append(f"symbolized offline by {crash.symbolizer}" if crash.symbolizer
                     else "symbolized by the binary itself")
    elif crash.symbolizer:
        notes.append("symbolized offline")
    if top and view.frames is None:
        notes.append(f"'{TOP_MARK}' marks the first project frame")
    if via:
        notes.append(f"'{VIA_MARK}' the torch-mlir frame that led there")
    return what + (f" ({'; '.join(notes)})" if notes else "")


def short_name(name: str, scopes: int = 2) -> str:
    """``mlir::torch::Torch::AtenRemainderIntOp::fold`` → ``AtenRemainderIntOp::fold``: the last
    ``scopes`` parts of a qualified name without anonymous namespaces, as a title shows it."""
    parts = [p for p in split_scope(name) if p and p != "(anonymous namespace)"]
    return "::".join(parts[-scopes:]) if parts else name
