"""`not --crash COMMAND...` for the lit suite: exits 0 only when COMMAND dies by a signal.

lit runs a plain `not` itself but hands `not --crash` to an external `not` program, which only
an LLVM build provides; lit.cfg.py substitutes this script for it. Like LLVM's tool it turns
off crash reports and stack-trace symbolization in COMMAND, so a crash test does not depend on
an llvm-symbolizer being installed and stays fast.
"""

import os
import signal
import subprocess
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] != "--crash":
        print("usage: not.py --crash COMMAND [ARG...]", file=sys.stderr)
        return 2
    command = argv[1:]
    env = dict(os.environ, LLVM_DISABLE_CRASH_REPORT="1", LLVM_DISABLE_SYMBOLIZATION="1")
    try:
        status = subprocess.call(command, env=env)
    except OSError as e:
        print(f"not --crash: cannot run {command[0]}: {e}", file=sys.stderr)
        return 2
    if status < 0:
        return 0
    hint = ""
    if status > 128 and status - 128 in signal.valid_signals():
        hint = f" (a wrapper's report of {signal.Signals(status - 128).name}?)"
    elif status > 128 and 256 - status in signal.valid_signals():
        hint = f" (a wrapper's report of {signal.Signals(256 - status).name}?)"
    print(f"not --crash: {command[0]} exited {status} instead of crashing{hint}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
