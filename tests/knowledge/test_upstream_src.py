"""Issue 44: a report triages against a torch-mlir checkout (``--torch-mlir-src``): which of
upstream's e2e configs already expect a blocked test to fail, with upstream's comment, and
which commit introduced the root cause's source line (``git log -S``) and last changed it
(``git blame``). Each test makes a small git repository of its own, shaped like torch-mlir's.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.errors import InputFileError
from harness.knowledge.upstream_src import (
    COMMON_XFAILS_FILE,
    XFAIL_SETS_FILE,
    SourceLookup,
    UpstreamSource,
    read_sets,
    triage_source,
)
from support import ROOT, harness

COMMON = '''\
from torch_mlir._version import torch_version_for_comparison, version

COMMON_TORCH_MLIR_LOWERING_XFAILS = {
    "NativeGroupNormBackwardModule_basic",
    "TimeOutModule_basic",  # This test is expected to time out
}
'''

XFAILS = '''\
from torch_mlir._version import torch_version_for_comparison, version
from torch_mlir_e2e_test.test_suite import COMMON_TORCH_MLIR_LOWERING_XFAILS

print("this file is never run")
raise SystemExit("this file is never run")

LINALG_XFAIL_SET = COMMON_TORCH_MLIR_LOWERING_XFAILS | {
    # unimplemented: only 2D convolutions supported:
    "ConvolutionBackwardModule3DStatic_basic",
    # TorchScript importer fails: required keyword attribute
    "EmbeddingBagA_basic",
    "EmbeddingBagB_basic",

    "Uncommented_basic",
}

if torch_version_for_comparison() < version.parse("2.5.0.dev"):
    LINALG_XFAIL_SET = LINALG_XFAIL_SET | {
        # only for old torch
        "OldTorchOnly_basic",
    }

if torch_version_for_comparison() >= version.parse("2.13.0"):
    LINALG_XFAIL_SET = LINALG_XFAIL_SET - {"EmbeddingBagB_basic"}

LINALG_CRASHING_SET = {
    "CrashesModule_basic",  # segfaults in the RefBackend
}

FX_IMPORTER_XFAIL_SET = {
    "AModule_basic",
    # one entry's comment in a sorted list
    "BModule_basic",
    "CModule_basic",
    "DModule_basic",
    "EModule_basic",
    "FModule_basic",
    "GModule_basic",
    "HModule_basic",
    "ConvolutionBackwardModule3DStatic_basic",
}

ONNX_CRASHING_SET = LINALG_CRASHING_SET | {"OnnxCrash_basic"}
ONNX_CRASHING_SET -= {"CrashesModule_basic"}
'''

FOLD_V1 = "OpFoldResult AtenFooOp::fold(FoldAdaptor adaptor) {\n  return getSelf();\n}\n"
FOLD_V2 = "OpFoldResult AtenFooOp::fold(FoldAdaptor) {\n  return nullptr;\n}\n"  # the line itself


def git(repo: Path, *args: str, date: str = "2024-01-02T00:00:00") -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def commit(repo: Path, files: dict[str, str], subject: str, date: str) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", subject, date=date)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    repo = tmp_path_factory.mktemp("torch-mlir")
    git(repo, "init", "-q")
    shas = {
        "sets": commit(repo, {XFAIL_SETS_FILE: XFAILS, COMMON_XFAILS_FILE: COMMON,
                              "lib/Other.cpp": "int x;\n"}, "Add the e2e sets", "2021-03-04T00:00:00"),
        "fold": commit(repo, {"lib/Dialect/Torch/IR/TorchOps.cpp": "// ops\n" + FOLD_V1},
                       "[Torch] Fold aten.foo (#1234)", "2022-05-06T00:00:00"),
        "edit": commit(repo, {"lib/Dialect/Torch/IR/TorchOps.cpp": "// ops\n" + FOLD_V2},
                       "[Torch] Refactor folders (#2345)", "2023-07-08T00:00:00"),
    }
    return repo, shas


def test_sets_are_read_with_unions_differences_version_blocks_and_comments():
    sets = read_sets(XFAILS, COMMON, "2.13.0+cpu")
    linalg = sets["LINALG_XFAIL_SET"]
    # the imported common set, the literal, minus what torch >= 2.13 removes; not the old block
    assert set(linalg) == {"NativeGroupNormBackwardModule_basic", "TimeOutModule_basic",
                           "ConvolutionBackwardModule3DStatic_basic", "EmbeddingBagA_basic",
                           "Uncommented_basic"}
    conv = "ConvolutionBackwardModule3DStatic_basic"
    assert linalg[conv] == "unimplemented: only 2D convolutions supported:"
    assert linalg["EmbeddingBagA_basic"] == "TorchScript importer fails: required keyword attribute"
    assert linalg["TimeOutModule_basic"] == "This test is expected to time out"
    assert linalg["Uncommented_basic"] == ""  # a blank line ends the comment's reach
    # further down a sorted list: marked with the distance, and dropped past the reach
    fx = sets["FX_IMPORTER_XFAIL_SET"]
    assert fx["BModule_basic"] == "one entry's comment in a sorted list"
    assert fx["CModule_basic"] == "[1 entry up] one entry's comment in a sorted list"
    assert fx["ConvolutionBackwardModule3DStatic_basic"] == ""
    assert set(sets["ONNX_CRASHING_SET"]) == {"OnnxCrash_basic"}
    # an older torch takes the other branches
    old = read_sets(XFAILS, COMMON, "2.4.0")
    assert {"OldTorchOnly_basic", "EmbeddingBagB_basic"} <= set(old["LINALG_XFAIL_SET"])


def test_blocked_names_match_upstream_test_names(checkout):
    repo, _ = checkout
    found = UpstreamSource(repo).expectations(
        ["ConvolutionBackwardModule3DStatic", "NativeGroupNormBackward", "Crashes", "EmbeddingBag* (2 tests)",
         "Convolution"], "2.13.0")
    got = {(e.test, e.config, e.crashing) for e in found}
    assert got == {
        ("ConvolutionBackwardModule3DStatic_basic", "fx_importer", False),
        ("ConvolutionBackwardModule3DStatic_basic", "linalg", False),
        ("NativeGroupNormBackwardModule_basic", "linalg", False),
        ("EmbeddingBagA_basic", "linalg", False),
        ("CrashesModule_basic", "linalg", True),
    }  # "Convolution" is not a name of any of them; ONNX_CRASHING_SET dropped CrashesModule


def test_origin_names_the_commit_that_added_the_line_and_the_last_change(checkout):
    repo, shas = checkout
    origin = UpstreamSource(repo).origin("OpFoldResult AtenFooOp::fold")
    assert origin.found_at == "lib/Dialect/Torch/IR/TorchOps.cpp:2"
    assert origin.introduced is not None and origin.introduced.sha == shas["fold"]
    assert (origin.introduced.pr, origin.introduced.date) == (1234, "2022-05-06")
    assert origin.last_changed is not None and origin.last_changed.sha == shas["edit"]
    text = "\n".join(origin.describe())
    assert "Introduced by llvm/torch-mlir#1234, commit " + shas["fold"][:12] + " (2022-05-06)" in text
    assert "last changed by llvm/torch-mlir#2345" in text
    missing = UpstreamSource(repo).origin("no such text anywhere")
    assert missing.introduced is None and "was not found" in missing.describe()[0]


def test_triage_says_expected_upstream_only_when_every_blocked_test_is_listed(checkout):
    repo, _ = checkout
    lookup = SourceLookup(UpstreamSource(repo), "OpFoldResult AtenFooOp::fold")
    listed = triage_source(lookup, ["ConvolutionBackwardModule3DStatic", "EmbeddingBagA"], "2.13.0")
    assert listed is not None and listed.expected_by_torchscript_config()
    text = "\n".join(listed.describe(torchscript_only=True))
    assert "**Expected upstream:**" in text and "only the TorchScript path hits it" in text
    assert 'because "unimplemented: only 2D convolutions supported:"' in text
    partly = triage_source(lookup, ["ConvolutionBackwardModule3DStatic", "NotListedModule"], "2.13.0")
    assert partly is not None and not partly.expected_by_torchscript_config()
    assert "- in no set of any config: `NotListedModule`." in partly.describe()


def test_a_folder_that_is_not_torch_mlir_is_refused_with_what_to_give(tmp_path):
    with pytest.raises(InputFileError, match="is not a git checkout"):
        UpstreamSource(tmp_path)
    git(tmp_path, "init", "-q")
    commit(tmp_path, {"README": "x\n"}, "init", "2020-01-01T00:00:00")
    with pytest.raises(InputFileError, match=r"has no projects/pt1/e2e_testing/xfail_sets.py .*git clone"):
        UpstreamSource(tmp_path)


def test_report_labels_a_torchscript_only_failure_upstream_expects(checkout, tmp_path):
    # The real report: the 3-D convolution_backward lit test (not filed: expected upstream), its
    # blocked test in the checkout's LINALG_XFAIL_SET, TorchScript only: "expected upstream".
    repo, _ = checkout
    src = ROOT / "lit_tests" / "pass" / "convolution-backward-3d-illegal-error.mlir"
    proc = harness("report", str(src), "--pipeline", "function-to-torch", "--out", str(tmp_path),
                   "--no-reduce", "--json", "--blocks", "ConvolutionBackwardModule3DStatic",
                   "--reproduces-through", "torchscript-only", "--torch-mlir-src", str(repo),
                   "--root-cause-code", "OpFoldResult AtenFooOp::fold",
                   "--title", "3-D `convolution_backward`  stays backend-illegal", timeout=600)
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)
    assert result["triage"] == "expected upstream"
    # --title: the bug as stated, after the labels (whitespace folded)
    assert result["title"] == ("[torch-mlir] [expected upstream] 3-D `convolution_backward` stays "
                               "backend-illegal")
    issue = (Path(result["folder"]) / "issue.md").read_text()
    assert "**Expected upstream:**" in issue and "llvm/torch-mlir#1234" in issue
    # both frontends hit it: the same listing is no reason to hold the issue back
    proc = harness("report", str(src), "--pipeline", "function-to-torch", "--out", str(tmp_path),
                   "--no-reduce", "--json", "--blocks", "ConvolutionBackwardModule3DStatic",
                   "--reproduces-through", "both", "--torch-mlir-src", str(repo), timeout=600)
    both = json.loads(proc.stdout)
    assert both["triage"] == "new" and "backend illegal" in both["title"]  # from the signature
    proc = harness("report", str(src), "--pipeline", "function-to-torch", "--out", str(tmp_path),
                   "--root-cause-code", "x")
    assert proc.returncode == 2 and "give --torch-mlir-src DIR too" in proc.stderr


def test_an_xfail_entry_of_a_path_seen_to_pass_is_called_stale(checkout):
    # The triage found bundles whose FX path passes tests upstream's FX_IMPORTER_XFAIL_SET
    # still lists: the report says the entry looks stale instead of leaving a contradiction.
    from dataclasses import replace

    repo, _ = checkout
    found = triage_source(SourceLookup(UpstreamSource(repo)), ["ConvolutionBackwardModule3DStatic"], "2.13.0")
    assert found is not None
    assert "looks stale" not in "\n".join(found.describe())
    text = "\n".join(replace(found, passing=("fx", "onnx")).describe())
    assert ("- `fx_importer`'s entry for `ConvolutionBackwardModule3DStatic_basic` looks stale: that "
            "path passes the test (Reproduces through).") in text
    assert "`linalg`'s entry" not in text  # TorchScript, the path that fails, keeps its entry
