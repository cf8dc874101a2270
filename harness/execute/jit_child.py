"""``python -m harness.execute.jit_child LLVM_FILE --function F --inputs IN.npz --outputs OUT.npz``:
one RefBackend call in a child process (``--inputs``/``--outputs`` repeated: one call per pair,
on one parse and JIT of the module: they are most of a tiny model's run).

The JIT-compiled code runs unchecked in the process that calls it: an out-of-bounds access
crashes it, and a failed runtime check (``generate-runtime-verification``, torch-to-linalg's
shape asserts) calls ``abort()``. Here that ends the child, and the parent records it. The
checks print their message with C ``puts``; C's stdout is made unbuffered first, or ``abort()``
would drop the message with the buffer.

Prints one JSON line of timings per call on success. Exit status: 0, 1 (an error, printed), or the signal.
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import json
import sys
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING
from collections.abc import Mapping, Sequence
from harness.compiler import jsonfile

if TYPE_CHECKING:
    import numpy as np

RESULT_PREFIX = "result"


def _unbuffer_c_stdout() -> None:
    libc = ctypes.CDLL(None)
    try:
        stdout = ctypes.c_void_p.in_dll(libc, "stdout")
    except ValueError:  # not glibc: the message may be lost, the abort is not
        return
    libc.setvbuf(stdout, None, 2, 0)  # _IONBF


def _savez(f: IO[bytes], arrays: Mapping[str, np.ndarray]) -> None:
    import numpy as np

    np.savez(f, allow_pickle=False, **arrays)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.execute.jit_child")
    p.add_argument("llvm")
    p.add_argument("--function", help="default: the only public function")
    p.add_argument("--inputs", required=True, action="append")
    p.add_argument("--outputs", required=True, action="append")
    p.add_argument("--signature", help="JSON of the TensorSignature (dtypes of ui8 results)")
    p.add_argument("--opt-level", type=int, default=0)
    args = p.parse_args(argv)
    faulthandler.enable()
    _unbuffer_c_stdout()
    import numpy as np

    from harness.compiler.irfile import write_atomically
    from harness.errors import HarnessError

    from .dtypes import TensorSignature
    from .jit import JitModule

    signature = None
    if args.signature:
        data = jsonfile.loads(Path(args.signature).read_text())
        signature = TensorSignature.from_json(data)
    if len(args.inputs) != len(args.outputs):
        p.error("give one --outputs per --inputs")
    sets = []
    for path in args.inputs:
        with np.load(path) as npz:
            sets.append([npz[f"arg{i}"] for i in range(len(npz.files))])
    try:
        with open(args.llvm, "rb") as f:
            jit = JitModule.load(f.read(), opt_level=args.opt_level)
        for inputs, outputs in zip(sets, args.outputs, strict=True):
            results = jit.invoke(args.function, inputs, signature)
            arrays = {f"{RESULT_PREFIX}{i}": r for i, r in enumerate(results)}
            write_atomically(outputs, partial(_savez, arrays=arrays), binary=True)
            sys.stdout.write(json.dumps({"parse_s": jit.timings.parse_s, "jit_s": jit.timings.jit_s,
                                         "run_s": jit.timings.run_s}) + "\n")
            sys.stdout.flush()
    except HarnessError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (RuntimeError, ValueError) as e:  # the engine's own failures (symbols, lookup)
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
