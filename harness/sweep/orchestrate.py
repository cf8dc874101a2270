"""A whole sweep as a library call: which models (MODELs, ``--all``, ``--suite``, ``--shard``),
on which builds (``--builds``), where (here or on a Dask cluster), then the board; or
``--merge``'s join of finished sweeps.

``harness sweep`` parses its flags into a :class:`SweepRequest` and prints what :func:`sweep`
and :func:`merge_sweeps` return; a script or a notebook calls them the same way. Whatever the
library has to say on the way (what ``--all`` left out, a suite's origin, a model in two merged
folders) goes to the ``note`` callable it is given, never to stdout, so a caller decides where
it goes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import UsageError
from . import board, lock, records
from .runner import ModelRun, Shard, SweepOptions, run_sweep
from .suites import SuiteName

#: ``--baseline build:NAME``: compare the other builds of this sweep with build NAME.
BUILD_BASELINE = "build:"

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    """The default ``note``: a library call says nothing unless asked."""


@dataclass(frozen=True)
class SweepRequest:
    """What to sweep. ``options.out`` is the sweep folder; ``options.port_args`` the flags each
    model's port gets (:func:`port_args` makes them from typed values)."""

    options: SweepOptions
    models: tuple[str, ...] = ()
    all_models: bool = False          # every transformers type, and the library models
    suites: tuple[SuiteName, ...] = ()
    shard: Shard | None = None
    builds: tuple[str, ...] = ()      # named torch-mlir-opt builds (checked by check_builds)
    baseline: str | None = None       # an earlier sweep folder, or build:NAME
    cluster: str | None = None        # a Dask address (local:N or tcp://HOST:PORT)
    reports: bool = False             # harness report once per distinct blocker


@dataclass
class SweepSummary:
    """What a sweep did: one run per model (and build), and the board."""

    page: Path
    runs: list[tuple[str, ModelRun]] = field(default_factory=list)  # (build or "", run)
    builds: tuple[str, ...] = ()
    reports_made: int = 0
    reports_ok: int = 0

    @property
    def ok(self) -> bool:
        return all(run.ok for _, run in self.runs)


@dataclass
class MergeSummary:
    page: Path
    models: int
    folders: int
    ok: bool


def baseline_build(baseline: str | None) -> str:
    """The NAME of ``--baseline build:NAME`` ("" for a folder or none)."""
    return baseline.removeprefix(BUILD_BASELINE) if baseline and \
        baseline.startswith(BUILD_BASELINE) else ""


def check_builds(names: Sequence[str]) -> tuple[str, ...]:
    """``--builds A,B``: each a named torch-mlir-opt build that starts, before any model runs."""
    from ..compiler import builds

    if "" in names or len(set(names)) != len(names):
        raise UsageError(f"--builds {','.join(names)!r}: give distinct build names joined by "
                         "commas, e.g. --builds wheel,belfort-2026.7.1 ('harness builds' lists "
                         "them).")
    for name in names:
        if builds.binary_for(name) is None:
            raise UsageError(f"--builds: '{name}' is not a named build. 'harness builds' lists "
                             "them; add a binary by name with 'harness builds add NAME=PATH', "
                             "or fetch a release with 'harness builds fetch NAME'.")
        builds.resolve(name)  # runs --version: a binary that does not start fails here
    return tuple(names)


def port_args(*, frontends: str | None = None, targets: str | None = None,
              backends: str | None = None, no_numerics: bool = False, opt: str | None = None,
              dynamic: str | None = None, device: str | None = None,
              cuda_target: str | None = None) -> tuple[str, ...]:
    """The flags each model's ``harness port`` gets; each list is parsed here, so a wrong
    value stops the sweep before any model runs."""
    from ..compiler.targets import parse_targets
    from ..execute.backend_names import parse_backends
    from ..port.options import parse_frontends

    args: list[str] = []
    if frontends:
        args += ["--frontend", ",".join(f.value for f in parse_frontends(frontends))]
    if targets:
        args += ["--target", ",".join(t.value for t in parse_targets(targets))]
    if backends:
        args += ["--backend", ",".join(b.value for b in parse_backends(backends))]
    if no_numerics:
        args.append("--no-numerics")
    if opt:
        args += ["--opt", opt]
    if dynamic:
        args += ["--dynamic", dynamic]
    if device:
        args += ["--device", device]
    if cuda_target:  # refused in one paragraph before any model runs, as each port would
        from ..execute.iree_device import check_target

        args += ["--cuda-target", check_target(cuda_target)]
    return tuple(args)


def _check_baseline_build(sweep: records.SweepDir, name: str) -> None:
    if name and name not in sweep.builds:
        raise UsageError(f"--baseline {BUILD_BASELINE}{name}: the sweep in {sweep.root} has no "
                         f"build '{name}' (it has: {', '.join(b for b in sweep.builds if b) or 'none'}).")


def _baseline(baseline: str | None, builds: Sequence[str]) -> tuple[records.SweepDir | None, str]:
    name = baseline_build(baseline)
    if name and builds and name not in builds:
        raise UsageError(f"--baseline {baseline}: '{name}' is not one of --builds "
                         f"{','.join(builds)}; name one of them.")
    return (records.load(baseline) if baseline and not name else None), name


def select_models(request: SweepRequest, note: Say = _quiet) -> list[str]:
    """The MODELs given, then --all's (every transformers type with a base model, and the
    torchvision and timm models when the [vision] extra imports), then each --suite's; a
    suite's model this install lacks is written as an unsupported row."""
    out = request.options.out
    models = list(dict.fromkeys(request.models))
    if request.all_models:
        from .catalog import all_types
        from .library_models import library_models, vision_extra_missing

        types = all_types()
        note(f"--all: {len(types)} transformers model types with a base model; one whose tiny "
             "model does not build is refused by its port (an unsupported row, with why; "
             f"{out / records.MODELS_FILE} lists both after the sweep)")
        models = list(dict.fromkeys(models + types))
        library = library_models()
        missing = vision_extra_missing(sys.executable)
        if missing:
            note(f"--all: the {len(library)} torchvision and timm models are left out: the "
                 f"[vision] extra does not import in this Python ({missing})")
        else:
            note(f"--all: plus {len(library)} torchvision and timm models (the [vision] extra "
                 "imports)")
            models = list(dict.fromkeys(models + library))
    for suite in request.suites:
        from .suites import SUITES, absent_models, suite_models

        found = suite_models(suite)
        note(f"--suite {suite.value}: {len(found)} models from {SUITES[suite].origin} at "
             f"{SUITES[suite].commit[:12]}")
        absent = absent_models(found)
        for model, why in absent.items():  # unsupported rows, no port run
            records.write_failure(out, records.RunFailure(model, records.UNSUPPORTED, 0.0,
                                                          detail=why))
            note(f"--suite {suite.value}: {why}")
        models = list(dict.fromkeys(models + [m for m in found if m not in absent]))
    return request.shard.select(models) if request.shard is not None else models


def sweep(request: SweepRequest, *, say: Say | None = None, note: Say = _quiet) -> SweepSummary:
    """Port every selected model (once per build), then write the board. ``say`` gets one
    progress line per model. The request is checked (models named, builds that start, the
    baseline) before the folder is made and locked for the sweep (one sweep per folder)."""
    if not (request.models or request.all_models or request.suites):
        raise UsageError("harness sweep needs MODELs (gpt2 bert ...), --all, --suite NAME, or "
                         "--merge DIR...; 'harness port --list' shows the model names.")
    if request.options.memory_limit_mb < 0:
        raise UsageError(f"--memory-limit {request.options.memory_limit_mb}: give MiB of address "
                         "space per torch-mlir-opt run, or 0 for no limit.")
    if request.builds and "--opt" in request.options.port_args:
        raise UsageError("--builds names the torch-mlir-opt of each run; drop --opt (or give "
                         "its build as one of the --builds names).")
    builds = check_builds(request.builds) if request.builds else ()
    baseline, base_build = _baseline(request.baseline, builds)
    with lock.hold(request.options.out):  # an unusable folder stops here, before any run
        return _sweep(request, builds, baseline, base_build, say, note)


def _sweep(request: SweepRequest, builds: tuple[str, ...], baseline: records.SweepDir | None,
           base_build: str, say: Say | None, note: Say) -> SweepSummary:
    options = request.options
    models = select_models(request, note)
    # --builds: the same ports once per build, each build a sweep folder of its own
    # (DIR/builds/NAME), its ports run with --opt NAME.
    each = [replace(options, out=options.out / records.BUILDS / b, build=b,
                    port_args=(*options.port_args, "--opt", b)) for b in builds] or [options]
    summary_runs: list[tuple[str, ModelRun]] = []
    for one in each:
        if one.build and say is not None:
            say(f"build {one.build}: {len(models)} models")
        if request.cluster:
            from .cluster import run_sweep_on_cluster

            done = run_sweep_on_cluster(models, one, request.cluster, say=say)
        else:
            done = run_sweep(models, one, say=say)
        summary_runs += [(one.build, run) for run in done]
    if request.all_models:
        from .catalog import all_types, write_models_file

        types = set(all_types())
        listed = write_models_file(options.out, [m for m in models if m in types])
        note(f"--all: {len(listed.built)} model types ported, {len(listed.skipped)} refused by "
             f"their port (why: on the board, and in {options.out / records.MODELS_FILE}), "
             f"{len(listed.failed)} left no record")
    swept = records.load(options.out)
    _check_baseline_build(swept, base_build)
    made, made_ok = 0, 0
    if request.reports:
        from .reports import make_reports

        bundles = [r for one in each for r in make_reports(records.load(one.out), one, say=say)]
        made, made_ok = len(bundles), sum(r.ok for r in bundles)
    page = board.write(swept, board.BoardOptions(baseline=baseline, baseline_build=base_build,
                                                 builds=builds))
    return SweepSummary(page, summary_runs, builds, made, made_ok)


def merge_sweeps(folders: Sequence[Path], out: Path, *, baseline: str | None = None,
                 note: Say = _quiet) -> MergeSummary:
    """``--merge``: join finished sweep folders (shards) into ``out`` and write its board."""
    from .merge import merge

    old, base_build = _baseline(baseline, ())
    with lock.hold(out):
        merged = merge(list(folders), out)
        for model in merged.replaced:
            note(f"{model}: in more than one folder; kept the copy of the last one")
        swept = records.load(out)
        _check_baseline_build(swept, base_build)
        page = board.write(swept, board.BoardOptions(baseline=old, baseline_build=base_build,
                                                     roots=tuple(folders)))
    return MergeSummary(page, len(merged.models), len(folders), all(m.ok for m in swept.models))
