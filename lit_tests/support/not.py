"""`not [--crash] COMMAND...`: LLVM's `not` for the lit suite (lit.cfg.py maps `not --crash`).

Without --crash: exits 0 when COMMAND exits non-zero, 1 when it succeeds or dies by a signal.
With --crash: exits 0 only when COMMAND dies by a signal. Like LLVM's tool, it turns off crash
reports and stack-trace symbolization in COMMAND, so a crash test does not depend on an
llvm-symbolizer being installed and stays fast.
"""

import os
import signal
import subprocess
import sys


def main(argv: list[str]) -> int:
    crash = bool(argv) and argv[0] == "--crash"
    command = argv[1:] if crash else argv
    if not command:
        print("usage: not [--crash] COMMAND [ARG...]", file=sys.stderr)
        return 2
    env = dict(os.environ)
    if crash:
        env["LLVM_DISABLE_CRASH_REPORT"] = "1"
        env["LLVM_DISABLE_SYMBOLIZATION"] = "1"
    try:
        status = subprocess.call(command, env=env)
    except OSError as e:
        print(f"not: cannot run {command[0]}: {e}", file=sys.stderr)
        return 2
    if status < 0:
        name = signal.Signals(-status).name if -status in signal.valid_signals() else -status
        if crash:
            return 0
        print(f"not: {command[0]} died by signal {name}", file=sys.stderr)
        return 1
    if crash:
        print(f"not --crash: {command[0]} exited {status} instead of crashing", file=sys.stderr)
        return 1
    return 0 if status != 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
