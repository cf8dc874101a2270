"""``harness port --dynamic``: the option, the FX export with ``Dim``s and its blocker, the
dimensions still dynamic in the linalg signature, numbers from one artifact at two shapes, and
the TorchScript trace that freezes a size.

The modules are our own (a dynamic ``view``, a broadcast, a size read as a Python int), ported
through :func:`harness.port.frontend.port_frontend` like a model; one tiny HF model goes through
``port_model`` at two sequence lengths.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import pytest
import torch

from harness.errors import ModelOptionError
from harness.frontends.names import FrontendName
from harness.models.dynamic import DimName, DynamicSpec, input_axes, parse_dynamic
from harness.models.hf_inputs import InputSet
from harness.port.frontend import port_frontend
from harness.port.options import PortOptions
from harness.port.progress import QUIET
from harness.port.record import PortOutcome, PortRecord, PortStage
from harness.port.subject import Subject

from support import harness

HERE = Path(__file__).resolve()


# --- the option --------------------------------------------------------------------------------

def test_named_dimensions_take_the_default_ranges():
    from harness.defaults import DYNAMIC_RANGES

    spec = parse_dynamic("batch,seq")
    assert [d.named for d in spec.dims] == [DimName.BATCH, DimName.SEQ]
    assert (spec.dims[1].low, spec.dims[1].high) == DYNAMIC_RANGES["seq"]
    assert str(parse_dynamic("seq=2..64")) == "seq=2..64"
    custom = parse_dynamic("input_features.2=100..3000").dims[0]
    assert custom.named is None and custom.axis == ("input_features", 2)


@pytest.mark.parametrize("text, says", [
    ("colour", "unknown dimension 'colour'"),
    ("seq=9..3", "1 <= MIN < MAX"),
    ("seq=0..3", "1 <= MIN < MAX"),
    ("seq=2..2", "torch.export refuses MIN == MAX"),  # was exit 3 from torch.export
    ("", "item '' is not a dimension"),  # --dynamic '' silently ran a static port
    ("seq,seq", "names seq twice"),
    ("x.1", "needs a range"),
    ("seq=2-9", "is not a dimension"),
])
def test_bad_values_are_one_paragraph_errors(text, says):
    with pytest.raises(ModelOptionError) as caught:
        parse_dynamic(text)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_an_empty_dynamic_value_is_refused_by_the_cli():
    from harness.cli import build_parser
    from harness.commands.models import _port_options
    from harness.port import PortOptions

    args = build_parser().parse_args(["port", "gpt2", "--dynamic", ""])
    with pytest.raises(ModelOptionError, match="is not a dimension"):
        _port_options(args, PortOptions())


def test_seq_is_capped_at_the_positions():
    assert parse_dynamic("seq=2..512").capped(128).get(DimName.SEQ).high == 127
    assert parse_dynamic("seq=2..64").capped(128).get(DimName.SEQ).high == 64
    assert parse_dynamic("batch").capped(128) == parse_dynamic("batch")


def test_the_cli_refuses_a_bad_value_before_building(tmp_path):
    done = harness("port", "gpt2", "--dynamic", "colour", "--out", tmp_path, timeout=120)
    assert done.returncode != 0 and "unknown dimension 'colour'" in done.stderr
    assert not list(tmp_path.iterdir())


# --- modules of our own -----------------------------------------------------------------------

class DynamicView(torch.nn.Module):
    def forward(self, x):
        return x.view(x.shape[0], -1) * 2.0


class Broadcast(torch.nn.Module):
    """[batch, seq, 4] times a [batch, seq] mask, plus the mean over seq ([batch, 1, 4])."""

    def forward(self, input_ids, attention_mask):
        return input_ids * attention_mask.unsqueeze(-1) + input_ids.mean(1, keepdim=True)


class Flatten(torch.nn.Module):
    """GPT-2's Conv1D flattening: [batch, seq, hidden] -> [batch * seq, hidden]."""

    def forward(self, input_ids):
        return input_ids.view(-1, input_ids.size(-1)) * 2.0


class PositionBias(torch.nn.Module):
    """MPT's position bias: a table's rows from max(0, rows - seq) on."""

    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.randn(1, 16, 4))

    def forward(self, input_ids):
        start = max(0, self.bias.size(1) - input_ids.shape[1])  # SYM-MAX
        return input_ids * 2.0, self.bias[:, start:] + 1.0


def _bias_line() -> int:
    source, start = inspect.getsourcelines(PositionBias)
    return start + next(i for i, line in enumerate(source) if "SYM-MAX" in line)


class SizeAsInt(torch.nn.Module):
    def forward(self, x):
        n = int(x.shape[1])  # SIZE-AS-INT: a Python int, frozen by trace, a guard for export
        return x.reshape(x.shape[0], n * x.shape[2]) + 1.0


def _line(marker: str) -> int:
    source, start = inspect.getsourcelines(SizeAsInt)
    return start + next(i for i, line in enumerate(source) if marker in line)


def _subject(module: torch.nn.Module, first: dict[str, torch.Tensor],
             second: dict[str, torch.Tensor], spec: DynamicSpec) -> Subject:
    names = tuple(first)
    subject = Subject(type(module).__name__.lower(), module.eval(),
                      InputSet(names, tuple(first.values()), "first"),
                      InputSet(names, tuple(second.values()), "second, other shapes"),
                      dynamic_axes=input_axes(spec, names, tuple(t.dim() for t in first.values())))

    def trace():
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            script = torch.jit.trace(module, subject.inputs.tensors, check_trace=False)
        subject.tracer_warnings[:] = [f"{w.filename}:{w.lineno}" for w in seen
                                      if w.category.__name__ == "TracerWarning"]
        return script, []

    subject.trace = trace
    return subject


def _port(subject: Subject, frontend: FrontendName, spec: DynamicSpec, tmp_path: Path):
    options = PortOptions(dynamic=spec, out=str(tmp_path))
    return port_frontend(subject, frontend, tmp_path / frontend.value, options, QUIET)


def test_fx_dynamic_view_runs_one_artifact_at_two_batches(tmp_path):
    spec = parse_dynamic("batch=1..16")
    subject = _subject(DynamicView(), {"x": torch.randn(2, 3, 4)}, {"x": torch.randn(4, 3, 4)}, spec)
    port = _port(subject, FrontendName.FX, spec, tmp_path)
    assert port.outcome is PortOutcome.VERIFIED, port.blockers
    assert port.dynamic.linalg == ["x.0 (batch)"] and port.dynamic.static == []
    assert "tensor<?x3x4xf32>" in port.signature
    shapes = [c.outputs[0].shape for c in port.numerics]
    assert shapes == [[2, 12], [4, 12]]  # one compiled module, two batch sizes


def test_fx_broadcast_keeps_seq_dynamic(tmp_path):
    spec = parse_dynamic("seq=2..64")
    first = {"input_ids": torch.randn(1, 8, 4), "attention_mask": torch.ones(1, 8)}
    second = {"input_ids": torch.randn(1, 13, 4),
              "attention_mask": torch.tensor([[1.0] * 10 + [0.0] * 3])}
    port = _port(_subject(Broadcast(), first, second, spec), FrontendName.FX, spec, tmp_path)
    assert port.dynamic.linalg == ["input_ids.1 (seq)", "attention_mask.1 (seq)"]
    assert port.outcome is PortOutcome.VERIFIED, port.blockers
    assert [c.outputs[0].shape for c in port.numerics] == [[1, 8, 4], [1, 13, 4]]


def test_fx_export_refuses_a_size_read_as_an_int(tmp_path):
    """The failing case whose blocker is the dynamic shape itself: torch.export's sentence and
    the Python line whose guard made the size a constant, not a traceback."""
    spec = parse_dynamic("x.1=2..64")
    subject = _subject(SizeAsInt(), {"x": torch.randn(2, 8, 4)}, {"x": torch.randn(2, 13, 4)}, spec)
    port = _port(subject, FrontendName.FX, spec, tmp_path)
    assert port.outcome is PortOutcome.FAILS and port.failed_stage is PortStage.EXPORT
    [blocker] = port.blockers
    assert blocker.message == "dynamic shape refused by torch.export: x_1 specialised to 8"
    assert blocker.location == f"{HERE}:{_line('SIZE-AS-INT')}"
    assert "Eq(" in blocker.explanation and "Traceback" not in blocker.explanation
    assert blocker.signature == "export: dynamic shape: x_N specialised to N"


def test_fx_flatten_of_two_dynamic_dims_fails_at_run_time(tmp_path):
    """A blocker met only with dynamic shapes, after export: with batch and seq both dynamic,
    torch-to-linalg collapses the wrong axes of view(-1, hidden)
    (lit_tests/pass/view-flatten-two-dynamic-dims-wrong-collapse.mlir), and the RefBackend's
    runtime verification stops the run; with seq alone dynamic it verifies."""
    first = {"input_ids": torch.randn(2, 8, 4)}
    both = parse_dynamic("batch,seq")
    port = _port(_subject(Flatten(), first, {"input_ids": torch.randn(4, 13, 4)}, both),
                 FrontendName.FX, both, tmp_path / "both")
    assert port.dynamic.linalg == ["input_ids.0 (batch)", "input_ids.1 (seq)"]
    assert port.outcome is PortOutcome.FAILS and port.failed_stage is PortStage.EXECUTION
    assert "out-of-bounds" in port.blockers[0].message
    seq = parse_dynamic("seq")
    port = _port(_subject(Flatten(), first, {"input_ids": torch.randn(2, 13, 4)}, seq),
                 FrontendName.FX, seq, tmp_path / "seq")
    assert port.outcome is PortOutcome.VERIFIED, port.blockers


def test_torchscript_flatten_of_two_dynamic_dims_gets_the_same_wrong_collapse(tmp_path):
    """The wrong collapse is torch-to-linalg's, not an importer's: the TorchScript path, with
    batch and seq imported as ``?``, lowers the view to the same cast to ``?x1x4`` and collapse
    ``[[0], [1, 2]]`` and the run aborts too (reports/upstream/view-flatten-two-dynamic-dims/)."""
    both = parse_dynamic("batch,seq")
    port = _port(_subject(Flatten(), {"input_ids": torch.randn(2, 8, 4)},
                          {"input_ids": torch.randn(4, 13, 4)}, both),
                 FrontendName.TORCHSCRIPT, both, tmp_path)
    assert port.dynamic.frozen == [] and port.dynamic.linalg == ["input_ids.0 (batch)",
                                                                 "input_ids.1 (seq)"]
    assert port.outcome is PortOutcome.FAILS and port.failed_stage is PortStage.EXECUTION
    [linalg] = tmp_path.glob("torchscript/*.torch-to-linalg.mlir")
    assert "tensor.collapse_shape %cast [[0], [1, 2]] : tensor<?x1x4xf32>" in linalg.read_text()


def test_fx_importer_refuses_the_sym_max_of_a_dynamic_size(tmp_path):
    """Another blocker only dynamic shapes meet: max(0, rows - seq) on a dynamic seq is a
    torch.sym_max node, which the wheel's fx_importer does not import (MPT stops there)."""
    spec = parse_dynamic("seq=2..64")
    subject = _subject(PositionBias(), {"input_ids": torch.randn(1, 8, 4)},
                       {"input_ids": torch.randn(1, 13, 4)}, spec)
    port = _port(subject, FrontendName.FX, spec, tmp_path)
    assert port.failed_stage is PortStage.IMPORT
    [blocker] = port.blockers
    assert blocker.signature == "import: fx_importer: unimplemented call_function sym_max"
    assert blocker.op == "sym_max" and blocker.location == f"{HERE}:{_bias_line()}"


def test_the_same_module_ports_statically(tmp_path):
    """Without --dynamic the module is fine: the blocker above is the dynamic shape's."""
    subject = _subject(SizeAsInt(), {"x": torch.randn(2, 8, 4)}, {"x": torch.randn(2, 8, 4)},
                       DynamicSpec())
    port = _port(subject, FrontendName.FX, DynamicSpec(), tmp_path)
    assert port.outcome is PortOutcome.VERIFIED and port.dynamic is None


def test_torchscript_names_the_line_that_froze_a_size(tmp_path):
    spec = parse_dynamic("x.1=2..64")
    subject = _subject(SizeAsInt(), {"x": torch.randn(2, 8, 4)}, {"x": torch.randn(2, 13, 4)}, spec)
    port = _port(subject, FrontendName.TORCHSCRIPT, spec, tmp_path)
    assert port.dynamic.frozen == [f"{HERE}:{_line('SIZE-AS-INT')}"]
    assert port.dynamic.static == ["x.1 (x.1) = 8"] and port.dynamic.linalg == []
    assert "tensor<2x8x4xf32>" in port.signature  # imported static: the trace froze seq


def test_torchscript_imports_a_dynamic_view_with_question_marks(tmp_path):
    spec = parse_dynamic("batch=1..16")
    subject = _subject(DynamicView(), {"x": torch.randn(2, 3, 4)}, {"x": torch.randn(4, 3, 4)}, spec)
    port = _port(subject, FrontendName.TORCHSCRIPT, spec, tmp_path)
    assert port.dynamic.frozen == []
    assert port.dynamic.contract == ["x.0 (batch)"]
    assert port.outcome is PortOutcome.VERIFIED, port.blockers
    assert port.dynamic.linalg == ["x.0 (batch)"]


# --- one small HF model, one artifact, two sequence lengths -----------------------------------

@pytest.fixture(scope="module")
def gpt2_record(tmp_path_factory):
    from harness.port import port_model

    return port_model("gpt2", PortOptions(frontends=(FrontendName.FX,),
                                          out=str(tmp_path_factory.mktemp("gpt2")),
                                          dynamic=parse_dynamic("seq")))


def test_tiny_gpt2_on_fx_verifies_at_two_sequence_lengths(gpt2_record):
    record = gpt2_record
    [(_, port)] = record.ports()
    assert port.outcome is PortOutcome.VERIFIED, port.blockers
    assert port.dynamic.asked == ["seq=2..127"]  # capped below tiny gpt2's 128 positions
    assert port.dynamic.linalg == ["input_ids.1 (seq)", "attention_mask.1 (seq)"]
    assert [c.outputs[0].shape[1] for c in port.numerics] == [8, 13]
    assert record.options["dynamic"] == "seq=2..512"
    again = PortRecord.read(Path(record.folder) / "record.json")
    assert again.ports()[0][1].dynamic == port.dynamic


def test_the_board_gets_a_dynamic_column_group(gpt2_record, tmp_path):
    from harness.sweep import board, records

    (tmp_path / "records").mkdir()
    gpt2_record.write(tmp_path / "records" / "gpt2.json")
    page = board.render(records.load(tmp_path))
    assert "<th class=\"dynamic\">dynamic: fx</th>" in page
    assert "? input_ids.1 (seq), attention_mask.1 (seq)" in page
    static = PortRecord.read(tmp_path / "records" / "gpt2.json")
    static.variants[0].ports[0].dynamic = None
    static.write(tmp_path / "records" / "gpt2.json")
    assert "dynamic: fx" not in board.render(records.load(tmp_path))


def test_sweep_refuses_a_bad_dynamic_before_any_port(tmp_path):
    done = harness("sweep", "gpt2", "--dynamic", "seq=5..2", "--out", tmp_path / "sweep", timeout=120)
    assert done.returncode != 0 and "1 <= MIN < MAX" in done.stderr
    assert not (tmp_path / "sweep" / "records").exists()


# --- the second set differs along every dynamic axis ------------------------------------------

def test_a_custom_axis_the_planner_sizes_differs_in_the_second_set():
    """``input_features.2`` (a spectrogram's frames) is made by the planner: the second set's
    frames differ, and the feature mask follows them."""
    from harness.defaults import DYNAMIC_CUSTOM_STEP
    from harness.models.dynamic import resized_plan
    from harness.models.hf_plan import MediaPlan, make_set

    plan = MediaPlan(names=("input_features", "input_features_mask"), features=(4, 30))
    spec = parse_dynamic("input_features.2=10..64")
    first = make_set(plan, 1, seed=0, padded=False)
    second = make_set(resized_plan(plan, spec), 1, seed=1, padded=True)
    frames = 30 + DYNAMIC_CUSTOM_STEP
    assert [list(t.shape) for t in first.tensors] == [[1, 4, 30], [1, 30]]
    assert [list(t.shape) for t in second.tensors] == [[1, 4, frames], [1, frames]]
    at_max = parse_dynamic("input_features.2=10..30")  # larger would leave the range
    assert resized_plan(plan, at_max).features == (4, 30 - DYNAMIC_CUSTOM_STEP)


def test_a_custom_axis_the_planner_does_not_size_is_resized_after():
    """An axis no planner size makes (a given input's): its slices repeat to the other size."""
    from harness.defaults import DYNAMIC_CUSTOM_STEP
    from harness.models.dynamic import differ_along

    spec = parse_dynamic("extra.1=2..64,seq")
    first = (torch.arange(6.0).reshape(1, 6), torch.zeros(1, 8, dtype=torch.int64))
    second = (first[0].clone(), torch.zeros(1, 13, dtype=torch.int64))
    tensors, said = differ_along(spec, ("extra", "input_ids"), first, second)
    grown = 6 + DYNAMIC_CUSTOM_STEP
    assert list(tensors[0].shape) == [1, grown]
    assert tensors[0][0, 6:].tolist() == [0.0, 1.0, 2.0, 3.0][:grown - 6]
    assert tensors[1] is second[1]  # seq already differs: left as it is
    assert said == [f"extra axis 1: 6 -> {grown} (extra.1; slices repeated)"]


def test_prepare_makes_the_second_set_differ_along_a_custom_token_axis():
    """Through the model's own preparation: ``input_ids.1`` is the token inputs' axis 1, so the
    second set is made at another length (the attention mask with it)."""
    from harness.defaults import DYNAMIC_CUSTOM_STEP
    from harness.models.generic import ModelOptions, prepare

    prepared = prepare("bert", ModelOptions(dynamic=parse_dynamic("input_ids.1=2..64")))
    first, second = prepared.inputs, prepared.second_inputs
    length = first.tensors[0].shape[1]
    assert [t.shape[1] for t in second.tensors] == [length + DYNAMIC_CUSTOM_STEP] * len(second.tensors)


def test_no_axis_is_called_static_when_no_signature_was_read():
    """A TorchScript port that crashed in torchscript-to-torch (falcon, gemma with --dynamic seq)
    reached no backend contract: nothing says an axis became static, so none is listed."""
    from harness.port.dynamic import dynamic_dims

    spec = parse_dynamic("seq")
    subject = _subject(Flatten(), {"input_ids": torch.randn(1, 8, 4)},
                       {"input_ids": torch.randn(1, 13, 4)}, spec)
    dims = dynamic_dims(subject, [], [])
    assert dims.asked == ["seq=2..512"] and dims.static == [] and dims.contract == []
