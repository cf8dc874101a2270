"""The entry point of ``harness`` (the console script) and ``python -m harness``.

Importing the CLI takes ~0.3 s, and a Ctrl-C in that time printed a KeyboardInterrupt
traceback from inside importlib. Until ``cli.main`` installs its own handlers (and again after
it returns) a stop signal ends the process at once and quietly, with status 128+N: no child
process exists then. Python's own start-up (site, the console script's imports) runs before
this module and keeps Python's default handler.
"""

import os
import signal
import sys


def _stop_now(signum: int, frame: object) -> None:
    try:
        sys.stdout.flush()
    except Exception:  # interrupted mid-write, or a closed pipe: nothing to save
        pass
    try:
        os.write(2, b"harness: interrupted\n" if signum == signal.SIGINT else
                 f"harness: stopped by {signal.Signals(signum).name}\n".encode())
    except OSError:  # the terminal is gone (SIGHUP)
        pass
    os._exit(128 + signum)


for _signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    if signal.getsignal(_signum) is not signal.SIG_IGN:  # nohup and background jobs ignore some
        signal.signal(_signum, _stop_now)


def main() -> int:
    from harness.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    raise SystemExit(main())
