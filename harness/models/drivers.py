"""MODEL -> the driver that builds and traces it: a table by source kind, so the generic
Hugging Face driver (:mod:`hf`) and the project's OPT drivers (:mod:`hf_opt`, which reuses the
generic one's types) never import each other. Callers prepare and trace through here."""

from __future__ import annotations

from collections.abc import Callable

from . import generic, hf_opt, hf_resolve, onnx_file, vision_libs
from .generic import ModelOptions, PreparedModel, TracedModel
from .hf_resolve import ModelSpec, SourceKind

#: How each source kind is built; a kind not listed takes the generic driver.
PREPARE: dict[SourceKind, Callable[[ModelSpec, ModelOptions], PreparedModel]] = {
    SourceKind.OPT: hf_opt.prepare_opt,
    SourceKind.TORCHVISION: vision_libs.prepare_library,
    SourceKind.TIMM: vision_libs.prepare_library,
    SourceKind.ONNX_FILE: onnx_file.prepare,
}
#: How each source kind is traced for the TorchScript path.
TRACE: dict[SourceKind, Callable[..., TracedModel]] = {
    SourceKind.OPT: hf_opt.trace_opt_variant,
}


def prepare(model: str | ModelSpec, options: ModelOptions | None = None) -> PreparedModel:
    """Resolve MODEL and build it with its two input sets (see :func:`generic.prepare`)."""
    options = options or ModelOptions()
    spec = model if isinstance(model, ModelSpec) else hf_resolve.resolve(model)
    generic.check_variant(spec, options)
    return PREPARE.get(spec.kind, generic.prepare)(spec, options)


def trace(prepared: PreparedModel, *, check_trace: bool = False) -> TracedModel:
    """``torch.jit.trace`` of a prepared model, by the driver that built it."""
    return TRACE.get(prepared.spec.kind, generic.trace)(prepared, check_trace=check_trace)
