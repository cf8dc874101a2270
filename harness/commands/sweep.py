"""``harness sweep``: port many models, each in its own process, and write a static status
board (``DIR/index.html``) from their records."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import defaults
from ..errors import UsageError
from .common import EXIT_FAILURE, EXIT_OK, count, device_flags, progress, seconds


def cmd_sweep(args: argparse.Namespace) -> int:
    """Parse the flags into a :class:`~harness.sweep.orchestrate.SweepRequest`, hold the folder's
    lock, run it (or the merge) through the library, and print what it returns."""
    from ..models.hf_config import Size
    from ..sweep.orchestrate import SweepRequest, merge_sweeps, port_args, sweep
    from ..sweep.runner import KeepFiles, Shard, SweepOptions
    from ..sweep.suites import SuiteName

    if args.merge and (args.models or args.all or args.shard or args.suite):
        raise UsageError("--merge joins finished sweeps: give it the folders and --out, "
                         "without MODELs, --all, --suite or --shard.")
    if args.builds and args.merge:
        raise UsageError("--merge takes the builds from the folders it joins; drop --builds.")
    out = Path(args.out)
    if args.merge:
        merged = merge_sweeps([Path(d) for d in args.merge], out, baseline=args.baseline,
                              note=print)
        print(f"merged {merged.models} models from {merged.folders} folders; board: "
              f"{merged.page}")
        return EXIT_OK if merged.ok else EXIT_FAILURE
    dynamic = None
    if args.dynamic is not None:  # a bad value (an empty one too) stops here, before any model runs
        from ..models.dynamic import parse_dynamic

        dynamic = str(parse_dynamic(args.dynamic))
    options = SweepOptions(
        out=out.resolve(), fix=not args.no_fix, force=args.force, timeout_s=args.timeout,
        stage_timeout_s=args.stage_timeout, memory_limit_mb=args.memory_limit, jobs=args.jobs,
        numerics_check=args.numerics_check, timelines=args.timelines,
        port_args=port_args(frontends=args.frontend, targets=args.target, backends=args.backend,
                            no_numerics=args.no_numerics, opt=args.opt, dynamic=dynamic,
                            device=args.device, cuda_target=args.cuda_target),
        cwd=str(Path.cwd()), warm=not args.cold, keep_files=KeepFiles.parse(args.keep_files),
        size=Size.parse(args.size))
    request = SweepRequest(
        options, models=tuple(args.models), all_models=args.all,
        suites=tuple(SuiteName.parse(s) for s in args.suite or ()),
        shard=Shard.parse(args.shard) if args.shard else None,
        builds=tuple(n.strip() for n in args.builds.split(",")) if args.builds else (),
        baseline=args.baseline, cluster=args.cluster, reports=args.reports)
    done = sweep(request, say=progress(args), note=print)
    if request.reports:
        print(f"report bundles: {done.reports_ok} of {done.reports_made} blockers")
    width = max((len(r.model) for _, r in done.runs), default=0)
    for build, run in done.runs:
        print(f"{run.model:<{width}}  {f'[{build}] ' if build else ''}{run.outcome}")
    ok = sum(r.ok for _, r in done.runs)
    on = f" (models x {len(done.builds)} builds)" if done.builds else ""
    # a CUDA port with no GPU ends lowered (compiled, not run): its row says so, the count must too
    verb = ("lower" if args.no_numerics else "lower and verify" if args.device != "cuda"
            else "lower, and verify where a GPU ran them (a row that says lowered did not run)")
    print(f"{ok} of {len(done.runs)}{on} models {verb}; board: {done.page}")
    return EXIT_OK if done.ok else EXIT_FAILURE


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ..models.hf_config import Size
    from ..sweep.runner import (
        DEFAULT_KEEP_FILES,
        DEFAULT_MODEL_TIMEOUT_S,
        DEFAULT_STAGE_TIMEOUT_S,
        DEFAULT_SWEEP_SIZE,
        KeepFiles,
    )

    p = sub.add_parser("sweep", help="port many models (each in its own process) and write a "
                                     "static HTML status board of where each stops")
    p.add_argument("models", nargs="*", metavar="MODEL", help="model types, folders, or opt")
    p.add_argument("--all", action="store_true",
                   help="every transformers model type with a base model (one whose tiny model "
                        "does not build is refused by its port: an unsupported row with why)")
    p.add_argument("--suite", action="append", choices=("dynamo-hf", "dynamo-timm"),
                   help="PyTorch's compiler benchmark lists (benchmarks/dynamo/ in "
                        "pytorch/pytorch): dynamo-hf (transformers classes with their heads), "
                        "dynamo-timm (timm:NAME, needs the [vision] extra); repeatable")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="the sweep folder: records/, logs/, ports/, index.html")
    p.add_argument("--no-fix", action="store_true", help="port the models as they are (default: --fix)")
    p.add_argument("--force", action="store_true", help="port again even where DIR has a record")
    p.add_argument("--timeout", type=seconds, default=DEFAULT_MODEL_TIMEOUT_S,
                   help=f"seconds per model before its process group is killed (default: "
                        f"{DEFAULT_MODEL_TIMEOUT_S:g})")
    p.add_argument("--stage-timeout", type=seconds, default=DEFAULT_STAGE_TIMEOUT_S,
                   help=f"the port's --timeout, per stage (default: {DEFAULT_STAGE_TIMEOUT_S:g})")
    p.add_argument("--memory-limit", type=int, default=defaults.SWEEP_MEMORY_LIMIT_MB, metavar="MB",
                   help="the port's --memory-limit: MiB of address space per torch-mlir-opt run "
                        "(default: %(default)s; 0: no limit)")
    p.add_argument("--jobs", "-j", type=count, default=1, help="models ported side by side (default: 1)")
    p.add_argument("--cold", action="store_true",
                   help="start each child in a fresh Python (default: fork it from one warm "
                        "process that imported torch, transformers and torch_mlir once)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="port on a Dask cluster instead: local:N starts N worker processes here; "
                        "tcp://HOST:PORT uses a running scheduler (pip install -e '.[cluster]')")
    p.add_argument("--shard", metavar="I/N", help="port only every N-th model from the I-th "
                                                   "(CI matrix jobs; join with --merge)")
    p.add_argument("--merge", nargs="+", metavar="DIR", help="join these sweep folders into --out")
    p.add_argument("--baseline", metavar="OLD_DIR|build:NAME",
                   help="mark what got better or worse since that sweep; build:NAME compares "
                        "this sweep's other --builds with build NAME")
    p.add_argument("--builds", metavar="A,B,...",
                   help="run the same ports on each of these named torch-mlir-opt builds "
                        "('harness builds'), locally or on --cluster; the board shows one column "
                        "group per build")
    p.add_argument("--keep-files", choices=[k.value for k in KeepFiles],
                   default=DEFAULT_KEEP_FILES.value,
                   help="which ports keep their IR files (they carry the weights): 'failing' drops "
                        "a verified port's .mlir and .mlirbc files once its record is in (default); 'all' "
                        "keeps them")
    p.add_argument("--size", choices=[s.value for s in Size], default=DEFAULT_SWEEP_SIZE.value,
                   help="tiny (default): model types at their tiny config, torchvision and timm "
                        "models built small (port --size tiny); default: each at its own sizes")
    p.add_argument("--timelines", action="store_true",
                   help="for each port that fails at a pipeline stage, write the stage's timeline "
                        "(harness timeline) and link it from the board's cell")
    p.add_argument("--numerics-check", action="store_true",
                   help="run 'harness check' (the op-level reference check) on each port that "
                        "lowers: a silent miscompile gets its own colour")
    p.add_argument("--reports", action="store_true",
                   help="run 'harness report' once per distinct blocker (the board links each bundle)")
    p.add_argument("--frontend", metavar="LIST",
                   help="the port's --frontend (torchscript, fx, onnx, separated by commas; "
                        "default both: torchscript,fx)")
    p.add_argument("--target", metavar="LIST",
                   help="the port's --target (linalg, tosa, stablehlo; default linalg): the "
                        "board gets a column per frontend and target")
    p.add_argument("--backend", metavar="LIST",
                   help="the port's --backend (refbackend, iree; default refbackend): a column "
                        "per frontend, target and backend")
    device_flags(p)  # the port's --device and --cuda-target (a cuda port's column: fx-iree-cuda)
    p.add_argument("--no-numerics", action="store_true", help="the port's --no-numerics")
    p.add_argument("--dynamic", metavar="DIMS",
                   help="the port's --dynamic (batch, seq, height, width, NAME=MIN..MAX); the "
                        "board gets a dynamic column group")
    p.add_argument("--opt", help="torch-mlir-opt binary for the ports "
                                 "(default: $TORCH_MLIR_OPT, then the wheel's)")
    p.set_defaults(fn=cmd_sweep)
