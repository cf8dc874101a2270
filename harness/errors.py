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


class AliasedTensorError(ImportError_):
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
