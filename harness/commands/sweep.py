"""``harness sweep``: port many models, each in its own process, and write a static status
board (``DIR/index.html``) from their records."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import defaults
from ..errors import UsageError
from .common import EXIT_FAILURE, EXIT_OK, count, progress, seconds


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..sweep import lock, records
    from ..sweep.runner import Shard

    if args.merge and (args.models or args.all or args.shard or args.suite):
        raise UsageError("--merge joins finished sweeps: give it the folders and --out, "
                         "without MODELs, --all, --suite or --shard.")
    if not args.merge and not args.all and not args.models and not args.suite:
        raise UsageError("harness sweep needs MODELs (gpt2 bert ...), --all, --suite NAME, or "
                         "--merge DIR...; 'harness port --list' shows the model names.")
    if args.memory_limit < 0:
        raise UsageError(f"--memory-limit {args.memory_limit}: give MiB of address space per "
                         "torch-mlir-opt run, or 0 for no limit.")
    shard = Shard.parse(args.shard) if args.shard else None
    if args.dynamic is not None:  # a bad value (an empty one too) stops here, before any model runs
        from ..models.dynamic import parse_dynamic

        args.dynamic = parse_dynamic(args.dynamic)
    builds = _builds(args)
    baseline_build = args.baseline.removeprefix(BUILD_BASELINE) if args.baseline and \
        args.baseline.startswith(BUILD_BASELINE) else ""
    if baseline_build and builds and baseline_build not in builds:
        raise UsageError(f"--baseline {args.baseline}: '{baseline_build}' is not one of --builds "
                         f"{','.join(builds)}; name one of them.")
    baseline = records.load(args.baseline) if args.baseline and not baseline_build else None
    out = Path(args.out)
    with lock.hold(out):  # one sweep per folder; an unusable --out stops here, before any run
        if args.merge:
            return _merge(args, out, baseline, baseline_build)
        return _sweep(args, out, shard, baseline, baseline_build, builds)


#: ``--baseline build:NAME``: compare the other builds of this sweep with build NAME.
BUILD_BASELINE = "build:"


def _builds(args: argparse.Namespace) -> list[str]:
    """``--builds A,B``: named torch-mlir-opt builds, each checked before any model is ported."""
    if not args.builds:
        return []
    from ..compiler import builds

    names = [n.strip() for n in args.builds.split(",")]
    if args.opt:
        raise UsageError("--builds names the torch-mlir-opt of each run; drop --opt (or give "
                         "its build as one of the --builds names).")
    if args.merge:
        raise UsageError("--merge takes the builds from the folders it joins; drop --builds.")
    if "" in names or len(set(names)) != len(names):
        raise UsageError(f"--builds {args.builds!r}: give distinct build names joined by commas, "
                         "e.g. --builds wheel,belfort-2026.7.1 ('harness builds' lists them).")
    for name in names:
        if builds.binary_for(name) is None:
            raise UsageError(f"--builds: '{name}' is not a named build. 'harness builds' lists "
                             "them; add a binary by name with 'harness builds add NAME=PATH', "
                             "or fetch a release with 'harness builds fetch NAME'.")
        builds.resolve(name)  # runs --version: a binary that does not start fails here
    return names


def _merge(args: argparse.Namespace, out: Path, baseline, baseline_build: str) -> int:
    from ..sweep import board, records
    from ..sweep.merge import merge

    merged = merge([Path(d) for d in args.merge], out)
    for model in merged.replaced:
        print(f"{model}: in more than one folder; kept the copy of the last one")
    sweep = records.load(out)
    _check_baseline_build(sweep, baseline_build)
    page = board.write(sweep, board.BoardOptions(baseline=baseline, baseline_build=baseline_build,
                                                 roots=tuple(Path(d) for d in args.merge)))
    print(f"merged {len(merged.models)} models from {len(args.merge)} folders; board: {page}")
    return EXIT_OK if all(m.ok for m in sweep.models) else EXIT_FAILURE


def _check_baseline_build(sweep, name: str) -> None:
    if name and name not in sweep.builds:
        raise UsageError(f"--baseline {BUILD_BASELINE}{name}: the sweep in {sweep.root} has no "
                         f"build '{name}' (it has: {', '.join(b for b in sweep.builds if b) or 'none'}).")


def _models(args: argparse.Namespace, out: Path, say) -> list[str]:
    """The MODELs given, then --all's (every transformers type with a base model, and the
    torchvision and timm models when the [vision] extra imports), then each --suite's."""
    from ..sweep import records

    models = list(dict.fromkeys(args.models))
    if args.all:
        from ..sweep.catalog import all_types
        from ..sweep.library_models import library_models, vision_extra_missing

        types = all_types()
        print(f"--all: {len(types)} transformers model types with a base model; one whose tiny "
              "model does not build is refused by its port (an unsupported row, with why; "
              f"{out / records.MODELS_FILE} lists both after the sweep)")
        models = list(dict.fromkeys(models + types))
        library = library_models()
        missing = vision_extra_missing(sys.executable)
        if missing:
            print(f"--all: the {len(library)} torchvision and timm models are left out: the "
                  f"[vision] extra does not import in this Python ({missing})")
        else:
            print(f"--all: plus {len(library)} torchvision and timm models (the [vision] extra "
                  "imports)")
            models = list(dict.fromkeys(models + library))
    for name in args.suite or ():
        from ..sweep.suites import SUITES, SuiteName, absent_models, suite_models

        suite = SuiteName.parse(name)
        found = suite_models(suite)
        print(f"--suite {suite.value}: {len(found)} models from {SUITES[suite].origin} at "
              f"{SUITES[suite].commit[:12]}")
        absent = absent_models(found)
        for model, why in absent.items():  # unsupported rows, no port run
            records.write_failure(out, records.RunFailure(model, records.UNSUPPORTED, 0.0, detail=why))
            print(f"--suite {suite.value}: {why}")
        found = [model for model in found if model not in absent]
        models = list(dict.fromkeys(models + found))
    return models


def _port_args(args: argparse.Namespace) -> tuple[str, ...]:
    """The flags each model's `harness port` gets from the sweep's."""
    from ..compiler.targets import parse_targets
    from ..port.options import parse_frontends
    from ..execute.backend_names import parse_backends

    port_args: list[str] = []
    if args.frontend:
        port_args += ["--frontend", ",".join(f.value for f in parse_frontends(args.frontend))]
    if args.target:
        port_args += ["--target", ",".join(t.value for t in parse_targets(args.target))]
    if args.backend:
        port_args += ["--backend", ",".join(b.value for b in parse_backends(args.backend))]
    if args.no_numerics:
        port_args.append("--no-numerics")
    if args.opt:
        port_args += ["--opt", args.opt]
    if args.dynamic:
        port_args += ["--dynamic", str(args.dynamic)]
    return tuple(port_args)


def _sweep(args: argparse.Namespace, out: Path, shard, baseline, baseline_build: str,
           builds: list[str]) -> int:
    from dataclasses import replace

    from ..sweep import board, records
    from ..models.hf_config import Size
    from ..sweep.runner import KeepFiles, SweepOptions, run_sweep

    say = progress(args)
    models = _models(args, out, say)
    if shard is not None:
        models = shard.select(models)
    options = SweepOptions(out=out.resolve(), fix=not args.no_fix, force=args.force,
                           timeout_s=args.timeout, stage_timeout_s=args.stage_timeout,
                           memory_limit_mb=args.memory_limit,
                           jobs=args.jobs, numerics_check=args.numerics_check, timelines=args.timelines,
                           port_args=_port_args(args), cwd=str(Path.cwd()), warm=not args.cold,
                           keep_files=KeepFiles.parse(args.keep_files), size=Size.parse(args.size))
    # --builds: the same ports once per build, each build a sweep folder of its own
    # (DIR/builds/NAME), its ports run with --opt NAME.
    each = [replace(options, out=options.out / records.BUILDS / b, build=b,
                    port_args=(*options.port_args, "--opt", b)) for b in builds] or [options]
    runs = []
    for one in each:
        if one.build and say is not None:
            say(f"build {one.build}: {len(models)} models")
        if args.cluster:
            from ..sweep.cluster import run_sweep_on_cluster

            done = run_sweep_on_cluster(models, one, args.cluster, say=say)
        else:
            done = run_sweep(models, one, say=say)
        runs += [(one.build, run) for run in done]
    if args.all:
        from ..sweep.catalog import all_types, write_models_file

        types = set(all_types())
        listed = write_models_file(out, [m for m in models if m in types])
        print(f"--all: {len(listed.built)} model types ported, {len(listed.skipped)} refused by "
              f"their port (why: on the board, and in {out / records.MODELS_FILE}), "
              f"{len(listed.failed)} left no record")
    sweep = records.load(out)
    _check_baseline_build(sweep, baseline_build)
    if args.reports:
        from ..sweep.reports import make_reports

        made = [r for one in each for r in make_reports(records.load(one.out), one, say=say)]
        print(f"report bundles: {sum(r.ok for r in made)} of {len(made)} blockers")
    page = board.write(sweep, board.BoardOptions(baseline=baseline, baseline_build=baseline_build,
                                                 builds=tuple(builds)))
    width = max(len(r.model) for _, r in runs)
    for build, run in runs:
        print(f"{run.model:<{width}}  {f'[{build}] ' if build else ''}{run.outcome}")
    runs_only = [r for _, r in runs]
    ok = sum(r.ok for r in runs_only)
    on = f" (models x {len(builds)} builds)" if builds else ""
    print(f"{ok} of {len(runs_only)}{on} models lower{' and verify' if not args.no_numerics else ''}; "
          f"board: {page}")
    return EXIT_OK if ok == len(runs_only) else EXIT_FAILURE


def register(sub) -> None:
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
    p.add_argument("--no-numerics", action="store_true", help="the port's --no-numerics")
    p.add_argument("--dynamic", metavar="DIMS",
                   help="the port's --dynamic (batch, seq, height, width, NAME=MIN..MAX); the "
                        "board gets a dynamic column group")
    p.add_argument("--opt", help="torch-mlir-opt binary for the ports "
                                 "(default: $TORCH_MLIR_OPT, then the wheel's)")
    p.set_defaults(fn=cmd_sweep)
