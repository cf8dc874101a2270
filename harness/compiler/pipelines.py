"""The pass pipelines of pipelines/pipelines.toml, as Python objects.

The TOML file is the single definition; lit_tests/lit.cfg.py reads the same file. A pipeline
name given by a user may be one of ours (``torch-to-linalg``), an upstream pipeline name
(``torch-backend-to-linalg-on-tensors-backend-pipeline``) or a full textual pipeline
(``builtin.module(canonicalize)``).

An entry is one registered pipeline (``pass``) or a list of passes (``passes``), and names the
tool that can run it (``driver``): torch-mlir-opt, or the wheel's MLIR Python bindings for the
RefBackend's lowering to LLVM, whose upstream passes torch-mlir-opt does not register.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from collections.abc import Mapping

from harness.enums import ParsableEnum
from harness.errors import HarnessError, PipelineConfigError

from .pipeline_text import check_pipeline

# The package's own copy, so an installed wheel has it: in the source tree a link to
# pipelines/pipelines.toml (the one definition, which lit reads too); a wheel holds the file.
PIPELINES_FILE = (Path(__file__).parent / "pipelines.toml").resolve()


def is_textual(spec: str) -> bool:
    """A textual pipeline or pass flags (``builtin.module(...)``, ``-canonicalize``), not a name."""
    spec = spec.strip()
    return "(" in spec or spec.startswith("-")


class Driver(ParsableEnum):
    """The tool that runs a pipeline."""

    TORCH_MLIR_OPT = "torch-mlir-opt"
    # The wheel's MLIR Python bindings, in a child process (python -m harness.execute.bindings_tool):
    # they register every upstream MLIR pass, which torch-mlir-opt does not.
    BINDINGS = "bindings"

    @classmethod
    def _error(cls) -> type[HarnessError]:
        return PipelineConfigError

    @classmethod
    def _what(cls) -> str:
        return "pipeline driver"


@dataclass(frozen=True)
class Pipeline:
    name: str
    pass_name: str  # the registered pipeline it runs; "" when it is a list of passes
    anchor: str = "builtin.module"
    input: str = ""
    output: str = ""
    defaults: Mapping[str, str] = field(default_factory=dict)
    passes: tuple[str, ...] = ()  # the passes, in order, when it is not one registered pipeline
    driver: Driver = Driver.TORCH_MLIR_OPT

    def textual(self, options: Mapping[str, object] | None = None) -> str:
        """The ``-pass-pipeline`` value, with options the caller set (unset ones omitted)."""
        if self.passes:
            if options:
                raise PipelineConfigError(
                    f"pipeline '{self.name}' is a list of passes and takes no options; write "
                    "a textual pipeline with the options inside it instead."
                )
            return f"{self.anchor}({','.join(self.passes)})"
        merged = {k: v for k, v in self.defaults.items() if v != ""}
        for key, value in (options or {}).items():
            if key not in self.defaults:
                known = ", ".join(sorted(self.defaults)) or "none"
                raise PipelineConfigError(
                    f"pipeline '{self.name}' has no option '{key}' (it accepts: {known}). "
                    f"Fix the option name, or add it to {PIPELINES_FILE} if torch-mlir-opt "
                    f"--help lists it for {self.pass_name}."
                )
            rendered = _render_option(value)
            if rendered != "":
                merged[key] = rendered
        if not merged:
            return f"{self.anchor}({self.pass_name})"
        opts = " ".join(f"{k}={v}" for k, v in merged.items())
        return f"{self.anchor}({self.pass_name}{{{opts}}})"


def _render_option(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class PipelineSet:
    pipelines: Mapping[str, Pipeline]
    output_types: Mapping[str, tuple[str, ...]]

    def get(self, name: str) -> Pipeline:
        if name in self.pipelines:
            return self.pipelines[name]
        for pipeline in self.pipelines.values():
            if pipeline.pass_name and pipeline.pass_name == name:
                return pipeline
        known = ", ".join(sorted(self.pipelines))
        raise PipelineConfigError(
            f"unknown pipeline '{name}'. Use one of {known}, an upstream pipeline name such as "
            "torch-backend-to-linalg-on-tensors-backend-pipeline, or a textual pipeline like "
            "'builtin.module(canonicalize)'."
        )

    def for_output_type(self, output_type: str) -> tuple[Pipeline, ...]:
        if output_type not in self.output_types:
            known = ", ".join(sorted(self.output_types))
            raise PipelineConfigError(
                f"unknown output type '{output_type}'; expected one of {known}."
            )
        return tuple(self.get(n) for n in self.output_types[output_type])

    def resolve(self, spec: str, options: Mapping[str, object] | None = None) -> str:
        """A textual pipeline for a name of ours, an upstream name, or textual input as given;
        pass flags (``-canonicalize -cse``, torch-mlir-opt's own usage) are returned as given."""
        spec = spec.strip()
        if is_textual(spec):
            if options:
                raise PipelineConfigError(
                    f"options cannot be added to the textual pipeline '{spec}'; write them "
                    "inside it instead."
                )
            return check_pipeline(spec)
        return self.get(spec).textual(options)


def load(path: Path = PIPELINES_FILE) -> PipelineSet:
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise PipelineConfigError(
            f"the pipeline definitions {path} are missing. The harness must be installed from "
            "its source tree (pip install -e .) so that pipelines/ sits beside harness/."
        ) from None
    except tomllib.TOMLDecodeError as e:
        raise PipelineConfigError(f"{path} is not valid TOML: {e}. Fix the file.") from None
    pipelines = {}
    for name, entry in data.get("pipeline", {}).items():
        if ("pass" in entry) == ("passes" in entry):
            raise PipelineConfigError(
                f"{path}: pipeline '{name}' has no 'pass' key (or has both 'pass' and 'passes'): "
                "give the registered pipeline as 'pass', or a list of passes as 'passes'."
            )
        passes = entry.get("passes", [])
        if not isinstance(passes, list) or not all(isinstance(p, str) and p for p in passes):
            raise PipelineConfigError(f"{path}: 'passes' of pipeline '{name}' must be a list of pass names.")
        pipelines[name] = Pipeline(
            name=name,
            pass_name=entry.get("pass", ""),
            anchor=entry.get("anchor", "builtin.module"),
            input=entry.get("input", ""),
            output=entry.get("output", ""),
            defaults={k: str(v) for k, v in entry.get("options", {}).items()},
            passes=tuple(passes),
            driver=Driver.parse(entry.get("driver", Driver.TORCH_MLIR_OPT.value)),
        )
    output_types = {k: tuple(v) for k, v in data.get("output-type", {}).items()}
    for kind, names in output_types.items():
        for n in names:
            if n not in pipelines:
                raise PipelineConfigError(
                    f"{path}: output type '{kind}' names unknown pipeline '{n}'."
                )
    return PipelineSet(pipelines=pipelines, output_types=output_types)


@lru_cache(maxsize=1)
def default() -> PipelineSet:
    return load()
