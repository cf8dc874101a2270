"""Mutators for fuzzing: real torch-mlir-opt stderr and real torch IR, changed at random.

Shared by the property-based tests (hypothesis hands in its ``random.Random``, so failures
shrink and replay) and ``tools/fuzz.py`` (10,000+ inputs per target). Pure text, no harness
imports: what is tested is the harness, not this file.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
CRASHERS = DATA / "crashers"
STDERR = DATA / "stderr"

# The pass each crasher is run with (tests/data/crashers/README.md); hangs excluded.
CRASHER_PASSES = {
    "A_remainder_int_by_zero": "-canonicalize",
    "B_slice_literal_negative_step": "-canonicalize",
    "C_cat_rank0_dim_oob": "-canonicalize",
    "D_group_norm_zero_groups": "-torch-decompose-complex-ops",
    "E_unflatten_zero_size": "-torch-decompose-complex-ops",
    "F_view_zero_numel": "-convert-torch-to-linalg",
    "G_broadcast_to_unranked_stablehlo": "-convert-torch-to-stablehlo",
    "H_constant_pad_negative_stablehlo": "-convert-torch-to-stablehlo",
    "J_flatten_end_dim_oob": "-torch-decompose-complex-ops",
    "K_select_dim_oob": "-torch-decompose-complex-ops",
    "L_to_dtype_99_linalg": "-convert-torch-to-linalg",
    "M_max_pool2d_stride0_tosa": "-convert-torch-to-tosa",
    "N_item_unranked_to_tensor": "-convert-torch-to-tensor",
    "O_matmul_unranked_fuse_quant": "-torch-fuse-quantized-ops",
    "R_var_dim_oob_verifier": "-torch-decompose-complex-ops",
    "S_cumsum_nonvalue_tmtensor": "-convert-torch-to-tmtensor",
    "T_jit_script_class_call_method": "-torch-prepare-for-globalize-object-graph",
    "U_slice_literal_zero_step": "-canonicalize",
}


def stderr_corpus() -> list[str]:
    """Every captured stderr: crash dumps of the crashers and diagnostics of failing runs."""
    files = sorted(CRASHERS.glob("*-stderr.txt")) + sorted(STDERR.glob("*.txt"))
    return [f.read_text(errors="replace") for f in files]


def ir_corpus() -> list[tuple[str, str, str]]:
    """(name, torch IR, the pass flag it crashes) for each crasher that does not hang."""
    return [(stem, (CRASHERS / f"{stem}.mlir").read_text(), flag)
            for stem, flag in sorted(CRASHER_PASSES.items())]


# ---------------------------------------------------------------------------------------------
# Generic text mutations

# Fragments the stderr parsers look for, and what breaks naive ones.
STDERR_TOKENS = (
    "Stack dump:", "LLVM ERROR: ", "PLEASE submit a bug report", " #7 0x0000000001a0545a ",
    "12 torch-mlir-opt 0x0000000000401234", "libc.so.6(+0x29d90) [0x7f0000029d90]",
    " (.cold)", " (.constprop.0)", " [clone .isra.0]", "::runOnOperation()", " const", " &&",
    "Running pass '", "0.\tProgram arguments: ", "1.\t", "Assertion `", "' failed.",
    "UNREACHABLE executed at ", ": error: ", ": note: ", ": warning: ", "see current operation: ",
    "failed to legalize operation '", "loc(", "<unknown>:0: error: ", "(anonymous namespace)::",
    "operator()", "operator<", "'lambda'(", "<", ">", "(", ")", "[", "]", "{", "}", "::", ":",
    "\"", "'", "`", "\t", " ", "\r", "\x00", "\u00e9", "\ufffd", "(libc.so.6+0x3c050)",
    "x.mlir:3:7", "+0x", "0x", "-1", "18446744073709551615", "Failures have been detected",
    'name = "aten.foo"',
)


def _lines(text: str) -> list[str]:
    return text.split("\n")


def delete_lines(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    lines = _lines(text)
    a = rng.randrange(len(lines))
    return "\n".join(lines[:a] + lines[a + rng.randint(1, 8):])


def duplicate_lines(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    lines = _lines(text)
    a = rng.randrange(len(lines))
    chunk = lines[a:a + rng.randint(1, 4)]
    return "\n".join(lines[:a] + chunk * rng.randint(2, 50) + lines[a:])


def swap_lines(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    lines = _lines(text)
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def truncate(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    return text[:rng.randrange(len(text) + 1)] or text[:1]


def insert_token(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    at = rng.randrange(len(text) + 1)
    return text[:at] + rng.choice(STDERR_TOKENS) * rng.choice((1, 1, 2, 3, 100)) + text[at:]


def insert_junk(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    at = rng.randrange(len(text) + 1)
    junk = "".join(chr(rng.choice((rng.randrange(32, 127), rng.randrange(0, 32),
                                   rng.randrange(0x80, 0x3000))))
                   for _ in range(rng.randint(1, 40)))
    return text[:at] + junk + text[at:]


def flip_chars(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 10)):
        if chars:
            chars[rng.randrange(len(chars))] = chr(rng.randrange(1, 0x250))
    return "".join(chars)


def splice(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    other = _lines(rng.choice(donors))
    a = rng.randrange(len(other))
    lines = _lines(text)
    at = rng.randrange(len(lines) + 1)
    return "\n".join(lines[:at] + other[a:a + rng.randint(1, 30)] + lines[at:])


def blow_up(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    """One line made very long by repeating a piece of itself: 98 KB stack-frame lines took
    the crash parser seconds."""
    lines = _lines(text)
    i = rng.randrange(len(lines))
    line = lines[i] or rng.choice(STDERR_TOKENS)
    a = rng.randrange(len(line))
    piece = line[a:a + rng.randint(1, 12)] if rng.random() < 0.7 else rng.choice(STDERR_TOKENS)
    copies = rng.randint(1000, 120_000) // max(len(piece), 1)
    cut = rng.randrange(len(line) + 1)
    lines[i] = line[:cut] + piece * copies + line[cut:]
    return "\n".join(lines)


def digits(text: str, rng: random.Random, donors: Sequence[str]) -> str:
    numbers = list(re.finditer(r"\d+", text))
    if not numbers:
        return text
    m = rng.choice(numbers)
    value = rng.choice(("0", "-1", "1", "99", "4294967296", "18446744073709551616", "00", "9" * 40,
                        "9" * 5000))
    return text[:m.start()] + value + text[m.end():]


TEXT_MUTATORS: tuple[Callable[[str, random.Random, Sequence[str]], str], ...] = (
    delete_lines, duplicate_lines, swap_lines, truncate, insert_token, insert_junk, flip_chars,
    splice, blow_up, digits,
)


# Fuzzed stderr stays under this size (real crashes print ~10 KB; the long-line class that
# was superlinear starts at ~100 KB), so "under a second" is a statement about the algorithm.
MAX_STDERR = 512 * 1024


def mutate_stderr(corpus: Sequence[str], rng: random.Random) -> str:
    """A real stderr with one to four mutations, at most MAX_STDERR characters."""
    text = rng.choice(corpus)
    for _ in range(rng.randint(1, 4)):
        mutator = blow_up if rng.random() < 0.08 else rng.choice(TEXT_MUTATORS)
        text = mutator(text, rng, corpus)[:MAX_STDERR] or "\n"
    return text


# ---------------------------------------------------------------------------------------------
# IR mutations: keep it torch IR most of the time, so runs get past the parser

_OP = re.compile(r"\btorch\.[a-z_]+\.[\w.]+")
_TYPE = re.compile(r"!torch\.(?:v?tensor<[^>]*>|vtensor|tensor|int|float|bool|none|str|"
                   r"list<[^>]*>|optional<[^>]*>)")
# The values a program computes with: scalar constants and the elements of literals (not SSA
# names or shapes, whose change only breaks the parse).
_CONSTANT = re.compile(r"(?<=torch\.constant\.int )-?\d+|(?<=torch\.constant\.float )[-+.\de]+")
_DENSE = re.compile(r"dense<([^>]*)>")
_ELEMENT = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


def _value_spans(text: str) -> list[tuple[int, int]]:
    spans = [m.span() for m in _CONSTANT.finditer(text)]
    for dense in _DENSE.finditer(text):
        base = dense.start(1)
        spans += [(base + m.start(), base + m.end()) for m in _ELEMENT.finditer(dense.group(1))]
    return spans


IR_NUMBERS = ("0", "1", "-1", "2", "-2", "3", "7", "64", "-9223372036854775808",
              "9223372036854775807", "4294967296", "99")


def _harvest(corpus: Sequence[str]) -> tuple[list[str], list[str]]:
    ops, types = set(), set()
    for text in corpus:
        ops.update(_OP.findall(text))
        types.update(_TYPE.findall(text))
    return sorted(ops), sorted(types)


class IRMutator:
    """Token-level changes of real torch IR: numbers, op names, types, lines."""

    def __init__(self, corpus: Sequence[str]):
        self.corpus = list(corpus)
        self.ops, self.types = _harvest(self.corpus)

    def _replace(self, text: str, rng: random.Random, pattern: re.Pattern, pool: Sequence[str]) -> str:
        found = list(pattern.finditer(text))
        if not found or not pool:
            return text
        m = rng.choice(found)
        return text[:m.start()] + rng.choice(pool) + text[m.end():]

    def _revalue(self, text: str, rng: random.Random) -> str:
        spans = _value_spans(text)
        if not spans:
            return text
        start, end = rng.choice(spans)
        return text[:start] + rng.choice(IR_NUMBERS) + text[end:]

    def _retype(self, text: str, rng: random.Random) -> str:
        """Every use of one type becomes another, so the IR stays consistent with itself."""
        found = sorted(set(_TYPE.findall(text)))
        return text.replace(rng.choice(found), rng.choice(self.types)) if found else text

    def mutate(self, text: str, rng: random.Random) -> str:
        """One to three changes; most keep the IR parseable, so runs reach the passes."""
        for _ in range(rng.choice((1, 1, 2, 3))):
            kind = rng.random()
            if kind < 0.4:
                text = self._revalue(text, rng)
            elif kind < 0.55:
                text = self._retype(text, rng)
            elif kind < 0.6:
                text = self._replace(text, rng, _TYPE, self.types)
            elif kind < 0.65:
                text = self._replace(text, rng, _OP, self.ops)
            elif kind < 0.75:
                text = delete_lines(text, rng, self.corpus)
            elif kind < 0.82:
                text = duplicate_lines(text, rng, self.corpus)
            elif kind < 0.88:
                text = swap_lines(text, rng, self.corpus)
            elif kind < 0.92:
                text = flip_chars(text, rng, self.corpus)
            elif kind < 0.95:
                text = truncate(text, rng, self.corpus)
            else:
                text = splice(text, rng, self.corpus)
        return text if text.strip() else "// empty\n"
