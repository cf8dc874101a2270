"""``harness port MODEL``: build the model, port each variant through each frontend, record it.

MODEL is what ``models.hf_resolve`` takes: a transformers model type, a local model directory,
or ``opt`` (the stock model and the project's FixedOPT). Bad input (an unknown MODEL, a bad
``--set``, an unusable ``--opt``) raises before any folder is made; a failure of the model or the
compiler is never raised: it is a port's outcome, in the record.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.compiler.irfile import unique_dir
from harness.errors import ModelOptionError, OutputError, UnsupportedModelError

from .frontend import port_targets
from .options import PortOptions
from .progress import QUIET, Progress, process_age
from .record import PortRecord, VariantRecord
from .subject import Subject

if TYPE_CHECKING:
    import torch

    from harness.compiler.binary import OptBinary
    from harness.models.choice import Variant
    from harness.models.generic import ModelOptions, PreparedModel
    from harness.models.hf_resolve import ModelSpec


def port_model(model: str, options: PortOptions = PortOptions(), *,
               progress: Progress = QUIET) -> PortRecord:
    """Ports ``model``; the record is also written to ``record.json`` in its folder."""
    from harness.compiler import builds
    from harness.execute.backends import backend
    from harness.frontends.base import frontend, frontends_taking
    from harness.models import drivers, generic, hf_resolve

    started, startup = time.monotonic(), process_age()
    check_record_path(options.record_path)
    check_out_folder(options.out)
    check_out_folder(options.testcase_dir, what="--iree-testcase")
    _check_testcase_asked(options)
    _check_device_asked(options)
    opt_binary = builds.resolve(options.opt)  # a bad --opt fails before the model is built
    for asked in options.backends if options.numerics and not options.torch_only else ():
        backend(asked).check(options.backend_options())
    for name in options.frontends:  # and a frontend's (ONNX without the [onnx] extra)
        conversion = frontend(name).conversion
        if conversion is not None:
            conversion.check()  # so does a backend this machine lacks (IREE without the extra)
    spec = hf_resolve.resolve(model)
    variants = _variants(spec, options.variants)
    record = PortRecord(model=model, source=spec.kind, model_type=spec.model_type,
                        startup_seconds=round(startup, 2),
                        options=options.to_json(), versions=_versions(opt_binary),
                        build=options.opt if options.opt and builds.binary_for(options.opt) else "")
    root: Path | None = None
    for variant in variants:
        build = f"[{spec.label}{'-fixed' if variant is generic.Variant.FIXED else ''}] build"
        try:
            with progress.stage(build) as step:
                prepared = drivers.prepare(spec, _model_options(options, variant))
        except UnsupportedModelError as refusal:
            # Said in the record too (--json), so a sweep reads why from it, not from a log.
            record.unsupported = str(refusal)
            record.seconds = time.monotonic() - started
            if options.record_path is not None:
                record.write(Path(options.record_path).expanduser())
            raise
        if root is None:  # after the first build: bad input leaves no folder behind
            root = unique_dir(f"{spec.label}-{_size_label(spec, prepared)}-", parent=options.out)
            record.folder = str(root)
            record.modality = prepared.modality
            ids = [t for n, t in zip(prepared.inputs.names, prepared.inputs.tensors, strict=False)
                   if n in ("input_ids", "decoder_input_ids")]
            record.options.update(batch=int(prepared.inputs.tensors[0].shape[0]),
                                  seq=int(ids[0].shape[-1]) if ids else None)
        entry = VariantRecord(variant, prepared.name, settings=prepared.settings.to_json(),
                              config=_config(prepared.config),
                              sentences=prepared.settings.sentences(), build_seconds=step.seconds)
        warned: list[str] = []
        subject = Subject(prepared.name, prepared.module, prepared.inputs, prepared.second_inputs,
                          trace=_tracer(prepared, warned), output_names=tuple(prepared.settings.outputs),
                          dynamic_axes=_dynamic_axes(prepared, entry, options), tracer_warnings=warned,
                          not_run=prepared.not_run)
        if prepared.program_file is not None:
            subject.program_file = prepared.program_file
        for name in frontends_taking(prepared.program_file, options.frontends):
            entry.ports += port_targets(subject, name, root / f"{prepared.name}.{name.value}",
                                        options, progress)
        record.variants.append(entry)
        del prepared, subject  # OPT-125m twice would hold both models at once
    assert root is not None, "_variants returns at least one variant, and the first makes root"
    record.seconds = time.monotonic() - started
    record.write(root / "record.json")
    if options.record_path is not None:
        record.write(Path(options.record_path).expanduser())
    return record


def check_record_path(path: str | os.PathLike | None) -> None:
    """A ``--json`` file must be writable before the port spends a minute: fail early."""
    if path is None:
        return
    parent = Path(path).expanduser().parent
    problem = ("it is a folder" if Path(path).is_dir() else
               f"{parent} is not a writable folder" if not parent.is_dir() else
               _cannot_create_in(parent))
    if problem:
        raise OutputError(f"cannot write the port record to {path}: {problem}. Give --json a file "
                          "path in a writable folder.")


def check_out_folder(out: str | os.PathLike | None, *, what: str = "--out") -> None:
    """``--out`` (or ``what``) must be able to hold the port's folder before the model is
    built (the folder itself is made only after the first build, so that bad input leaves none
    behind)."""
    if out is None:
        return
    out = Path(out).expanduser()
    nearest = next((a for a in (out, *out.parents) if a.exists()), None)
    if nearest is None:
        return
    problem = (f"{nearest} is a file, not a folder" if not nearest.is_dir()
               else _cannot_create_in(nearest))
    if problem:
        raise OutputError(f"cannot make the port's folder under {out}: {problem}. Give {what} a "
                          "writable folder.")


def _cannot_create_in(folder: Path) -> str:
    """Why no file can be created in ``folder`` ("" when one can): a probe, since os.access
    says yes to root on a folder that refuses everyone (/sys, a read-only mount)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".harness-probe-", dir=folder)
    except OSError as e:
        return f"{folder} is not a writable folder ({e.strerror or e})"
    os.close(fd)
    os.unlink(probe)
    return ""


def _variants(spec: ModelSpec, wanted: tuple[str, ...]) -> tuple[Variant, ...]:
    from harness.models import generic

    offered = generic.variants(spec)
    if not wanted or "all" in wanted:
        return offered
    chosen = tuple(generic.Variant.parse(v) for v in wanted)
    missing = [v.value for v in chosen if v not in offered]
    if missing:
        raise ModelOptionError(
            f"model '{spec.name}' has no '{missing[0]}' variant; it has: "
            f"{', '.join(v.value for v in offered)} (the fixed variant is OPT's FixedOPT).")
    return chosen


def _model_options(options: PortOptions, variant: Variant) -> ModelOptions:
    from harness.models import generic

    from harness.defaults import DYNAMIC_BATCH
    from harness.models.dynamic import DimName

    batch = options.batch
    if batch is None and options.dynamic.get(DimName.BATCH) is not None:
        batch = DYNAMIC_BATCH  # torch.export specialises a batch of 1
    return generic.ModelOptions(size=options.size, overrides=dict(options.overrides),
                        batch=generic.DEFAULT_BATCH if batch is None else batch,
                        seq=generic.DEFAULT_SEQ if options.seq is None else options.seq,
                        seed=options.seed, variant=variant, inputs=tuple(options.inputs),
                        dynamic=options.dynamic)


def _dynamic_axes(prepared: PreparedModel, entry: VariantRecord, options: PortOptions) -> tuple:
    """``--dynamic``'s axes on the prepared inputs; a dimension no input has is a note."""
    from harness.models.dynamic import input_axes, unmatched

    spec = prepared.dynamic
    if not spec:
        return ()
    axes = input_axes(spec, prepared.inputs.names, tuple(t.dim() for t in prepared.inputs.tensors))
    missing = unmatched(spec, axes)
    if missing:
        entry.sentences.append(f"--dynamic {', '.join(missing)}: no input of this model has that "
                               "dimension; it is left out.")
    return axes


def _size_label(spec: ModelSpec, prepared: PreparedModel) -> str:
    """``tiny``, ``default``; OPT's sizes by their preset names (``125m``), as ``harness opt``
    always named its folders."""
    from harness.models.hf_opt import PRESETS
    from harness.models.hf_resolve import SourceKind

    size = prepared.settings.size
    if spec.kind is not SourceKind.OPT:
        return size.value
    label = PRESETS[size]
    if label == "125m":  # harness opt --config 350m|1.3b: the default config at that width
        from harness.models.opt import PRESETS as SHAPES

        width = (prepared.settings.overrides or {}).get("hidden_size")
        for name in ("350m", "1.3b"):
            if width is not None and width == SHAPES[name]["hidden_size"]:
                return name
    return label


def _tracer(prepared: PreparedModel, warned: list[str]
            ) -> Callable[[], tuple[torch.jit.ScriptModule, list[str]]]:
    from harness.models import drivers

    def trace() -> tuple[torch.jit.ScriptModule, list[str]]:
        warned.clear()
        traced = drivers.trace(prepared)
        notes = list(traced.trace_sentences)
        counts = traced.warning_counts()
        if counts:
            notes.append("Warnings while tracing: " + ", ".join(
                f"{n} {k}" for k, n in sorted(counts.items())))
        seen: list[str] = []
        for w in traced.warnings:
            if w.category == "TracerWarning" and w.where not in seen:
                seen.append(w.where)
                warned.append(f"{w.filename}:{w.lineno}")
                notes.append(f"TracerWarning at {w.where}: {' '.join(w.message.split())[:160]}")
        return traced.module, notes[:12]

    return trace


def _config(config: Any) -> dict:
    """The config's fields that differ from its class's defaults, as JSON values (none for a
    model without a config: an ONNX file)."""
    if config is None:
        return {}
    try:
        fields = config.to_diff_dict()
    except Exception:  # a config that cannot diff itself: all of it
        fields = config.to_dict()
    return json.loads(json.dumps(fields, default=str))


def _versions(opt_binary: OptBinary) -> dict[str, str]:
    from importlib import metadata

    from harness.versions import installed

    found = installed()
    try:
        found["torch-mlir-harness"] = metadata.version("torch-mlir-harness")
    except metadata.PackageNotFoundError:
        found["torch-mlir-harness"] = "not installed"
    found["torch-mlir-opt"] = opt_binary.describe()
    return found


def _check_testcase_asked(options: PortOptions) -> None:
    """``--iree-testcase`` is written by an IREE port's numbers check; without one it would be
    silently ignored."""
    if options.testcase_dir is None:
        return
    from harness.errors import UsageError
    from harness.execute.backend_names import BackendName

    if BackendName.IREE not in options.backends:
        raise UsageError(f"--iree-testcase {options.testcase_dir}: the test case is IREE's own "
                         "(its module, inputs and expected outputs, run by iree-run-module), "
                         "written by each port on IREE; add --backend iree (or refbackend,iree), "
                         "or drop --iree-testcase.")
    if not options.numerics or options.torch_only:
        raise UsageError(f"--iree-testcase {options.testcase_dir}: the test case is written by "
                         "the numbers check, which --no-numerics and --torch-only skip; drop "
                         "one or the other.")


def _check_device_asked(options: PortOptions) -> None:
    """``--cuda-target`` picks the target of a CUDA port; without ``--device cuda`` it would be
    silently ignored, and ``--device cuda`` with no numbers check compiles nothing for it."""
    from harness.errors import UsageError
    from harness.execute.backend_names import Device

    if options.cuda_target and options.device is not Device.CUDA:
        raise UsageError(f"--cuda-target {options.cuda_target}: the target of IREE's CUDA compile, "
                         "which only --device cuda makes; add --device cuda (with --backend iree), or "
                         "drop --cuda-target.")
    if options.device is not Device.CPU and (not options.numerics or options.torch_only):
        raise UsageError(f"--device {options.device.value}: the module is compiled for the device "
                         "and run there by the numbers check, which --no-numerics and --torch-only "
                         "skip; drop one or the other.")
