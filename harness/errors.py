"""Typed errors that own their messages.

Every error a user can cause is one of these: the CLI prints ``str(error)`` as one paragraph
and exits non-zero; ``--verbose`` adds the traceback. Structured fields stay on the object so
tools and tests can inspect them without parsing the text.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

#: How the CLI starts the one paragraph of an error on stderr.
ERROR_PREFIX = "harness: error: "


class HarnessError(Exception):
    """Base of every user-facing error in the harness."""

    exit_code = 2


class PipelineConfigError(HarnessError):
    """The pipelines/ definition or a requested pipeline name/option is wrong."""


class BinaryError(HarnessError):
    """The torch-mlir-opt binary is missing, not executable or not torch-mlir-opt."""


class InputFileError(HarnessError):
    """An input file is missing, empty, unreadable or too large."""


class OutputError(HarnessError):
    """An output location cannot be written."""


class HarnessEnvironmentError(HarnessError):
    """The machine is not set up for the harness (an unwritable temp folder): neither the
    user's input nor a compiler result, so never a bug report."""


class OnnxMissingError(HarnessEnvironmentError):
    """A package of the [onnx] extra is not installed: the ONNX frontend and ONNX files need it."""

    def __init__(self, what: str, error: object):
        super().__init__(
            f"the ONNX frontend needs {what} ({error}). Install the [onnx] extra: pip install -e "
            "'.[onnx]' (onnx 1.23.2, onnxscript 0.7.2 for torch.onnx.export's dynamo exporter, "
            "onnxruntime 1.31.1), or leave onnx out of --frontend.")


class TorchScriptImportError(HarnessError):
    """Base of the TorchScript importer's errors."""


class UnsupportedNodeError(TorchScriptImportError):
    """A TorchScript node the importer cannot translate."""

    def __init__(self, kind: str, location: str, object_path: str, detail: str = ""):
        self.kind = kind
        self.location = location
        self.object_path = object_path
        self.detail = detail
        where = f" at {location}" if location else ""
        extra = f" {detail}" if detail else ""
        super().__init__(
            f"cannot import TorchScript node '{kind}'{where} in {object_path}:{extra} "
            "The importer has no translation for it. Rewrite that line of the model so it "
            "traces to supported ops, or report the node kind to the harness maintainers."
        )


class UnsupportedTypeError(TorchScriptImportError):
    """A TorchScript type the importer cannot express in the torch dialect."""

    def __init__(self, type_str: str, context: str, supported: str = ""):
        self.type_str = type_str
        self.context = context
        self.supported = supported
        hint = f" Supported: {supported}." if supported else ""
        super().__init__(
            f"cannot import TorchScript type '{type_str}' ({context}).{hint} "
            "Change the annotation or the value to one of the supported types."
        )


class MetaTensorError(TorchScriptImportError):
    """A tensor on the meta device has a shape but no values: nothing to write into the IR."""

    def __init__(self, name: str, context: str):
        self.name = name
        super().__init__(
            f"cannot import tensor '{name}' ({context}): it is on the meta device, so it has a "
            "shape but no values to write into the IR. Materialize the model's weights first "
            "(model.to_empty(device='cpu') then initialize them, or load a state dict), then "
            "trace and import it."
        )


class AnnotationError(TorchScriptImportError):
    """A ClassAnnotator call names a method or argument that does not exist, or is malformed."""


class PipelineFailure(HarnessError):
    """A pass pipeline failed; carries the diagnostics and the command that reproduces it."""

    exit_code = 1

    def __init__(self, description: str, diagnostics: str, command: str, input_path: str,
                 next_steps: list[str] | tuple[str, ...] = ()):
        self.description = description
        self.diagnostics = diagnostics
        self.command = command
        self.input_path = input_path
        self.next_steps = list(next_steps)
        steps = "".join(f"  $ {step}\n" for step in self.next_steps)
        super().__init__(
            f"{description} failed with the following diagnostics:\n{diagnostics.rstrip()}\n"
            f"The input IR was saved to {input_path}; reproduce with:\n  $ {command}\n"
            + (f"The Python line and the fix, the failing pass, a minimal IR file and an upstream "
               f"bug report:\n{steps}" if steps else
               "Add '-mlir-print-ir-after-failure -mlir-disable-threading' to see the IR where it failed.")
        )


class ReportError(HarnessError):
    """harness report makes no bundle: the input passes, is not valid IR (no compiler bug), or
    the bundle cannot be written."""

    def __init__(self, input_path: str, reason: Enum, message: str):
        self.input_path = input_path
        self.reason = reason  # tools.report.Refusal: passes | invalid-input | output
        super().__init__(message)


class NothingToReduceError(HarnessError):
    """reduce was given an input that passes: there is no failure to keep while shrinking it."""

    def __init__(self, input_path: str, pipeline: str):
        self.input_path = input_path
        self.pipeline = pipeline
        super().__init__(
            f"nothing to reduce: {input_path} passes {pipeline}. reduce shrinks a file while it "
            "keeps failing the same way; give it a file and the pipeline it fails (the "
            "'reproduce:' line of 'harness opt' or 'harness run' names both)."
        )


class UsageError(HarnessError):
    """A command or function was called wrongly: an unknown name or option value, a missing or
    malformed argument. The message says what is accepted."""


class ModelError(HarnessError):
    """A model cannot be built, traced or exported as asked: an unknown model or config field,
    a bad value, or a model the frontends cannot take."""


class ModelConfigError(ModelError):
    """A preset, config override, attention choice or input shape the driver cannot build."""


class TraceError(ModelError):
    """``torch.jit.trace`` failed on the model; carries the settings and torch's message."""

    def __init__(self, settings: Any, detail: str, warnings: tuple[object, ...] = ()):
        # settings: models.opt.TraceSettings, warnings: its CollectedWarnings (errors.py is a
        # leaf: it names no model types)
        self.settings = settings
        self.detail = detail
        self.warnings = warnings
        first = " ".join(detail.strip().splitlines()[-1].split()) if detail.strip() else "(no message)"
        hints = []
        if settings.use_cache:
            hints.append("with use_cache=True OPT returns a DynamicCache, which the tracer "
                         "cannot output")
        if settings.mode == "direct" and settings.strict:
            hints.append("the HF module returns a dict, which needs strict=False")
        hint = f" Likely cause: {'; '.join(hints)}." if hints else ""
        super().__init__(
            f"torch.jit.trace failed on the OPT model ({settings.mode} mode, strict="
            f"{settings.strict}, use_cache={settings.use_cache}): "
            f"{first if len(first) <= 400 else first[:399] + '…'}{hint} "
            "The default trace settings (wrapper mode) avoid both known causes."
        )


class UnsupportedOPTConfigError(ModelError):
    """The HF model uses a config branch the fixed OPT does not implement."""

    def __init__(self, field: str, value: object, supported: str):
        self.field = field
        self.value = value
        self.supported = supported
        super().__init__(
            f"FixedOPT does not support OPTConfig.{field} = {value!r}; it supports {supported}. "
            "The fixed model implements one static path (decoder-only, pre-layer-norm, no cache, "
            "inference); trace the stock HF model for this config, or change the field."
        )


class UnknownModelError(ModelError):
    """A model name the catalog does not know."""

    def __init__(self, name: str, known: list[str]):
        self.name = name
        super().__init__(
            f"no model named '{name}'. Known names: {', '.join(known)}. "
            "Run 'harness emit --list' to see what each one is."
        )


class UnknownModelTypeError(UsageError):
    """MODEL is neither a transformers model type, a directory with config.json, nor 'opt'."""

    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        close = f" Did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(
            f"unknown model '{name}': not a transformers model type or class, not a directory "
            f"with a config.json, and not 'opt'.{close} Run 'harness port --list' to list the "
            "valid model types (and torchvision:NAME, timm:NAME); a directory must contain a "
            "config.json (and may hold weights)."
        )


class ModelDirectoryError(ModelError):
    """A model directory is missing, has no usable config.json, or its weights do not load."""

    def __init__(self, path: str, reason: str):
        self.path = path
        self.reason = reason
        super().__init__(
            f"cannot use model directory {path}: {reason}. A model directory holds a "
            "config.json (as save_pretrained writes it) and optionally model.safetensors or "
            "pytorch_model.bin; it is read locally, never from a hub."
        )


class ConfigOverrideError(ModelError):
    """A ``--set FIELD=VALUE`` names no config field, or its value has the wrong type."""

    def __init__(self, model: str, field: str, value: object, reason: str):
        self.model = model
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(
            f"bad config value {field}={value!r} for model '{model}': {reason}. Fix or drop "
            f"that --set FIELD=VALUE."
        )


class ModelOptionError(UsageError):
    """A model option (size, part, batch, sequence length) has a value the driver cannot use."""


#: What a refused model's user can do next (never "see the list", which lists the refused type).
UNSUPPORTED_REMEDY = ("Give the inputs the planner cannot make by hand with --input "
                      "NAME=SHAPE[:DTYPE] (repeatable), or port a part of the model or a "
                      "transformers class whose forward takes tensors the planner makes.")


class UnsupportedModelError(ModelError):
    """A model type resolves but the driver cannot build or drive it (no token inputs, a base
    model that does not build from its config, ...)."""

    PREFIX = "cannot drive model"  # the message's start (a sweep reads it from a port's log)

    def __init__(self, model: str, reason: str, remedy: str = ""):
        self.model = model
        self.reason = reason
        self.remedy = remedy or UNSUPPORTED_REMEDY  # a refusal retried keeps its own remedy
        super().__init__(f"{self.PREFIX} '{model}': {reason}. {self.remedy}")


class VisionLibraryError(ModelError):
    """torchvision or timm is missing, or does not fit the installed torch (``torchvision:NAME``,
    ``timm:NAME``)."""

    def __init__(self, model: str, reason: str, remedy: str):
        self.model = model
        self.reason = reason
        super().__init__(f"cannot build model '{model}': {reason}. {remedy}")


class ModelTraceError(ModelError):
    """``torch.jit.trace`` refused a model; carries the model and torch's message."""

    exit_code = 1

    def __init__(self, model: str, detail: str, settings: str = ""):
        self.model = model
        self.detail = detail
        short = " ".join(detail.split())
        short = short if len(short) <= 400 else short[:397] + "..."
        super().__init__(
            f"torch.jit.trace failed on model '{model}'{' (' + settings + ')' if settings else ''}: "
            f"{short} Try the FX frontend (torch.export), or change the config with --set."
        )


# --- Numerics (harness/execute) ---------------------------------------------------------------

class UnsupportedDTypeError(HarnessError):
    """An element type the numerics path cannot represent (bf16 without ml_dtypes, a quantized type)."""

    def __init__(self, dtype: str, context: str, supported: str):
        self.dtype = dtype
        self.context = context
        self.supported = supported
        super().__init__(
            f"element type '{dtype}' ({context}) is not supported by the numerics check. "
            f"Supported: {supported}. Change the model's dtype, or check a function whose "
            "arguments and results use supported types."
        )


class InputsError(UsageError):
    """Inputs for a function (an .npz file, or arrays passed in) do not match its signature."""

    def __init__(self, source: str, problem: str, signature: str = ""):
        self.source = source
        self.problem = problem
        self.signature = signature
        expected = f" The function expects {signature}." if signature else ""
        super().__init__(
            f"the inputs from {source} do not fit: {problem}.{expected} Write the arrays in "
            "argument order (np.savez(FILE, a0, a1, ...) or named arg0, arg1, ...), or use "
            "--random-inputs."
        )


class UnsupportedOpsError(HarnessError):
    """The reference evaluator has no eager counterpart for some ops: they are named, never guessed."""

    exit_code = 1

    def __init__(self, function: str, ops: dict[str, int], reasons: dict[str, str] | None = None):
        self.function = function
        self.ops = dict(ops)  # op name -> how many times it occurs
        self.reasons = dict(reasons or {})  # op name -> why no evaluator can run it, when known
        listed = ", ".join(f"{name} (x{n})" if n > 1 else name for name, n in sorted(self.ops.items()))
        why = "".join(f" {name}: {text}" for name, text in sorted(self.reasons.items()))
        remedy = ("" if set(self.reasons) >= set(self.ops) else
                  " Check the IR at the torch backend contract (after torchscript-to-torch or "
                  "fx-to-torch), where these are rarer, or add the op to harness/execute/ref_ops.py.")
        super().__init__(
            f"the reference evaluator cannot evaluate {len(self.ops)} kind(s) of op in "
            f"@{function}: {listed}.{why}{remedy}"
        )


class ReferenceEvaluationError(HarnessError):
    """An op raised when run in eager PyTorch on the reference evaluator's values."""

    exit_code = 1

    def __init__(self, op: str, location: str, message: str):
        self.op = op
        self.location = location
        self.message = message
        super().__init__(
            f"the reference evaluator could not run {op} at {location or 'an unknown location'} "
            f"in eager PyTorch: {message}. Either the IR does not mean what eager computes for "
            "these inputs (check the input shapes and values), or the evaluator passes the "
            "operands wrongly (report it with the IR)."
        )


class NoMiscompileError(HarnessError):
    """A numerics bisection or reduction was given a file whose lowered values are right (or
    that does not lower at all): there are no wrong numbers to localize or keep."""

    def __init__(self, input_path: str, pipeline: str, outcome: str, detail: str = ""):
        self.input_path = input_path
        self.pipeline = pipeline
        self.outcome = outcome
        self.detail = detail
        if outcome == "verified":
            what = (f"{input_path} through {pipeline} and the RefBackend gives the reference's "
                    "values")
            remedy = ("Check the inputs (--inputs FILE.npz, the ones 'harness check' flagged) "
                      "and the --tolerance.")
        else:
            what = f"{input_path} does not get through {pipeline} and the RefBackend ({detail})"
            remedy = ("That is a failure, not wrong numbers: 'harness bisect' and 'harness reduce' "
                      "without --numerics take it.")
        super().__init__(f"no miscompile: {what}. {remedy}")


class ElidedWeightsError(UsageError):
    """A dense_resource literal whose blob is not in the IR (written with weights elided)."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(
            f"the weight dense_resource<{name}> has no data in the IR: the file was written with "
            "its weights elided. Write it with the weights kept (harness emit/opt "
            "--keep-weights), then run the pipelines on that file."
        )


class BuildError(BinaryError):
    """A named torch-mlir-opt build is unknown, not fetched yet, broken, or cannot be fetched or
    added (harness.compiler.builds); the message names the build and the command that fixes it."""


class AliasedTensorError(TorchScriptImportError):
    """Two tensors of a module share storage; the object graph would lose the aliasing."""

    def __init__(self, path: str, other_path: str, root: str):
        self.path = path
        self.other_path = other_path
        self.root = root
        super().__init__(
            "Unhandled tensor that shares storage with another tensor.\n"
            f"Found at path '{path}' from root object '{root}'; it shares storage with "
            f"'{other_path}'. torch-mlir's object graph gives every tensor its own storage, so "
            "the aliasing would be lost. Keep one of them as the attribute and compute the other "
            "from it in forward (a view or slice), or .clone() it if independent copies are meant."
        )
