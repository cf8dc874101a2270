"""An output path that cannot be written (a file where a folder is wanted, a folder that refuses
new files) is exit 2 in one paragraph before anything runs: the siblings of `sweep --out`
(tests/sweep/test_sweep_processes.py). /sys refuses new entries even to root, so these hold whoever
runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import cli

OK = """func.func @f(%a: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {
  %0 = torch.aten.tanh %a : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>
  return %0 : !torch.vtensor<[2],f32>
}
"""


@pytest.fixture
def no_model_builds(monkeypatch):
    """The check must come before the model is resolved (and built: tens of seconds)."""
    from harness.models import hf_resolve

    def refuse(*args, **kwargs):
        raise AssertionError("the model was resolved before the output was checked")

    monkeypatch.setattr(hf_resolve, "resolve", refuse)


@pytest.mark.parametrize("where", ["file", "unwritable"])
def test_port_out_that_cannot_hold_a_folder(tmp_path, capsys, no_model_builds, where):
    a_file = tmp_path / "taken"
    a_file.write_text("")
    out = {"file": a_file, "unwritable": Path("/sys")}[where]
    assert cli.main(["port", "gpt2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"harness: error: cannot make the port's folder under {out}: ")
    assert len(err.splitlines()) == 1 and "--out" in err


def test_port_json_in_an_unwritable_folder(tmp_path, capsys, no_model_builds):
    assert cli.main(["port", "gpt2", "--json", "/sys/r.json", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("harness: error: cannot write the port record to /sys/r.json: /sys is "
                          "not a writable folder")
    assert len(err.splitlines()) == 1 and list(tmp_path.iterdir()) == []


def test_fix_output_in_an_unwritable_folder_fails_before_the_runs(tmp_path, capsys):
    src = tmp_path / "ok.mlir"
    src.write_text(OK)
    work = tmp_path / "work"
    work.mkdir()
    assert cli.main(["fix", str(src), "--pipeline", "torch-to-linalg", "-o", "/sys/fixed.mlir",
                     "--out", str(work)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("harness: error: cannot write the output IR /sys/fixed.mlir: ")
    assert len(err.splitlines()) == 1
    assert list(work.iterdir()) == []  # no work folder: nothing ran
