"""``harness check``: lower a torch-dialect file, run it on a backend (``--backend``: the
RefBackend by default, or IREE) and compare with the reference evaluator."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from harness.compiler import jsonfile
from .common import (
    DEFAULT_OUT,
    backend_flag,
    invocation,
    ir_tool,
    random_inputs,
    tolerances,
    value_flags,
)

if TYPE_CHECKING:
    from ..execute.check import CheckResult


def cmd_check(args: argparse.Namespace) -> int:
    from ..execute.backend_names import BackendName
    from ..execute.check import CheckOptions, check_file

    result = check_file(args.file, CheckOptions(
        pipeline=args.pipeline, function=args.function, inputs_path=args.inputs,
        random=random_inputs(args), tolerances=tolerances(args), opt=args.opt,
        padding_mask=args.padding_mask,
        timeout_s=args.timeout, out_dir=args.out, backend=BackendName.parse(args.backend),
        in_process=args.in_process, opt_level=args.opt_level, runtime_checks=args.runtime_checks))
    if args.json:
        print(jsonfile.dumps(result.to_json(), indent=2))
    else:
        for line in result.render(_crash_commands(args, result)):
            print(line)
    return 0 if result.ok else 1


def _crash_commands(args: argparse.Namespace, result: CheckResult) -> list[str]:
    """A crashed run's public commands, as ``harness port`` prints them, where the backend
    reruns a set under runtime checks (the RefBackend); none elsewhere (IREE's own tool reruns)."""
    from ..execute.backend_names import BackendName
    from ..execute.backends import backend
    from ..port.diagnose import crash_commands

    if not result.crashed or not backend(BackendName.parse(args.backend)).checked_runs:
        return []
    folder = Path(result.work_dir)
    return crash_commands(invocation(), os.path.abspath(result.input_path), result.pipeline,
                          str(folder / "inputs.npz"), folder, args.opt)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = ir_tool(sub, "check", "lower a torch-dialect file, run it on a backend (the RefBackend, "
                               "or IREE) and compare with the reference evaluator (eager PyTorch, "
                               "op by op)",
                 json_help="print the result as JSON", whole_target=True)
    source = p.add_mutually_exclusive_group()
    source.add_argument("--inputs", metavar="FILE.npz",
                        help="the arguments, as arg0, arg1, ... or in order (np.savez)")
    source.add_argument("--random-inputs", action="store_true",
                        help="random arguments from the signature (the default)")
    value_flags(p, tolerance_help="default f32 1e-4,1e-5, f16 1e-2,1e-3, f64 1e-7,1e-9, "
                                  "integers and bool exact")
    p.add_argument("--padding-mask", type=int, metavar="INDEX",
                   help="the argument index of an attention mask [batch, seq]: outputs laid out "
                        "[batch, seq, ...] are compared where it is not 0 (a padded token's row "
                        "is undefined; harness port leaves it out the same way)")
    p.add_argument("--out", default=DEFAULT_OUT,
                   help=f"parent folder of the unique folder of files (default: {DEFAULT_OUT})")
    backend_flag(p, many=False)
    p.add_argument("--in-process", action="store_true",
                   help="run the compiled code in this process (faster; a crash ends harness; "
                        "the RefBackend only)")
    p.add_argument("--opt-level", type=int, default=0, choices=range(4),
                   help="LLVM optimization level of the RefBackend's ExecutionEngine (default 0: "
                        "compiles fastest)")
    p.add_argument("--runtime-checks", action="store_true",
                   help="lower with MLIR's runtime op verification (the RefBackend only): a bad "
                        "access aborts naming the op and its location instead of reading garbage "
                        "(harness port reruns a crashed or mismatched set this way)")
    p.set_defaults(fn=cmd_check)
