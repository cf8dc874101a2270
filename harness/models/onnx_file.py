"""MODEL as an ONNX file (``harness port model.onnx``): a porting engineer handed a ``.onnx`` file.

- The input sets come from the graph's inputs: their element types, and their shapes with each
  symbolic dimension given a size (one whose name says batch takes ``--batch``, any other
  ``--seq``); ``--input NAME=SHAPE[:DTYPE]`` overrides an input. Floats are drawn from the seed's
  normal distribution (the second set from seed + 1); integers and bools are ones, as
  ``--input``'s are (an index input stays in range).
- The reference is onnxruntime: the "eager" module runs the file there. It has no float64 run
  (an ONNX file is typed), so the flat tolerance decides.
- Only the ONNX frontend takes it, and as it is (no export).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

import torch
from torch import nn

from harness.errors import ModelOptionError, OnnxMissingError

from .generic import ModelOptions, ModelSettings, PreparedModel
from .hf_config import Size
from .hf_inputs import InputSet
from .hf_media import parse_givens
from .hf_resolve import ModelSpec, Part

#: ONNX TensorProto element types the harness makes inputs of.
ELEMENT_TYPES = {1: torch.float32, 10: torch.float16, 11: torch.float64, 16: torch.bfloat16,
                 7: torch.int64, 6: torch.int32, 9: torch.bool}


class OnnxFileModule(nn.Module):
    """The ONNX file run by onnxruntime, as a module: the port's reference (eager) outputs."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self._session: Any = None

    def session(self) -> Any:
        """The file's onnxruntime session, made once; a file onnxruntime cannot load (a newer IR
        version than it takes, an op it lacks) is bad input, said before the port starts."""
        import onnxruntime as ort

        if self._session is None:
            options = ort.SessionOptions()
            options.log_severity_level = 3
            try:
                self._session = ort.InferenceSession(os.fspath(self.path), options,
                                                     providers=["CPUExecutionProvider"])
            except Exception as e:  # onnxruntime's Fail, InvalidGraph, NotImplemented
                said = " ".join(str(e).split())[:400]
                raise ModelOptionError(
                    f"onnxruntime {ort.__version__} cannot load the ONNX file {self.path}, which "
                    f"the port runs as its reference: {said}. Save it as onnxruntime takes it "
                    "(for an IR version it does not support: model.ir_version set to the one "
                    "it names, then onnx.save), or export it again with torch.onnx.export from "
                    "this torch.") from None
        return self._session

    def forward(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        session = self.session()
        feeds = {i.name: t.detach().cpu().numpy()
                 for i, t in zip(session.get_inputs(), tensors, strict=True)}
        return tuple(torch.from_numpy(o) for o in session.run(None, feeds))

    # A session cannot be copied: a float64 copy is not offered.
    def __deepcopy__(self, memo: dict[int, object]) -> NoReturn:
        raise TypeError("an ONNX file's module runs in onnxruntime at its own types")


def _graph_inputs(path: Path) -> list[tuple[str, torch.dtype, list[int | str]]]:
    try:
        import onnx
        import onnxruntime  # noqa: F401 (the reference runs there)
    except ImportError as e:
        raise OnnxMissingError("onnx and onnxruntime to read and run an ONNX file", e) from None

    try:
        model = onnx.load(os.fspath(path), load_external_data=False)
    except Exception as e:  # protobuf's DecodeError, an unreadable file
        raise ModelOptionError(f"cannot read the ONNX file {path}: {type(e).__name__}: "
                               f"{str(e)[:200]}. Give a model file torch.onnx.export (or another "
                               "ONNX exporter) wrote.") from None
    initializers = {i.name for i in model.graph.initializer}
    found = []
    for value in model.graph.input:
        if value.name in initializers:  # an old exporter lists weights as inputs too
            continue
        tensor = value.type.tensor_type
        dtype = ELEMENT_TYPES.get(tensor.elem_type)
        if dtype is None:
            raise ModelOptionError(
                f"the ONNX file's input {value.name!r} has element type {tensor.elem_type} "
                f"(onnx.TensorProto), which the harness does not make values of; give it with "
                f"--input {value.name}=SHAPE:DTYPE, or export the model with float, int or bool inputs.")
        dims: list[int | str] = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                                 for d in tensor.shape.dim]
        found.append((value.name, dtype, dims))
    return found


def _sized(dims: list[int | str], options: ModelOptions) -> tuple[int, ...]:
    return tuple(d if isinstance(d, int) and d > 0 else
                 (options.batch if "batch" in str(d).lower() else options.seq) for d in dims)


def prepare(spec: ModelSpec, options: ModelOptions) -> PreparedModel:
    assert spec.weights is not None
    path = spec.weights
    inputs = _graph_inputs(path)
    given = {g.name: g for g in parse_givens(options.inputs)}
    unknown = sorted(set(given) - {n for n, _, _ in inputs})
    if unknown:
        raise ModelOptionError(f"--input {unknown[0]}: the ONNX file has no input of that name; its "
                               f"inputs are {', '.join(n for n, _, _ in inputs)}.")

    def make(seed: int) -> tuple[torch.Tensor, ...]:
        generator = torch.Generator().manual_seed(seed)
        made = []
        for name, dtype, dims in inputs:
            if name in given:
                made.append(given[name].make(generator))
            elif dtype.is_floating_point:
                made.append(torch.randn(_sized(dims, options), generator=generator).to(dtype))
            else:
                made.append(torch.ones(_sized(dims, options), dtype=dtype))
        return tuple(made)

    names = tuple(n for n, _, _ in inputs)
    first, second = make(options.seed), make(options.seed + 1)
    module = OnnxFileModule(path).eval()
    module.session()  # a file onnxruntime refuses stops here, before any folder is made
    outputs = tuple(_output_names(path))
    described = "; ".join(f"{n} {str(t.dtype).removeprefix('torch.')}[{', '.join(map(str, t.shape))}]"
                          for n, t in zip(names, first, strict=True))
    settings = ModelSettings(
        model=spec.name, source=spec.kind, model_type="onnx", model_class="ONNX file",
        config_class="-", part=Part.FULL, size=Size.DEFAULT, overrides={}, sizes={},
        weights=f"the file's own ({path})", attn_implementation="", use_cache=False,
        call=f"runs {path.name} in onnxruntime (the reference)", inputs=described,
        first_inputs=f"seed {options.seed}", second_inputs=f"seed {options.seed + 1}",
        outputs=outputs)
    return PreparedModel(spec, options.variant, None, module, module,
                         InputSet(names, first, f"seed {options.seed}"),
                         InputSet(names, second, f"seed {options.seed + 1}"), settings,
                         program_file=path)


def _output_names(path: Path) -> list[str]:
    import onnx

    return [o.name for o in onnx.load(os.fspath(path), load_external_data=False).graph.output]
