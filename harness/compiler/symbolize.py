"""Offline symbolization: the binary's unnamed stack frames named by ``llvm-symbolizer --obj=BIN``,
so a machine without llvm-symbolizer on PATH (or a dump printed without names) still groups
crashes by function.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Literal

from .crash import CrashInfo, Frame, blame
from .outcomes import CrashPassSource

SYMBOLIZER_ENV = "LLVM_SYMBOLIZER_PATH"


def find_symbolizer(binary: str | os.PathLike | None = None) -> str | None:
    """``$LLVM_SYMBOLIZER_PATH``, then ``llvm-symbolizer`` beside the binary, then on PATH."""
    candidates: list[str] = []
    if os.environ.get(SYMBOLIZER_ENV):
        candidates.append(os.environ[SYMBOLIZER_ENV])
    if binary:
        candidates.append(str(Path(binary).resolve().parent / "llvm-symbolizer"))
    on_path = shutil.which("llvm-symbolizer")
    if on_path:
        candidates.append(on_path)
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def _elf_is_position_independent(path: str) -> bool | None:
    """True for ET_DYN (PIE), False for ET_EXEC, None if unreadable or not ELF."""
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return None
    if len(head) < 18 or head[:4] != b"\x7fELF":
        return None
    order: Literal["little", "big"] = "little" if head[5] == 1 else "big"
    return int.from_bytes(head[16:18], order) == 3


def symbolize(info: CrashInfo, binary: str | os.PathLike, *, symbolizer: str | None = None,
              timeout_s: float = 60.0) -> CrashInfo:
    """``info`` with the binary's unnamed frames named by ``llvm-symbolizer --obj=BIN``.

    A non-PIE binary (the wheel's) is symbolized by absolute address; a PIE one only where the
    dump printed a module offset. Without a symbolizer the frames stay as they are and
    ``symbolizer_note`` says why.
    """
    binary = str(binary)
    base = Path(binary).name
    todo = [i for i, f in enumerate(info.frames)
            if not f.function and (Path(f.module).name == base or f.module == binary)]
    if not todo:
        return info
    tool = symbolizer or find_symbolizer(binary)
    if tool is None:
        return replace(info, symbolizer_note="no llvm-symbolizer found (set $LLVM_SYMBOLIZER_PATH "
                                             "or put it on PATH); frames left unsymbolized")
    queries, note = _queries(info.frames, todo, binary)
    results: list[object] = []
    if not note:
        results, note = _answers(tool, binary, list(queries.values()), timeout_s)
    if note:
        return replace(info, symbolizer_note=note)
    named = {i: _expanded(info.frames[i], result)
             for i, result in zip(queries, results, strict=True)}
    frames = [g for i, f in enumerate(info.frames) for g in (named.get(i) or [f])]
    for n, f in enumerate(frames):
        f.index = n
    out = replace(info, frames=frames, symbolizer=tool, symbolizer_note="")
    if out.pass_source in (CrashPassSource.NONE, CrashPassSource.CALLER):
        hint = out.pass_name if out.pass_source is CrashPassSource.CALLER else ""
        blame(out, hint)
    return out


def _queries(frames: list[Frame], todo: list[int], binary: str) -> tuple[dict[int, int], str]:
    """The address to ask about for each frame in ``todo`` (by index), or why none can be asked."""
    pie = _elf_is_position_independent(binary)
    if pie is None:
        return {}, f"{binary} is not a readable ELF file; frames left unsymbolized"
    queries: dict[int, int] = {}
    for i in todo:
        f = frames[i]
        if f.offset is not None:
            queries[i] = f.offset
        elif pie is False:
            queries[i] = f.address
    if not queries:
        return {}, (f"{binary} is position-independent and the dump printed no module offsets; "
                    "frames left unsymbolized")
    return queries, ""


def _answers(tool: str, binary: str, addresses: list[int], timeout_s: float
             ) -> tuple[list[object], str]:
    """llvm-symbolizer's JSON answer for each address, in order, or why there is none."""
    stdin = "".join(f"0x{addr:x}\n" for addr in addresses)
    try:
        proc = subprocess.run([tool, f"--obj={binary}", "--output-style=JSON"], input=stdin,
                              capture_output=True, text=True, errors="replace", timeout=timeout_s,
                              check=False)
        results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        if len(results) == 1 and isinstance(results[0], list):
            results = results[0]
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        return [], f"{tool} failed ({e}); frames left unsymbolized"
    if len(results) != len(addresses):
        return [], (f"{tool} answered {len(results)} of {len(addresses)} addresses; frames left "
                    "unsymbolized")
    return results, ""


def _expanded(frame: Frame, result: object) -> list[Frame]:
    """``frame`` named by one answer: one frame per inlined function, innermost first (as LLVM
    prints them); empty when the answer names none."""
    expanded = []
    for sym in result.get("Symbol", []) if isinstance(result, dict) else []:
        fn = sym.get("FunctionName", "")
        if not fn or fn == "??":
            continue
        expanded.append(replace(frame, function=fn, file=sym.get("FileName", "") or "",
                                line=int(sym.get("Line", 0) or 0),
                                column=int(sym.get("Column", 0) or 0)))
    return expanded
