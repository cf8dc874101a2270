"""Numbers on the command line are checked where they are parsed: a time limit is a finite
number of seconds above 0 and a count of workers at least 1 (round-4 probes: --timeout nan|inf
was a traceback, a negative one a false 'pipeline timeout', -j 0 and --stage-timeout 0 were
taken, and sweep --timeout nan wrote a false 'crashed (timeout)' record a later sweep reused)."""

from __future__ import annotations

import pytest

from harness.cli import build_parser

IR = "m.mlir"
COMMANDS = {
    "run": ["run", IR, "--pipeline", "torch-to-linalg"],
    "timeline": ["timeline", IR, "--pipeline", "torch-to-linalg"],
    "check": ["check", IR, "--pipeline", "torch-to-linalg"],
    "port": ["port", "gpt2"],
    "sweep": ["sweep", "gpt2", "--out", "s"],
    "reduce": ["reduce", IR, "--pipeline", "torch-to-linalg", "-o", "r.mlir"],
}


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5", "soon"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_time_limit_is_seconds_above_zero(command, value, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*COMMANDS[command], f"--timeout={value}"])
    assert exit_.value.code == 2
    assert "expects a number of seconds above 0" in capsys.readouterr().err


@pytest.mark.parametrize("flags", [["-j", "0"], ["--jobs=-3"], ["--jobs", "two"],
                                   ["--stage-timeout", "0"], ["--stage-timeout", "nan"]])
def test_sweep_counts_and_stage_limits(flags, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["sweep", "gpt2", "--out", "s", *flags])
    assert exit_.value.code == 2 and "expects" in capsys.readouterr().err


def test_good_numbers_are_taken():
    args = build_parser().parse_args(["sweep", "gpt2", "--out", "s", "-j", "2", "--timeout", "1e3",
                                      "--stage-timeout", "30.5"])
    assert (args.jobs, args.timeout, args.stage_timeout) == (2, 1000.0, 30.5)
    assert build_parser().parse_args([*COMMANDS["run"], "--timeout", "0.5"]).timeout == 0.5
