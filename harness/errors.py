"""Typed errors that own their messages.

Every error a user can cause is one of these: the CLI prints ``str(error)`` as one paragraph
and exits non-zero; ``--verbose`` adds the traceback. Structured fields stay on the object so
tools and tests can inspect them without parsing the text.
"""

from __future__ import annotations


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


class ImportError_(HarnessError):
    """Base of importer errors (named with a trailing underscore: ImportError is a builtin)."""


class UnsupportedNodeError(ImportError_):
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


class UnsupportedTypeError(ImportError_):
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


class AnnotationError(ImportError_):
    """A ClassAnnotator call names a method or argument that does not exist, or is malformed."""


class PipelineFailure(HarnessError):
    """A pass pipeline failed; carries the diagnostics and the command that reproduces it."""

    exit_code = 1

    def __init__(self, description: str, diagnostics: str, command: str, input_path: str):
        self.description = description
        self.diagnostics = diagnostics
        self.command = command
        self.input_path = input_path
        super().__init__(
            f"{description} failed with the following diagnostics:\n{diagnostics.rstrip()}\n"
            f"The input IR was saved to {input_path}; reproduce with:\n  $ {command}\n"
            "Add '-mlir-print-ir-after-failure -mlir-disable-threading' to see the IR where it failed."
        )


class ReportError(HarnessError):
    """harness report cannot make a bundle: the input passes, or the bundle cannot be written."""

    def __init__(self, input_path: str, reason: str, message: str):
        self.input_path = input_path
        self.reason = reason  # passes | output | ...
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

    def __init__(self, settings, detail: str, warnings: tuple = ()):
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
            f"{settings.strict}, use_cache={settings.use_cache}): {first if len(first) <= 400 else first[:399] + '…'}{hint} "
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


class BuildError(BinaryError):
    """A named torch-mlir-opt build is unknown, not fetched yet, broken, or cannot be fetched or
    added (harness.compiler.builds); the message names the build and the command that fixes it."""
