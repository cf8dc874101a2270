"""``harness check``: lower a torch-dialect file, run it on the RefBackend and compare
with the reference evaluator."""

from __future__ import annotations

import argparse
import json

from ..errors import HarnessError
from .common import ir_tool


def cmd_check(args: argparse.Namespace) -> int:
    from ..execute.check import CheckOptions, check_file
    from ..execute.inputs import RandomInputs
    from ..execute.numerics import Tolerances
    from ..execute.refbackend import RefBackendOptions

    low, high = _int_range(args.int_range)
    result = check_file(args.file, CheckOptions(
        pipeline=args.pipeline, function=args.function, inputs_path=args.inputs,
        random=RandomInputs(seed=args.seed, int_low=low, int_high=high),
        tolerances=Tolerances().with_overrides(args.tolerance), opt=args.opt,
        timeout_s=args.timeout, out_dir=args.out,
        refbackend=RefBackendOptions(isolate=not args.in_process, opt_level=args.opt_level)))
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        for line in result.render():
            print(line)
    return 0 if result.ok else 1


def _int_range(text: str) -> tuple[int, int]:
    low, sep, high = text.partition(",")
    try:
        if not sep or int(low) >= int(high):
            raise ValueError
        return int(low), int(high)
    except ValueError:
        raise HarnessError(f"--int-range expects LOW,HIGH with LOW < HIGH (e.g. 0,100), got {text!r}.") from None


def register(sub) -> None:
    p = ir_tool(sub, "check", "lower a torch-dialect file, run it on the RefBackend and compare "
                               "with the reference evaluator (eager PyTorch, op by op)",
                 json_help="print the result as JSON")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--inputs", metavar="FILE.npz",
                        help="the arguments, as arg0, arg1, ... or in order (np.savez)")
    source.add_argument("--random-inputs", action="store_true",
                        help="random arguments from the signature (the default)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--int-range", default="0,2", metavar="LOW,HIGH",
                   help="random integers are drawn from [LOW, HIGH) (default 0,2)")
    p.add_argument("--function", help="the function to check (default: the only public one)")
    p.add_argument("--tolerance", action="append", default=[], metavar="DTYPE=RTOL,ATOL",
                   help="tolerance of one dtype, e.g. f32=1e-3,1e-5 (repeatable; default f32 "
                        "1e-4,1e-5, f16 1e-2,1e-3, f64 1e-7,1e-9, integers and bool exact)")
    p.add_argument("--out", help="parent folder of the unique folder of files (default: the temp dir)")
    p.add_argument("--in-process", action="store_true",
                   help="run the compiled code in this process (faster; a crash ends harness)")
    p.add_argument("--opt-level", type=int, default=0, choices=range(4),
                   help="LLVM optimization level of the ExecutionEngine (default 0: compiles fastest)")
    p.set_defaults(fn=cmd_check)
