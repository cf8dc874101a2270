"""``harness report --module FILE.py:CLASS``: the report tries the FX path itself (issue 28).

The report starts from an IR file; with the PyTorch source it also runs torch.export and the
wheel's fx_importer (``frontends.fx`` through ``FRONTENDS``), then the FX stages to where the
report's pipeline ends, and hands the run to the report (``FxTry``), which compares it with its
own failure: the same op or the same crash is "both", a clean run "TorchScript only", another
failure is said as such. The report package has no torch; this flow does.

The file defines ``CLASS`` (built with no arguments) and its example inputs: a function
``example_inputs()`` in the file, or a static ``CLASS.example_inputs()``, returning a tensor or
a tuple of tensors.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from harness.compiler import pipelines as pipelines_module
from harness.compiler.targets import LINALG_LOWERING
from harness.compiler.pipelines import PipelineConfigError
from harness.compiler.stages import StageOptions, run_stages
from harness.diagnose.report.sections import FxTry
from harness.errors import ModelError, UsageError
from harness.frontends.base import FRONTENDS, Program
from harness.frontends.names import FrontendName

BACKEND_CONTRACT = "torch backend contract"
LINALG_CONTRACT = "linalg-on-tensors backend contract"


@dataclass(frozen=True)
class ModuleSource:
    """``FILE.py:CLASS`` loaded: the eager module and its example inputs."""

    spec: str
    module: torch.nn.Module
    examples: tuple[torch.Tensor, ...]
    name: str


def load_module(spec: str) -> ModuleSource:
    """``FILE.py:CLASS``: the file imported, CLASS built with no arguments (in eval mode), and
    its example inputs (``example_inputs()`` of the file, or of the class)."""
    file, sep, cls_name = spec.rpartition(":")
    if not sep or not file.endswith(".py") or not cls_name.isidentifier():
        raise UsageError(f"--module {spec}: expected FILE.py:CLASS (a Python file and the name "
                         "of the torch.nn.Module class it defines), e.g. --module model.py:Net.")
    path = Path(file)
    if not path.is_file():
        raise UsageError(f"--module {spec}: {file} is not a file; give the Python file that "
                         "defines the module, e.g. --module model.py:Net.")
    loader = importlib.util.spec_from_file_location(f"harness_module_{path.stem}", path)
    if loader is None or loader.loader is None:
        raise UsageError(f"--module {spec}: {file} cannot be imported as Python.")
    python = importlib.util.module_from_spec(loader)
    sys.modules[loader.name] = python  # dataclasses and pickling look the module up
    try:
        loader.loader.exec_module(python)
        cls = getattr(python, cls_name, None)
        if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module)):
            raise UsageError(f"--module {spec}: {file} defines no torch.nn.Module class "
                             f"'{cls_name}'; name the class whose forward the IR came from.")
        make = getattr(cls, "example_inputs", None) or getattr(python, "example_inputs", None)
        if not callable(make):
            raise UsageError(f"--module {spec}: no example inputs; define example_inputs() in "
                             f"{path.name} (or a static {cls_name}.example_inputs()) returning "
                             "the tensors forward takes.")
        module = cls().eval()
        given = make()
    except UsageError:
        raise
    except Exception as e:  # the user's code: name it, and say what failed
        raise ModelError(f"--module {spec}: building the module or its example inputs failed: "
                         f"{type(e).__name__}: {str(e).strip()[:300]}. Fix {path.name}; the "
                         "class is built with no arguments.") from e
    examples = (given,) if isinstance(given, torch.Tensor) else tuple(given)
    if not all(isinstance(t, torch.Tensor) for t in examples):
        raise UsageError(f"--module {spec}: example_inputs() must return a tensor or a tuple of "
                         "tensors.")
    return ModuleSource(spec, module, examples, cls_name)


def fx_stages(pipeline: str) -> tuple[str, ...]:
    """The FX stages that end where the report's ``pipeline`` ends: ``fx-to-torch`` for a
    pipeline to the backend contract, then the pipeline itself when it starts there (or after
    torch-to-linalg when it starts at linalg); the whole FX path to linalg for any other."""
    defined = pipelines_module.default()
    try:
        found = defined.get(pipeline.strip())
    except PipelineConfigError:
        return ("fx-to-torch", LINALG_LOWERING)
    name = next(n for n, p in defined.pipelines.items() if p is found)
    if found.output == BACKEND_CONTRACT:
        return ("fx-to-torch",)
    if found.input == BACKEND_CONTRACT:
        return ("fx-to-torch", name)
    if found.input == LINALG_CONTRACT:
        return ("fx-to-torch", LINALG_LOWERING, name)
    return ("fx-to-torch", LINALG_LOWERING)


def try_fx(spec: str, pipeline: str, *, opt: str | None = None, timeout_s: float | None = None,
           work_dir: str | Path | None = None,
           say: Callable[[str], None] = lambda _line: None) -> FxTry:
    """The FX path of ``spec`` (``FILE.py:CLASS``) through ``fx_stages(pipeline)``: where it
    stopped and that run, or why torch.export or the import failed."""
    source = load_module(spec)
    stages = fx_stages(pipeline)
    say(f"trying the FX path: torch.export of {spec}, then {' -> '.join(stages)}")
    try:
        imported = FRONTENDS[FrontendName.FX].import_program(
            Program(source.name, source.module, source.examples))
    except ModelError as e:
        return FxTry(spec, stages, import_error=str(e).split(". Use --importer")[0])
    with tempfile.TemporaryDirectory(prefix="harness-fx-", dir=work_dir) as folder:
        ir_path = Path(folder) / f"{source.name}.fx.mlir"
        ir_path.write_text(imported.module.operation.get_asm(enable_debug_info=True))
        options = StageOptions(opt=opt, timeout_s=timeout_s or StageOptions().timeout_s)
        results = run_stages(ir_path, stages, folder, stem=source.name, options=options)
    last = results[-1]
    return FxTry(spec, stages, "" if last.ok else last.name, last.record)
