"""Property: the stderr parsers take any text torch-mlir-opt could print, never raise, and stay
fast. Inputs are real stderr (tests/data/crashers/*-stderr.txt, tests/data/stderr/) mutated
by tests/support/mutations.py; ``tools/fuzz.py`` runs the same target on 10,000+ inputs.

Derandomized with no example database, so CI sees the same examples every run;
``HARNESS_FUZZ_EXAMPLES`` raises the count for a local soak.
"""

from __future__ import annotations

import os
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.compiler.crash import function_name, parse_crash
from harness.compiler.records import parse_diagnostics

from support.fuzz_targets import parse_everything
from support.mutations import mutate_stderr, stderr_corpus

CORPUS = stderr_corpus()
EXAMPLES = int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "300"))
PROPERTY = settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# Exit statuses the runner hands the parser: clean, failed, signals, the wheel's wrapper's 256-N.
STATUSES = st.sampled_from([None, 0, 1, 2, -6, -8, -11, -9, 134, 139, 245, 250])


def test_the_corpus_is_real_and_varied():
    assert len(CORPUS) >= 25
    crashes = [parse_crash(text, returncode=-11) for text in CORPUS]
    assert sum(c is not None and c.has_stack_dump for c in crashes) >= 15
    assert sum(bool(parse_diagnostics(text)) for text in CORPUS) >= 8


@PROPERTY
@given(rng=st.randoms(use_true_random=False), status=STATUSES, at_timeout=st.booleans())
def test_parsers_take_mutated_stderr_without_raising_in_under_a_second(rng, status, at_timeout):
    text = mutate_stderr(CORPUS, rng)
    start = time.perf_counter()
    parse_everything(text, status, at_timeout)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"{elapsed:.2f} s on {len(text):,} characters"


def test_a_long_stack_frame_line_parses_in_linear_time():
    # Issue 15, item 13: a 98 KB frame line took 2.6 s (and one of "f(int) " pieces 70 s): the
    # name cleanup sliced and re-joined the text at every parenthesis and space.
    for piece in ("a ", "f(int) ", "(.cold) ", "x<y<", "a::b(c) const "):
        line = " #9 0x00000000004a1b2c " + piece * (98_000 // len(piece)) + " Foo.cpp:0:0"
        text = f"Stack dump:\n0.\tProgram arguments: torch-mlir-opt x.mlir\n{line}\n"
        start = time.perf_counter()
        record = parse_everything(text, -11, False)
        elapsed = time.perf_counter() - start
        assert record.crash is not None and len(record.crash.frames) == 1
        assert elapsed < 1.0, f"{elapsed:.2f} s for a {len(line):,}-character line of {piece!r}"


def test_numbers_too_long_for_int_are_unknown_not_an_error():
    # Python refuses int() of over 4,300 digits: a fuzzed line number raised ValueError.
    big = "9" * 5000
    assert parse_diagnostics(f"x.mlir:{big}:1: error: bad\n")[0].line == 0
    crash = parse_crash(f"prog: a.cpp:{big}: f: Assertion `c' failed.\n{big} torch-mlir-opt 0x12\n",
                        returncode=-6)
    assert crash.assertion.line == 0 and crash.assertion.condition == "c"
    assert [f.index for f in crash.frames] == [0]


def test_function_name_is_unchanged_by_the_linear_rewrite():
    # Cases the quadratic version handled, checked on the rewritten one.
    assert function_name("f(int) (.cold) [clone .isra.0] const &&") == "f"
    assert function_name("ns::A<long (long)>::g(int)::'lambda'(int)::operator()(int) const") == \
        "ns::A<long (long)>::g::'lambda'::operator()"
    assert function_name("x [clone a [clone b]") == "x"
    assert (function_name("(anonymous namespace)::P::runOnOperation()")
            == "(anonymous namespace)::P::runOnOperation")


def test_addresses_too_long_for_64_bits_are_unknown_and_the_record_serializes():
    # Found by tools/fuzz.py: a 5,000-digit address parsed, and json.dumps of the record raised
    # (Python will not print an int of over 4,300 decimal digits), so `harness run --json` did.
    text = f"Stack dump:\n #3 0x{'f' * 5000} f() Foo.cpp:1:2\n #4 0x00000000004a1b2c g()\n"
    record = parse_everything(text, -11, False)
    assert [f.address for f in record.crash.frames] == [0, 0x4a1b2c]
