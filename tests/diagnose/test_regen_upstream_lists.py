"""Issue 44: tools/regen_upstream.py puts each bundle where the report's triage says (record.json's
"filing"), and writes README's known-upstream and unsupported-path rows from the bundle, never by
hand: a known one moves to known/ and is listed with the threads to add it to; one not on the
supported path keeps no folder and is listed with upstream's word; a new one stays.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from support import ROOT

ISSUE = """# title

## Reproduces through

TorchScript only: FX passes it, ONNX passes it.

- FX (torch.export + fx_importer): **passes** (fx config: 1 passes)
- TorchScript (torch.jit + this project's importer): **hits** (1 same failure)

## Upstream

Target repository: **llvm/torch-mlir**.

- llvm/torch-mlir#1896 (issue, closed when last checked: "RNN"; no plans to handle loops) URL1896
- llvm/torch-mlir#3029 (issue, open when last checked: "other") URL3029

## IR
"""


@pytest.fixture
def regen(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("regen_upstream", ROOT / "tools" / "regen_upstream.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "regen_upstream", module)  # its dataclasses look it up
    spec.loader.exec_module(module)
    bundles = tmp_path / "upstream"
    bundles.mkdir()
    (bundles / "README.md").write_text("# Upstream reports\n\n<!-- known-upstream:start -->\n"
                                       "| `known/old/` | stays | known #1 | x | y |\n"
                                       "<!-- known-upstream:end -->\n\ntail\n")
    monkeypatch.setattr(module, "BUNDLES", bundles)
    monkeypatch.setattr(module, "KNOWN", bundles / "known")
    monkeypatch.setattr(module, "README", bundles / "README.md")
    return module, bundles


def made(tmp_path: Path, name: str, **report) -> Path:
    folder = tmp_path / "made" / name
    folder.mkdir(parents=True)
    (folder / "issue.md").write_text(ISSUE)
    (folder / "record.json").write_text(json.dumps({"report": report}))
    return folder


def test_a_known_bundle_goes_to_known_with_its_threads(regen, tmp_path):
    module, bundles = regen
    folder = made(tmp_path, "int-mm", title="[torch-mlir] [known #4725] Int mm | dtype",
                  triage="known #4725", filing="comment on the known thread",
                  threads=["llvm/torch-mlir#4725", "llvm/torch-mlir#4762"])
    where, row = module.placement("int-mm", folder)
    assert where == "known"
    assert row == ("| `known/int-mm/` | Int mm \\| dtype | known #4725 | llvm/torch-mlir#4725, "
                   "llvm/torch-mlir#4762 | FX (torch.export + fx_importer): passes (fx config: 1 "
                   "passes); TorchScript (torch.jit + this project's importer): hits (1 same failure) |")
    (bundles / "int-mm").mkdir()  # made as a new issue before: it moves, no copy stays
    module.swap_in(folder, "int-mm", module.KNOWN)
    assert (bundles / "known" / "int-mm" / "record.json").is_file()
    assert not (bundles / "int-mm").exists() and module.bundle_dir("int-mm") == bundles / "known" / "int-mm"


def test_not_on_the_supported_path_is_listed_with_upstreams_word_only(regen, tmp_path):
    module, _ = regen
    folder = made(tmp_path, "prim-loop", title="[torch-mlir] [not on the supported path] Loop",
                  triage="not on the supported path", filing="not filed",
                  threads=["llvm/torch-mlir#1896"])
    where, row = module.placement("prim-loop", folder)
    assert where == "unsupported"
    assert row.startswith("| `prim-loop` | Loop | llvm/torch-mlir#1896 (issue, closed when last "
                          "checked: \"RNN\"; no plans to handle loops) URL1896 | FX")
    assert "#3029" not in row  # listed beside it in the bundle, not upstream's word


def test_by_design_keeps_no_folder_and_is_listed_with_upstreams_reason(regen, tmp_path):
    """Issue 44, second triage: a by-design limit is not a comment for a tracking thread (the
    size-1 abort's #2149 was the wrong one) but a README row with upstream's reason."""
    module, bundles = regen
    folder = made(tmp_path, "abort", title="[torch-mlir] [by design] Abort", triage="by design",
                  filing="not filed", threads=["llvm/torch-mlir#1896"])
    where, row = module.placement("abort", folder)
    assert where == "bydesign"
    assert row.startswith("| `abort` | Abort | llvm/torch-mlir#1896 (issue, closed when last checked")
    assert row.endswith("TorchScript (torch.jit + this project's importer): hits (1 same failure) |")
    module.write_list(module.BY_DESIGN_MARKERS, module.BY_DESIGN_HEAD, {"abort": row})
    listed = (bundles / "README.md").read_text().split("<!-- by-design:start -->\n", 1)[1]
    assert listed.splitlines()[2] == row and "abort" in module.expected_names()


def test_a_new_issue_stays_and_has_no_row(regen, tmp_path):
    module, _ = regen
    folder = made(tmp_path, "fold", title="[torch-mlir] Fold", triage="new", filing="new issue", threads=[])
    assert module.placement("fold", folder) == ("new", "")


def test_the_readme_list_is_merged_and_a_retriaged_row_leaves(regen):
    module, bundles = regen
    module.write_list(module.KNOWN_MARKERS, module.KNOWN_HEAD,
                      {"int-mm": "| `known/int-mm/` | a | known #4725 | b | c |"}, drop={"old"})
    text = (bundles / "README.md").read_text()
    body = text.split("<!-- known-upstream:start -->\n", 1)[1].split("<!-- known-upstream:end -->", 1)[0]
    assert body.splitlines() == [
        "| folder | what it is | triage | add it to | each frontend's result |",
        "|---|---|---|---|---|",
        "| `known/int-mm/` | a | known #4725 | b | c |"]
    assert text.endswith("<!-- known-upstream:end -->\n\ntail\n")


def test_a_hand_written_torch_mlir_issue_replaces_the_reports_and_keeps_it(regen, tmp_path, monkeypatch):
    """A torch-mlir bundle whose report needs this project's tools to follow (a pass the wheel's
    bindings run, not torch-mlir-opt) ships the hand-written issue.md and files of
    tools/upstream_torch_mlir/NAME; the report stays as torch-mlir-report.md, which the triage
    table reads, and a second overlay keeps it (it does not move the hand-written one there)."""
    module, bundles = regen
    hand = tmp_path / "upstream_torch_mlir"
    (hand / "tosa").mkdir(parents=True)
    (hand / "tosa" / "issue.md").write_text("# [torch-mlir] by hand\n\n## Reproduces through\n\n"
                                            "- FX (x): **hits**\n")
    (hand / "tosa" / "repro.py").write_text("raise SystemExit(1)\n")
    monkeypatch.setattr(module, "LLVM_ISSUES", tmp_path / "upstream_llvm")
    monkeypatch.setattr(module, "TORCH_MLIR_ISSUES", hand)
    monkeypatch.setattr(module, "HAND_WRITTEN", (tmp_path / "upstream_llvm", hand))
    bundle = bundles / "tosa"
    bundle.mkdir()
    (bundle / "issue.md").write_text(ISSUE)
    (bundle / "repro.py").write_text("the report's\n")
    for _ in range(2):
        module.overlay_llvm_issue("tosa")
        assert (bundle / "issue.md").read_text().startswith("# [torch-mlir] by hand")
        assert (bundle / "torch-mlir-report.md").read_text() == ISSUE
        assert (bundle / "repro.py").read_text() == "raise SystemExit(1)\n"
    row = module.table_row("tosa", {"tosa": True})
    assert row == "| `tosa/` | yes | no (TorchScript only) | none | llvm/torch-mlir | new |"
