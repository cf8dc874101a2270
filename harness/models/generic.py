"""The generic model driver: any transformers model type, a local model directory, or ``opt``;
and the types every source's driver shares (:class:`ModelOptions`, :class:`PreparedModel`,
:class:`TracedModel`, :class:`TupleForward`), which torchvision and timm (:mod:`vision_libs`),
ONNX files (:mod:`onnx_file`) and OPT (:mod:`hf_opt`) build on. Named for no model source: they
all go through it (it was ``hf.py``, ``HFOptions``).

``prepare(MODEL, options)`` builds the model (random seeded weights at a tiny size by default),
its traced inputs and a second input set; ``trace`` gives the TorchScript module for the
mission's path; ``PreparedModel.module`` + ``inputs`` are what ``torch.export`` takes for the
FX path. The pieces: :mod:`hf_resolve` (what MODEL names), :mod:`hf_config` (tiny preset,
``--set``), :mod:`hf_plan` (which inputs, at which sizes: pixels, spectrograms, raw audio,
placeholders), :mod:`hf_inputs` (token ids), :mod:`hf_media` (sizes from the config, ``--input``).

Facts measured at transformers 5.24.0 / torch 2.13.0:

- Base models return a ``ModelOutput`` (a dict); ``torch.jit.trace`` takes it only with
  ``strict=False`` and then returns ``Dict[str, Tensor]``, and ``config.return_dict = False``
  breaks the eager forward of several models (OPT reads ``.last_hidden_state`` from what its
  decoder returns). So the traced module is a wrapper (:class:`TupleForward`) that calls the
  model with keywords and returns its tensors as a flat tuple; the config is left alone.
- With ``use_cache=True`` decoders return a ``DynamicCache``, which neither tracer takes as an
  output: the driver builds every config with ``use_cache=False``.
- ``attn_implementation="eager"``: matmul + softmax written out, the graph the 2022 walkthrough
  lowered (``sdpa`` is HF's default).
- A directory's weights load with ``local_files_only=True``: the per-call form of
  ``HF_HUB_OFFLINE``, which huggingface_hub reads once at import (too early to set here).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import transformers
from torch import nn

from harness.errors import (
    ConfigOverrideError,
    ModelDirectoryError,
    ModelOptionError,
    ModelTraceError,
    UnsupportedModelError,
)

from . import hf_config, hf_inputs, hf_media, hf_plan, hf_resolve
from .choice import Variant
from .dynamic import DynamicSpec, differ_along, resized_batch, resized_plan
from .hf_config import Size
from .hf_inputs import InputSet
from .hf_resolve import LIBRARIES, ModelSpec, Part, SourceKind
from .modality import Modality, modality_of
from .opt import CollectedWarning, collecting_warnings, graph_output_type

DEFAULT_BATCH = 1
DEFAULT_SEQ = 8
ATTN_IMPLEMENTATION = "eager"
#: How a refusal of the model's own eager forward starts (the tiny preset's retry reads it).
EAGER_FAILS = "its eager forward fails on the inputs "
#: The build failures the retry answers too: a tiny config that a validator rejects, a model that
#: does not build from it (a size the config ties to one the preset shrinks), not a missing library.
BUILD_FAILS = re.compile(r"^its tiny \w+ does not build: (?!.*requires the \w+ library)"
                         r"|^\w+ does not build from its config: ")
#: The largest model the tiny preset's retry builds: a config's default widths, vocabulary or
#: positions at two layers reach 3 G parameters (12 GB of weights) for a 70B config's, more than
#: a 2-core, 24 GB machine running sweeps side by side has; a larger trial is not built (counted
#: on the meta device first), and the refusal says so.
RETRY_MAX_PARAMETERS = 100_000_000
#: Models up to this many MiB of parameters try each candidate input size on a copy.
TRIAL_COPY_MB = 512


@dataclass(frozen=True, kw_only=True)
class ModelOptions:
    """How to build a model; the library's defaults, which the CLI repeats."""

    size: Size | None = None  # None: tiny for a model type, the directory's own for a directory
    overrides: Mapping[str, object] = field(default_factory=dict)  # --set FIELD=VALUE
    batch: int = DEFAULT_BATCH
    seq: int = DEFAULT_SEQ
    seed: int = 0  # weights and the first input set; the second set uses seed + 1
    variant: Variant = Variant.STOCK
    inputs: tuple[str, ...] = ()  # --input NAME=SHAPE[:DTYPE]: inputs the planner cannot make
    dynamic: DynamicSpec = DynamicSpec()  # --dynamic: the second set is larger along these


# ---------------------------------------------------------------------------------------------
# The traced module


def flatten_outputs(value: Any, prefix: str = "") -> list[tuple[str, torch.Tensor]]:
    """A model's outputs as named tensors in order: ModelOutput fields (None ones dropped),
    tuples (``hidden_states.0``) and plain tensors. Anything else (a cache) cannot be traced."""
    if isinstance(value, torch.Tensor):
        return [(prefix or "output", value)]
    if isinstance(value, Mapping):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, (tuple, list)):
        items = [(str(i), v) for i, v in enumerate(value)]
    elif value is None:
        return []
    elif isinstance(value, (int, float, bool)):  # a size the model reports (MaskFormer-Swin's
        return []  # spatial dimensions): a constant of the trace, not a computed value
    else:
        raise TypeError(f"output {prefix or '(top)'} is a {type(value).__name__}, not tensors")
    found: list[tuple[str, torch.Tensor]] = []
    for key, item in items:
        found += flatten_outputs(item, f"{prefix}.{key}" if prefix else key)
    return found


def as_tuple(value: Any) -> tuple[torch.Tensor, ...]:
    """What a traced or eager module returned, as a tuple of tensors (OPT's drivers return one)."""
    return tuple(t for _, t in flatten_outputs(value))


class TupleForward(nn.Module):
    """Takes the inputs positionally, calls the model with them as keywords (plus fixed keyword
    arguments such as ``use_cache=False``) and returns its tensors as a flat tuple: what both
    ``torch.jit.trace`` and ``torch.export`` take without a dict.

    One output is returned as the tensor itself, not a 1-tuple: a TorchScript forward returning
    ``Tuple[Tensor]`` crashes torchscript-module-to-torch-backend-pipeline at torch-mlir
    20261001 (SIGSEGV in AdjustCallingConventions, ``ValueTensorType::getOptionalSizes``), even
    for ``return (x + 1,)``. :func:`as_tuple` gives the tuple back on the Python side.
    """

    def __init__(self, model: nn.Module, names: tuple[str, ...], fixed: Mapping[str, object]):
        super().__init__()
        self.model = model
        self.names = names
        self.fixed = dict(fixed)

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, ...]:
        outputs = as_tuple(self.model(**dict(zip(self.names, tensors, strict=True)), **self.fixed))
        return outputs[0] if len(outputs) == 1 else outputs


def non_persistent_buffers(module: nn.Module) -> list[str]:
    """Buffers left out of the state_dict (rotary ``inv_freq``, BERT's ``position_ids``).

    torch 2.13's ``torch.export`` keeps them among the exported program's constants, and the
    torch-mlir 20261001 ``fx_importer`` looks for buffers in ``state_dict`` only: "Could not find
    state mapping for buffer". This names the buffers behind that error.
    """
    return [f"{prefix}.{name}" if prefix else name
            for prefix, sub in module.named_modules()
            for name in sorted(sub._non_persistent_buffers_set)
            if getattr(sub, name, None) is not None]


# ---------------------------------------------------------------------------------------------
# Records


@dataclass(frozen=True)
class ModelSettings:
    """What was built, from what, and with which inputs: data for a JSON record, sentences for
    the terminal."""

    model: str  # MODEL as given
    source: SourceKind
    model_type: str
    model_class: str
    config_class: str
    part: Part
    size: Size
    overrides: Mapping[str, object]
    sizes: Mapping[str, int]  # concept -> value: layers, hidden, heads, ...
    weights: str  # "random (seed N)" or the weight file
    attn_implementation: str
    use_cache: bool
    call: str  # the call the traced forward makes
    inputs: str  # names, dtypes and shapes, in forward order
    first_inputs: str
    second_inputs: str
    outputs: tuple[str, ...]
    transformers_version: str = transformers.__version__
    torch_version: str = torch.__version__
    kept: str = ""  # which of the tiny preset's sizes stayed at the config's defaults, and why

    def sentences(self) -> list[str]:
        if self.source is SourceKind.ONNX_FILE:  # nothing was built: a file was read
            return [f"The ONNX file {self.model}, run by onnxruntime as the reference (an ONNX "
                    "file is typed: no float64 run, the flat tolerance decides).",
                    f"Inputs: {self.inputs}; traced on {self.first_inputs}; checked again on "
                    f"{self.second_inputs} (symbolic sizes: --batch for a batch, --seq for any other).",
                    f"Outputs: {', '.join(self.outputs)}.",
                    f"Versions: torch {self.torch_version}."]
        sized = ", ".join(f"{k} {v}" for k, v in self.sizes.items())
        sets = "" if not self.overrides else " with " + ", ".join(
            f"{k}={v!r}" for k, v in self.overrides.items())
        part = " (encoder only)" if self.part is Part.ENCODER else ""
        return [
            f"Built {self.model_class}{part} from {self.config_class} ('{self.model_type}'), "
            f"size {self.size}{sets}{': ' + sized if sized else ''}; weights {self.weights}."
            + (f" Tiny, but {self.kept}." if self.kept else ""),
            f"Attention implementation: {self.attn_implementation}; KV cache "
            f"{'on' if self.use_cache else 'off (use_cache=False)'}; eval mode (no dropout).",
            f"The traced forward {self.call}",
            f"Inputs: {self.inputs}; traced on {self.first_inputs}; checked again on "
            f"{self.second_inputs}.",
            f"Outputs: {', '.join(self.outputs)}.",
            f"Versions: transformers {self.transformers_version}, torch {self.torch_version}.",
        ]

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["overrides"] = dict(self.overrides)
        data["sizes"] = dict(self.sizes)
        data["outputs"] = list(self.outputs)
        data.update(source=self.source.value, part=self.part.value, size=self.size.value)
        return data


@dataclass(frozen=True)
class PreparedModel:
    """A model ready for both frontends: ``module(*inputs.tensors)`` is the forward to trace or
    export; ``second_inputs`` has other ids and a padded mask."""

    spec: ModelSpec
    variant: Variant
    config: Any
    model: nn.Module  # the transformers model (OPT's drivers: the OPTModel both share)
    module: nn.Module  # positional tensors in, a tuple of tensors (OPT: one tensor) out
    inputs: InputSet
    second_inputs: InputSet
    settings: ModelSettings
    dynamic: DynamicSpec = DynamicSpec()  # --dynamic, seq capped at the model's positions
    # What part of the model the inputs leave unrun ("" when none): the text-only fallback of a
    # model that also reads images or audio, when no size of those ran the model.
    not_run: str = ""
    # The model given as a frontend's own program file (an .onnx file): that frontend takes it
    # as it is, and no other frontend can (None: an eager module, every frontend).
    program_file: Path | None = None

    @property
    def name(self) -> str:
        """``gpt2``, ``t5-encoder``, ``opt-fixed``: for folders and titles."""
        return self.spec.label + ("-fixed" if self.variant is Variant.FIXED else "")

    @property
    def modality(self) -> Modality:
        """What the model reads: a library model (``torchvision:``, ``timm:``) is an image model
        whatever its forward calls its input (``x``); other models by their input names."""
        if self.spec.kind in LIBRARIES.values():
            return Modality.VISION
        return modality_of(self.inputs.names, self.settings.outputs)

    def run_eager(self, inputs: InputSet | None = None) -> tuple[torch.Tensor, ...]:
        with torch.no_grad():
            return as_tuple(self.module(*(inputs or self.inputs).tensors))

    def export_args(self) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
        """What ``torch.export.export`` (and ``frontends.fx.export_and_import``) takes."""
        return self.module, self.inputs.tensors


@dataclass(frozen=True)
class TracedModel:
    """A TorchScript trace of a prepared model, with how it was traced and what warned."""

    module: torch.jit.ScriptModule
    prepared: PreparedModel
    trace_sentences: tuple[str, ...]
    warnings: tuple[CollectedWarning, ...] = ()

    def run(self, inputs: InputSet | None = None) -> tuple[torch.Tensor, ...]:
        with torch.no_grad():
            return as_tuple(self.module(*(inputs or self.prepared.inputs).tensors))

    def sentences(self) -> list[str]:
        return [*self.prepared.settings.sentences(), *self.trace_sentences]

    def warning_counts(self) -> dict[str, int]:
        return dict(Counter(w.category for w in self.warnings))


# ---------------------------------------------------------------------------------------------
# Building


def variants(spec: ModelSpec) -> tuple[Variant, ...]:
    """The drivers a MODEL has: OPT's two, one for everything else."""
    return (Variant.STOCK, Variant.FIXED) if spec.kind is SourceKind.OPT else (Variant.STOCK,)


def check_variant(spec: ModelSpec, options: ModelOptions) -> None:
    if options.variant not in variants(spec):
        raise ModelOptionError(f"model '{spec.name}' has no '{options.variant.value}' variant; "
                               f"it has: {', '.join(v.value for v in variants(spec))}.")


def prepare(model: str | ModelSpec, options: ModelOptions | None = None) -> PreparedModel:
    """Resolve MODEL and build it with its two input sets; typed errors for every bad input."""
    options = options or ModelOptions()
    spec = model if isinstance(model, ModelSpec) else hf_resolve.resolve(model)
    check_variant(spec, options)
    if spec.kind is SourceKind.OPT:
        raise ModelOptionError(f"model '{spec.name}' is built by the project's OPT drivers: "
                               "prepare it through harness.models.drivers.prepare.")
    size = options.size or (Size.DEFAULT if spec.kind is SourceKind.DIRECTORY else Size.TINY)
    running = _running(spec, options, size)
    config, model_, plan, first, fixed = (running.config, running.model, running.plan,
                                          running.first, running.fixed)
    outputs, sizes = running.outputs, hf_config.sizes(config)
    dynamic = options.dynamic.capped(sizes.get("positions"))
    second = hf_plan.make_set(resized_plan(plan, dynamic), resized_batch(options.batch, dynamic),
                              seed=options.seed + 1, padded=True)
    tensors, changed = differ_along(dynamic, second.names, first.tensors, second.tensors)
    if changed:
        second = dataclasses.replace(second, tensors=tensors,
                         description="; ".join([second.description, *changed]))
    module = TupleForward(model_, plan.names, fixed).eval()
    call = (f"takes ({', '.join(plan.names)}) positionally, calls {type(model_).__name__}("
            + ", ".join([f"{n}={n}" for n in plan.names] + [f"{k}={v}" for k, v in fixed.items()])
            + ") and returns its output tensors (one as itself, several as a flat tuple); "
            "config.return_dict stays True (False breaks some models' eager forward).")
    settings = ModelSettings(
        model=spec.name, source=spec.kind, model_type=spec.model_type,
        model_class=type(model_).__name__, config_class=type(config).__name__,
        part=spec.part, size=size,
        overrides=dict(options.overrides), sizes=sizes, kept=running.kept,
        weights=str(spec.weights) if spec.weights else f"random (seed {options.seed})",
        attn_implementation=str(getattr(config, "_attn_implementation", "")),
        use_cache=bool(getattr(config, "use_cache", False)), call=call,
        inputs=first.shapes(), first_inputs=first.description,
        second_inputs=second.description + (f" at {second.shapes()} (--dynamic {dynamic})"
                                            if dynamic else ""),
        outputs=outputs,
    )
    return PreparedModel(spec, options.variant, config, model_, module, first, second, settings,
                         dynamic, not_run=plan.note)


@dataclass(frozen=True)
class _Running:
    """A built model and the first input set its eager forward ran on."""

    config: Any
    model: nn.Module
    plan: hf_plan.MediaPlan
    first: InputSet
    outputs: tuple[str, ...]
    fixed: Mapping[str, object]
    kept: str = ""  # which of the tiny preset's sizes stayed at the config's defaults, and why


def _build_and_run(spec: ModelSpec, options: ModelOptions, size: Size,
                   keep: frozenset[str] = frozenset()) -> _Running:
    config = build_config(spec, size, options.overrides, keep)
    hf_inputs.check_shape(options.batch, options.seq, hf_config.sizes(config).get("positions"))
    hf_media.parse_givens(options.inputs)  # a bad --input fails before the model is built
    model_ = build_model(spec, config, options.seed)
    params = tuple(inspect.signature(model_.forward).parameters)
    plans = hf_plan.candidates(
        spec.name, model_, config, seq=options.seq,
        decoder_only=hf_resolve.is_decoder_only(spec.model_type, config),
        given=hf_media.parse_givens(options.inputs))
    fixed = {"use_cache": False} if "use_cache" in params else {}
    plan, first, outputs = _first_that_runs(spec, model_, plans, options, fixed)
    return _Running(config, model_, plan, first, outputs, fixed)


def _running(spec: ModelSpec, options: ModelOptions, size: Size) -> _Running:
    """The model at ``size``, running eagerly on its first input set.

    The tiny preset shrinks the sizes it knows; a config may tie others to them (LayoutLMv3's
    coordinate and shape embeddings add up to its hidden size), and then the tiny model's own
    forward fails: the fault is the preset's, not the inputs'. So a model type whose tiny
    forward fails is tried again with each group of :data:`hf_config.KEEPABLE` at the config's
    defaults, then with all of them (only the depth tiny), and is ported with the first that
    runs; the settings say which sizes were kept and why. Only when none runs is the model
    refused, and the refusal says the preset's sizes were ruled out."""
    try:
        return _build_and_run(spec, options, size)
    except UnsupportedModelError as error:
        if (size is not Size.TINY or spec.kind is not SourceKind.TYPE
                or not (error.reason.startswith(EAGER_FAILS) or BUILD_FAILS.match(error.reason))):
            raise
        refused = error
    cls = hf_resolve.config_class(spec.model_type)
    overrides = hf_config.check_overrides(cls, options.overrides, model=spec.name)
    preset = hf_config.tiny_kwargs(cls, overrides)
    groups = [*hf_config.KEEPABLE,
              ("sizes but the depth", frozenset().union(*(k for _, k in hf_config.KEEPABLE)))]
    tried: list[str] = []
    for label, keep in groups:
        kept = hf_config.tiny_kwargs(cls, overrides, keep)
        if kept == preset:
            continue  # the preset changes none of this group: nothing to try
        try:
            if _parameters(spec, build_config(spec, size, options.overrides, keep)) > RETRY_MAX_PARAMETERS:
                tried.append(f"{label} (not built: over {RETRY_MAX_PARAMETERS // 10**6} M parameters)")
                continue
            running = _build_and_run(spec, options, size, keep)
        except (UnsupportedModelError, ConfigOverrideError):
            tried.append(label)
            continue
        held = ", ".join(f"{k} {v}" for k, v in hf_config.sizes(running.config).items()
                         if k in keep)
        eager, held = refused.reason.startswith(EAGER_FAILS), f" ({held})" if held else ""
        return dataclasses.replace(running, kept=(
            f"its {label} kept at the config's defaults{held}: with the tiny preset's, "
            f"{'its eager forward failed' if eager else 'it did not build'} "
            f"({refused.reason.split('): ' if eager else ': ', 1)[-1][:300]}), since "
            "the config ties other sizes to them"))
    if not tried:
        raise refused
    raise UnsupportedModelError(spec.name, (
        f"{refused.reason} (the tiny preset's sizes are ruled out: it fails as well with its "
        f"{', then its '.join(tried)} at the config's defaults)"), refused.remedy)


def _parameters(spec: ModelSpec, config: Any) -> int:
    """How many parameters ``config``'s model has, built on the meta device (no memory); 0 when it
    does not build there (the real build then says why)."""
    try:
        with torch.device("meta"):
            model = hf_resolve.model_class(spec.model_type, spec.head)(config)
    except Exception:
        return 0
    return sum(p.numel() for p in model.parameters())


def build_config(spec: ModelSpec, size: Size, raw_overrides: Mapping[str, object] | None,
                 keep: frozenset[str] = frozenset()) -> Any:
    """The config at ``size`` with the overrides, eager attention and no KV cache; ``keep``: the
    tiny preset's concepts left at the config's defaults (:func:`hf_config.tiny_kwargs`)."""
    cls = hf_resolve.config_class(spec.model_type)
    overrides = hf_config.check_overrides(cls, raw_overrides, model=spec.name)
    if spec.directory is not None:  # SourceKind.DIRECTORY, the one kind with a directory
        if size is not Size.DEFAULT:
            raise ModelOptionError(
                f"model directory {spec.directory} is used at its own sizes (--size default): "
                "its config.json is the config; change fields with --set FIELD=VALUE.")
        data = json.loads((spec.directory / "config.json").read_text())
        data.pop("model_type", None)
        kwargs = {**data, **overrides.values}
    else:
        kwargs = (hf_config.tiny_kwargs(cls, overrides, keep) if size is Size.TINY
                  else dict(overrides.values))
    try:
        config = cls(**{**kwargs, "use_cache": False, "attn_implementation": ATTN_IMPLEMENTATION})
    except Exception as error:  # strict dataclass validation raises huggingface_hub's types
        message = " ".join(str(error).split())
        if overrides.values:
            names = ", ".join(overrides.values)
            raise ConfigOverrideError(spec.name, names, dict(overrides.values),
                                      f"{cls.__name__} rejected it: {message[:400]}") from error
        raise UnsupportedModelError(
            spec.name, f"its {size.value} {cls.__name__} does not build: {message[:400]}",
            ("Try --size default, or fix" if size is Size.TINY else "Fix")
            + " the field with --set FIELD=VALUE.") from error
    for name in getattr(config, "sub_configs", None) or ():  # LLaVA's text tower caches too
        sub = getattr(config, name, None)
        if sub is not None and hasattr(sub, "use_cache"):
            sub.use_cache = False
    hf_config.check_consistency(config, model=spec.name)
    return config


def build_model(spec: ModelSpec, config: Any, seed: int) -> nn.Module:
    """The model in eval mode, random weights from ``seed`` (the caller's RNG left alone) or
    the directory's weights, in float32; the encoder alone for ``Part.ENCODER``."""
    cls = hf_resolve.model_class(spec.model_type, spec.head)
    take_encoder = False
    if spec.part is Part.ENCODER:
        if not getattr(config, "is_encoder_decoder", False):
            raise ModelOptionError(f"model '{spec.name}': '{spec.model_type}' is not an "
                                   "encoder-decoder model, so it has no encoder part.")
        encoder = hf_resolve.encoder_class(spec.model_type)
        cls, take_encoder = (encoder, False) if encoder else (cls, True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        try:
            if spec.weights is not None:
                model = cls.from_pretrained(spec.directory, config=config, local_files_only=True,
                                            dtype=torch.float32)
            else:
                model = cls(config)
        except Exception as error:
            message = " ".join(str(error).split())[:400]
            if spec.weights is not None:
                raise ModelDirectoryError(str(spec.directory), f"its weights ({spec.weights.name}) "
                                          f"do not load into {cls.__name__}: {message}") from error
            raise UnsupportedModelError(spec.name, *_build_failure(spec, cls, error, message)) from error
    if take_encoder:
        model = model.get_encoder()
    return model.float().eval()


def _build_failure(spec: ModelSpec, cls: type, error: Exception, message: str) -> tuple[str, str]:
    """Why ``cls`` does not build, in one line, and the remedy: a library that is not installed
    (transformers' message names it), a class whose default config does not build either
    (transformers' own bug at this version, not the tiny preset's), or the error itself."""
    missing = re.search(r"requires the (\S+) library", message)
    if isinstance(error, ImportError):
        package = missing.group(1) if missing else getattr(error, "name", None) or "a package"
        return (f"{cls.__name__} needs {package}, which is not installed here "
                f"({type(error).__name__}: {message[:160]})",
                "Install it into this environment to build this model.")
    if spec.kind is SourceKind.TYPE and not spec.head:
        try:
            with torch.device("meta"):  # no memory: the default sizes are often many GB
                cls(hf_resolve.config_class(spec.model_type)())
        except Exception:
            return (f"{cls.__name__} does not build even from its default config (transformers "
                    f"{transformers.__version__}'s own failure, not the tiny preset's): "
                    f"{type(error).__name__}: {message}",
                    "A newer transformers may fix it, or --set FIELD=VALUE of the field it reads.")
    return (f"{cls.__name__} does not build from its config: {type(error).__name__}: {message}",
            "Try --size default, or --set FIELD=VALUE of the field it reads.")


def _first_that_runs(spec: ModelSpec, model: nn.Module, plans: list[hf_plan.MediaPlan],
                     options: ModelOptions, fixed: Mapping[str, object]
                     ) -> tuple[hf_plan.MediaPlan, InputSet, tuple[str, ...]]:
    """The first plan (smallest sizes first) whose traced set the eager forward runs on: a size
    the model's own checks reject fails in milliseconds at tiny size.

    Each plan but the last is tried on a copy of the model: a forward can change the model it
    runs, and a size that fails must not change the one that is ported (Swin shrinks a stage's
    ``window_size`` to an image smaller than its window, for good, and then fails at every size
    its relative-position table was built for). Models over :data:`TRIAL_COPY_MB` are tried in
    place."""
    copies = sum(p.numel() * p.element_size() for p in model.parameters()) <= TRIAL_COPY_MB << 20
    refused: UnsupportedModelError | None = None
    for index, candidate in enumerate(plans):
        plan = candidate
        trial = _trial_copy(model) if copies and index < len(plans) - 1 else model

        def call(inputs: InputSet, trial: nn.Module = trial) -> Any:
            with torch.no_grad():
                return trial(**inputs.as_kwargs(), **fixed)

        if plan.note and refused is not None:  # the text-only fallback says what did not run
            plan = dataclasses.replace(plan, note=f"{plan.note} ({refused.reason[:200]})")
        plan = hf_plan.count_placeholders(trial, call, plan, options.batch, options.seed)
        first = hf_plan.make_set(plan, options.batch, seed=options.seed, padded=False)
        try:
            return plan, first, _output_names(spec, call, first)
        except UnsupportedModelError as error:
            refused = refused if plan.note else error
    assert refused is not None
    raise refused


def _trial_copy(model: nn.Module) -> nn.Module:
    """A copy to try a size on, or the model itself where it cannot be copied."""
    try:
        return copy.deepcopy(model)
    except Exception:  # a module holding something deepcopy refuses (a lock, a handle)
        return model


def _output_names(spec: ModelSpec, call: Callable[[InputSet], Any], inputs: InputSet) -> tuple[str, ...]:
    """Run eager once: it names the outputs, and a model that cannot run fails here, clearly."""
    try:
        named = flatten_outputs(call(inputs))
    except Exception as error:
        message = " ".join(str(error).split())[:400]
        raise UnsupportedModelError(spec.name, f"{EAGER_FAILS}({inputs.shapes()}): "
                                    f"{type(error).__name__}: {message}") from error
    return tuple(name for name, _ in named)


# ---------------------------------------------------------------------------------------------
# Tracing


def trace(prepared: PreparedModel, *, check_trace: bool = False) -> TracedModel:
    """``torch.jit.trace(strict=False)`` of the prepared module, with warnings collected.

    strict=False as the issue asks; the wrapper already returns a tuple, so the graph's output
    type is a tuple of tensors either way.
    """
    caught: list[CollectedWarning] = []
    try:
        with collecting_warnings(caught):
            module = torch.jit.trace(prepared.module, prepared.inputs.tensors, strict=False,
                                     check_trace=check_trace)
    except Exception as error:
        raise ModelTraceError(prepared.spec.name, f"{type(error).__name__}: {error}",
                              "strict=False") from error
    sentences = (
        f"The tracer ran as torch.jit.trace(strict=False, check_trace={check_trace}).",
        f"The traced graph returns {graph_output_type(module)}.",
    )
    return TracedModel(module, prepared, sentences, tuple(caught))

