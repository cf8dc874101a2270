"""Issue 44, the second triage: a maintainer reads issue.md without our tool, so it says nothing
of it (no `harness report`, no "the project's catalog", no `python -m harness` command); a cause
found by hand stands alone in Root cause (no "Not determined. Tried:" beside it, no miscompile
"At fault: undetermined" section); the TorchScript path is named as upstream's (off by default)
JIT importer's IR; every bundle states each frontend's result; and no TorchScript-only failure
that is not a crash, a miscompile or a pass that broke valid IR is proposed as a new torch-mlir
issue.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.diagnose.report.sections import PathOutcome, PathResult, Provenance, section_values, triage
from harness.frontends.names import PATHS, FrontendName

from support import ROOT

BUNDLES = ROOT / "reports" / "upstream"
INTERNAL = ("harness report", "project's catalog", "python -m harness", "given to `harness",
            "this project's importer", "the project's finding", "reports/upstream/README.md",
            "harness/knowledge/upstream.toml", "harness fix", "upstream.toml")


def _bundles() -> list[Path]:
    known = BUNDLES / "known"
    return sorted(p for p in [*BUNDLES.iterdir(), *(known.iterdir() if known.is_dir() else ())]
                  if (p / "issue.md").is_file())


def _section(issue: str, name: str) -> str:
    parts = issue.split(f"\n## {name}\n", 1)
    return parts[1].split("\n## ", 1)[0] if len(parts) == 2 else ""


def _report(folder: Path) -> dict:
    record = json.loads((folder / "record.json").read_text())
    return record.get("report") or record


def _found_in_iree(folder: Path) -> bool:
    """A bundle of a failure iree-compile met, written whole by hand (tools/upstream_iree/NAME):
    no harness report beside it, its frontends' results in issue.md's Where it was found."""
    return str(_report(folder).get("found_through", "")).startswith("iree-compile")


def test_a_cause_found_by_hand_stands_alone():
    verdict = triage("torch.aten.foo", "", "error: x")
    tried = "Not determined. Tried:\n\n- bisect: the first failing pass is `p`"
    root = section_values(verdict, tried, Provenance(finding="the fold reads a shape it has not"),
                          "input.mlir", str)["ROOT_CAUSE"]
    assert root == "the fold reads a shape it has not"
    found = section_values(verdict, "At fault: the RefBackend.", Provenance(finding="cause"), "in.mlir",
                           str)["ROOT_CAUSE"]
    assert found.startswith("cause\n\n") and "At fault: the RefBackend." in found
    assert "harness" not in found and "project" not in found


def test_the_torchscript_path_is_named_as_upstreams_jit_importer_output():
    label = PATHS[FrontendName.TORCHSCRIPT].label
    assert "this project" not in label
    assert "upstream's JIT IR importer, off by default since llvm/torch-mlir#3693" in label
    assert PathResult("torchscript", label, False, PathOutcome.HITS).short == "TorchScript"


BUNDLE_FOLDERS = _bundles()


@pytest.mark.parametrize("folder", BUNDLE_FOLDERS, ids=[p.name for p in BUNDLE_FOLDERS])
def test_each_shipped_issue_reads_without_the_tool(folder: Path):
    issue = (folder / "issue.md").read_text()
    for words in INTERNAL:
        assert words not in issue, f"{folder.name}: {words!r}"
    root = _section(issue, "Root cause")
    assert root.strip() and "Not determined" not in root, folder.name
    assert "## At fault: undetermined" not in issue
    if issue.startswith("# [mlir]"):  # an llvm-project report, written by hand: it names no file
        # that GitHub will not have (the harness's report kept beside it), says each of torch-mlir's
        # frontends' results itself, and says what duplicate search was run, when, with which queries
        assert "torch-mlir-report.md" not in issue, folder.name
        found = _section(issue, "Where it was found")
        for frontend in ("TorchScript (", "FX (", "ONNX ("):
            assert frontend in found, f"{folder.name}: {frontend}"
        searched = _section(issue, "Duplicates searched")
        assert "2026-" in searched and searched.count("`") >= 4, folder.name
        if _found_in_iree(folder):  # no harness report of an iree-compile failure: said above
            assert "iree-compile " in found and not (folder / "torch-mlir-report.md").exists()
            return
        issue = (folder / "torch-mlir-report.md").read_text()
    through = _section(issue, "Reproduces through")
    for frontend in ("- FX (", "- ONNX (", "- TorchScript ("):
        assert frontend in through, f"{folder.name}: {frontend}"


@pytest.mark.parametrize("folder", BUNDLE_FOLDERS, ids=[p.name for p in BUNDLE_FOLDERS])
def test_no_torchscript_only_failure_short_of_a_crash_is_proposed_as_new(folder: Path):
    report = _report(folder)
    if folder.parent.name == "known" or report.get("filing") != "new issue":
        return
    issue = (folder / "issue.md").read_text()
    if _found_in_iree(folder):  # an llvm-project report (asserted), not a torch-mlir one
        assert issue.startswith("# [mlir]") and report.get("target_repo") == "llvm/llvm-project"
        return
    story = (folder / "torch-mlir-report.md") if issue.startswith("# [mlir]") else folder / "issue.md"
    through = _section(story.read_text(), "Reproduces through").strip().splitlines()[0]
    kind = json.loads((folder / "record.json").read_text()).get("kind", "")
    crash = str(report.get("signature", "")).startswith(("crash", "assertion", "timeout"))
    # a pass that broke valid IR is a pass bug like a crash: filed whatever the path
    severe = crash or kind in ("miscompile", "runtime-failure") or report.get("broke_valid_ir") is True
    torch_mlir = "Target repository: **llvm/torch-mlir**" in issue
    assert not (through.startswith("TorchScript only") and torch_mlir and not severe), folder.name


def test_a_miscompile_with_a_cause_found_by_hand_has_no_undetermined_at_fault_section():
    """sdpa's blame finds no pass to fault (the bug is in one conversion); "At fault:
    undetermined" beside the stated cause read as a contradiction, so it is left out; a
    determined fault, or no cause given, keeps the section."""
    from types import SimpleNamespace

    from harness.diagnose.numerics.blame import Fault
    from harness.diagnose.report.miscompile_text import _at_fault
    from harness.diagnose.report.redact import Redactor

    def findings(fault: Fault, finding: str) -> SimpleNamespace:
        blame = SimpleNamespace(fault=fault, reason="no pass choice makes the values right", choices=())
        return SimpleNamespace(bisected=SimpleNamespace(blame=blame), provenance=Provenance(finding=finding),
                               fault=fault.value)

    off = Redactor.for_machine([], enabled=False)
    assert _at_fault(findings(Fault.UNDETERMINED, "the loop lowering ignores scale"), off) == ""
    kept = _at_fault(findings(Fault.UNDETERMINED, ""), off)
    assert kept.startswith("## At fault: undetermined\n\nNo pass choice makes the values right.")
    blamed = _at_fault(findings(Fault.REFBACKEND, "cause"), off)
    assert blamed.startswith("## At fault: RefBackend lowering")
