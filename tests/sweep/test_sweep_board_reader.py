"""The board as a porting engineer reads it, on small
sweep folders written from the port's own dataclasses (tests/support/sweep_fakes.py): the page is the
subject, so no port runs here, except the one real refusal that makes an ``unsupported`` record."""

from __future__ import annotations

import html
import re

import pytest

from harness.errors import UnsupportedModelError
from harness.models import hf_inputs
from harness.models.modality import Modality, modality_of
from harness.sweep import board, records
from harness.sweep.records import RunFailure

from support import harness
from support.browser import chromium
from support.sweep_fakes import blocker, port, record, write
from test_sweep_board import parse

FNET = "/v/lib/python3.12/site-packages/transformers/models/fnet/modeling_fnet.py"
LONG = "y" * 3000  # one word no line break can split


def fnet_ports():
    """fnet as its real ports stop: TorchScript at torch-to-linalg (the op's own line 170, the
    model's call at 191, MLIR's location in the message), FX at the import of the same op."""
    # The op and message as the real TorchScript port of fnet records them (an op the torch
    # dialect does not define is a torch.operator).
    ts = blocker('torch.operator "aten.fft_fftn"', location=f"{FNET}:170", called_from=f"{FNET}:191",
                 message="failed to legalize operation 'torch.operator' that was explicitly "
                         'marked illegal: %89 = "torch.operator"(%87) <{name = "aten.fft_fftn"}> '
                         f'loc(callsite("aten::fft_fftn"("{FNET}":170:0) at callsite("{FNET}":191:0 '
                         f'at "{FNET}":238:0)))')
    fx = blocker("aten.fft_fftn", stage="fx-to-torch", signature=f"fx-to-torch: aten.fft_fftn {LONG}",
                 message=f"unsupported op aten.fft_fftn at loc(\"{FNET}\":170:0) {LONG}")
    return (port("torchscript", "fails", stage="torch-to-linalg", blockers=[ts]),
            port("fx", "fails", stage="fx-to-torch", blockers=[fx]))


@pytest.fixture
def sweep_dir(tmp_path):
    refusal = ("cannot drive model 'convnext': its base model reads 'pixel_values' of shape "
               "(batch_size, num_channels, height, width), which the input planner cannot make. "
               + "Give it by hand with --input pixel_values=SHAPE[:DTYPE]. " * 8 + LONG)
    return write(tmp_path / "s",
                 record("fnet", "text", *fnet_ports()),
                 record("gpt2", "text", port("torchscript"), port("fx")),
                 record("vit", "vision", port("torchscript"), port("fx", "numerics-mismatch")),
                 record("wav2vec2", "audio", port("torchscript", "lowered"), port("fx")),
                 record("llava", "multimodal", port("torchscript", "fails", stage="trace"), port("fx")),
                 RunFailure("convnext", "unsupported", 3.0, 2, refusal, "logs/convnext.log"),
                 RunFailure("hangs", "timeout", 900.0, None, "no result after 900 s", "logs/hangs.log"))


def test_a_model_the_harness_cannot_drive_is_unsupported_with_its_whole_reason(sweep_dir):
    page = board.render(records.load(sweep_dir))
    rows = {r["attrs"]["data-model"]: r["cells"] for r in parse(page)}
    assert rows["convnext"] == ["unsupported"] and rows["hangs"] == ["crashed"]
    cell = re.search(r'data-status="unsupported".*?</td>', page, re.S).group(0)
    assert LONG in cell and "--input pixel_values=SHAPE" in cell  # not cut off
    # Its colour is light: the darkest cell stays for a crash.
    assert "background:#e0e0e0" in cell and "background:#424242" not in cell


def test_a_cell_where_is_the_blockers_own_line_not_the_callers(sweep_dir):
    page = board.render(records.load(sweep_dir))
    where = re.findall(r'data-where="([^"]*)"', page)
    assert where == ["transformers/models/fnet/modeling_fnet.py:170"]
    assert "called from <span class=\"mono\">transformers/models/fnet/modeling_fnet.py:191" in page


def test_one_cause_is_one_row_however_the_op_is_spelled(sweep_dir):
    page = board.render(records.load(sweep_dir))
    rows = parse(page, "blockers")
    causes = [r["attrs"]["data-cause"] for r in rows]
    assert causes.count("aten.fft_fftn") == 1 and "torch.aten.fft_fftn" not in causes
    assert 'data-count="2">2: fnet (fx), fnet (torchscript)' in page
    assert board.op_name("aten::fft_fftn") == board.op_name("torch.aten.fft_fftn") == \
        board.op_name('torch.operator "aten.fft_fftn"') == "aten.fft_fftn"
    assert board.op_name("torch.operator") == "torch.operator"  # an op of the torch dialect stays


def test_no_raw_mlir_location_text(sweep_dir):
    page = board.render(records.load(sweep_dir))
    assert "loc(" not in page
    assert '<{name = "aten.fft_fftn"}> at transformers/models/fnet/modeling_fnet.py:170' in \
        html.unescape(page)
    assert board._plain('x loc(unknown) y loc("a\\"b.py":3:1) z') == 'x y at a"b.py:3 z'


def test_rows_are_grouped_by_modality_with_counts_per_status_and_frontend(sweep_dir):
    page = board.render(records.load(sweep_dir))
    groups = re.findall(r'<tbody data-modality="([^"]+)"', page)
    assert groups == ["text", "vision", "audio", "multimodal", "unknown"]
    order = [r["attrs"]["data-model"] for r in parse(page)]
    assert order == ["fnet", "gpt2", "vit", "wav2vec2", "llava", "convnext", "hangs"]
    text = re.search(r'<tr class="modality" data-modality="text">.*?</tr>', page).group(0)
    ts = re.search(r'data-frontend="torchscript">(.*?)</td>', text).group(1)
    counts = re.findall(r'data-count-status="([^"]+)">.*?</span> (\d+)', ts)
    assert counts == [("verified", "1"), ("fails", "1")]
    none = re.search(r'data-modality="unknown">.*?</tr>', page).group(0)
    assert 'data-count-status="unsupported"' in none and 'data-count-status="crashed"' in none


def test_modality_comes_from_the_traced_inputs():
    assert modality_of(["input_ids", "attention_mask"]) is Modality.TEXT
    assert modality_of(["pixel_values"]) is Modality.VISION
    assert modality_of(["input_values", "attention_mask"]) is Modality.AUDIO
    assert modality_of(["input_features", "decoder_input_ids"]) is Modality.MULTIMODAL
    assert modality_of(["input_ids", "pixel_values", "attention_mask"]) is Modality.MULTIMODAL
    assert modality_of(["hidden_states", "grid_thw"]) is Modality.VISION  # a flat-patch tower
    assert modality_of([]) is Modality.UNKNOWN


def test_nothing_overflows_at_1400_px(sweep_dir, tmp_path):
    page = board.write(records.load(sweep_dir))
    # The page has no script: a copy gets one that writes the widths into the title.
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace(
        "</body>", "<script>document.title = 'W' + document.documentElement.scrollWidth + 'x' + "
                   "window.innerWidth;</script></body>"))
    dom = chromium(probe, tmp_path, "--window-size=1400,900", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    width, window = map(int, re.search(r"<title>W(\d+)x(\d+)</title>", dom.stdout).groups())
    assert window == 1400 and width <= window, f"the page is {width} px wide at {window} px"
    shot = tmp_path / "board.png"
    proc = chromium(page, tmp_path, f"--screenshot={shot}", "--window-size=1400,900")
    assert proc.returncode == 0 and shot.read_bytes()[:4] == b"\x89PNG"


def test_the_refusal_hint_does_not_send_the_user_to_the_list_that_lists_the_model():
    said = str(UnsupportedModelError("clip", "its config has no usable vocab_size (None)"))
    assert "--list" not in said and "--input NAME=SHAPE" in said
    with pytest.raises(UnsupportedModelError) as refused:
        hf_inputs.plan_inputs("convnext", ("pixel_values", "output_hidden_states"), object(),
                              decoder_only=False)
    assert "--list" not in str(refused.value) and "--input" in str(refused.value)


def test_a_real_refusal_becomes_an_unsupported_record(tmp_path):
    """bark's base model names no inputs: the port refuses it, and the sweep keeps why."""
    out = tmp_path / "s"
    proc = harness("--no-progress", "sweep", "bark", "--out", str(out), "--no-numerics", timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "unsupported: cannot drive model 'bark'" in proc.stdout
    failure = records.read_result(out / "records" / "bark.json")
    assert isinstance(failure, RunFailure) and str(failure.reason) == "unsupported"
    assert failure.detail.startswith("cannot drive model 'bark': BarkModel.forward names no inputs")
    page = (out / "index.html").read_text()
    assert [r["cells"] for r in parse(page)] == [["unsupported"]]
