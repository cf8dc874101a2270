"""Issue 41: a frontend owns its program's payload type.

A ``Program`` is what every frontend shares (the name, the eager module, the examples) and one
payload of the frontend's own class; each frontend's table entry names that class, its maker or
conversion makes a Program carrying one, and its importer reads no other frontend's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from harness.errors import UsageError
from harness.frontends.base import FRONTENDS, MakeRequest, Payload, Program
from harness.frontends.fx import FxPayload
from harness.frontends.names import FrontendName
from harness.frontends.onnx import OnnxPayload
from harness.frontends.script import ScriptPayload


class Scale(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0 + 1.0


def test_a_program_has_no_field_of_one_frontend():
    assert [f.name for f in dataclasses.fields(Program)] == ["name", "eager", "examples", "payload"]


def test_each_frontend_declares_a_payload_class_of_its_own():
    classes = {name: entry.payload for name, entry in FRONTENDS.items()}
    assert classes == {FrontendName.TORCHSCRIPT: ScriptPayload, FrontendName.FX: FxPayload,
                       FrontendName.ONNX: OnnxPayload}
    for cls in classes.values():  # defined in the frontends package, one module each
        assert cls.__module__.startswith("harness.frontends.")
    assert len({cls.__module__ for cls in classes.values()}) == len(classes)


def _made(name: FrontendName, folder: Path) -> Program:
    """The program frontend ``name`` makes of ``Scale``, through its maker or its conversion."""
    entry = FRONTENDS[name]
    examples = (torch.ones(2, 3),)
    source = FRONTENDS[entry.source]
    assert source.maker is not None
    request = MakeRequest("Scale", Scale(), examples,
                          trace=lambda: (torch.jit.trace(Scale(), examples), []))
    program = source.maker.make(request).program
    if entry.conversion is not None:
        program = entry.conversion.convert(program, folder)
    return program


@pytest.mark.parametrize("name", list(FRONTENDS), ids=lambda n: n.value)
def test_each_frontend_makes_a_program_carrying_its_payload(name, tmp_path):
    program = _made(name, tmp_path)
    entry = FRONTENDS[name]
    assert type(program.payload) is entry.payload
    assert isinstance(program.payload, Payload)
    assert program.own(entry.payload) is program.payload
    others = {e.payload for e in FRONTENDS.values()} - {entry.payload}
    assert all(program.own(other) is None for other in others)
    imported = entry.import_program(program)
    assert imported.frontend is name
    assert str(imported.module.operation.attributes["torch.debug_module_name"]) == '"Scale"'


def test_what_a_payload_answers_it_answers_by_its_own_fields(tmp_path):
    """What the port reads (the script, the export, the file) comes through the payload, None
    where the frontend's program has no such thing."""
    script = _made(FrontendName.TORCHSCRIPT, tmp_path)
    fx = _made(FrontendName.FX, tmp_path)
    onnx = _made(FrontendName.ONNX, tmp_path)
    assert isinstance(script.script_module(), torch.jit.ScriptModule)
    assert script.export_program() is None and script.program_file() is None
    assert fx.script_module() is None and fx.program_file() is None
    assert isinstance(fx.export_program(), torch.export.ExportedProgram)
    # ONNX: the file, and the export it was written from (the port's missing-buffer explanation)
    assert onnx.program_file() == tmp_path / "Scale.onnx"
    assert onnx.export_program() is not None and onnx.script_module() is None
    bare = Program("Scale", Scale(), (torch.ones(2, 3),))
    assert (bare.script_module(), bare.export_program(), bare.program_file()) == (None, None, None)


def test_dynamic_axes_go_to_the_trace_only(tmp_path):
    """``--dynamic``: the port hands the axes to whatever program it made; a trace takes them,
    an export (which keeps its own dynamic sizes) stays as it is."""
    script = _made(FrontendName.TORCHSCRIPT, tmp_path)
    dynamic = script.with_dynamic_axes(((0,),))
    own = dynamic.own(ScriptPayload)
    assert own is not None and own.dynamic_axes == ((0,),)
    assert script.own(ScriptPayload).dynamic_axes == ()  # a new program: the first is unchanged
    fx = _made(FrontendName.FX, tmp_path)
    assert fx.with_dynamic_axes(((0,),)).payload is fx.payload
    bare = Program("Scale", Scale(), (torch.ones(2, 3),))
    assert bare.with_dynamic_axes(((0,),)) is bare


def test_a_frontend_refuses_another_frontends_program(tmp_path):
    """An importer reads only its own payload: a trace is not an .onnx file, nor an export a trace."""
    fx = _made(FrontendName.FX, tmp_path)
    with pytest.raises(UsageError, match="traced or scripted module"):
        FRONTENDS[FrontendName.TORCHSCRIPT].import_program(fx)
    with pytest.raises(UsageError, match=r"\.onnx file"):
        FRONTENDS[FrontendName.ONNX].import_program(fx)


def test_a_given_onnx_file_is_an_onnx_program(tmp_path):
    conversion = FRONTENDS[FrontendName.ONNX].conversion
    assert conversion is not None and conversion.given is not None
    path = tmp_path / "m.onnx"
    program = conversion.given(Program("m", None, (torch.ones(1),)), path)
    assert program.payload == OnnxPayload(path)
    assert program.program_file() == path and program.export_program() is None
