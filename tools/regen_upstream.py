#!/usr/bin/env python3
"""Regenerate reports/upstream/ with `harness report`, one bundle at a time.

Each bundle is made again from the file it shipped (input.mlir; a numerics bundle's reduced.mlir
and inputs.npz) through the pipeline its record.json names, with the facts the project found
passed as the tool's options, from regen_upstream_findings.json: --title (the bug in one line),
--root-cause (the cause the project found), --path (each frontend's result: upstream's own
fx_importer and onnx e2e configs on the blocked tests, or the ports), and --blocks (the e2e tests
and models it stops). The upstream numbers and the searches come from
harness/knowledge/upstream.toml; with $TORCH_MLIR_MIRROR (a clone of llvm/torch-mlir) each bundle
also gets upstream's xfail expectations and, from the catalog's [[search]] pattern, the commit
that introduced the faulty line (--torch-mlir-src, --root-cause-code).

The report's triage (record.json's "filing") decides where a bundle goes, never a hand edit:

- "new issue": reports/upstream/NAME/, a new issue to file;
- "comment on the known thread" (triaged `known #N` from the catalog): moved to
  reports/upstream/known/NAME/, a reproducer to add to the thread(s) record.json's "threads"
  names, and listed in README.md between the known-upstream markers;
- "not filed": `expected upstream` (TorchScript only, and upstream's TorchScript config already
  lists every test it blocks), `not on the supported path` (TorchScript only and either the
  catalog holds upstream's word that it will not act on that construct, or it is no crash, no
  miscompile and no pass that broke valid IR: upstream switched that path off, #3693) or
  `by design` (the catalog holds upstream's reason): the folder is removed and it is listed,
  with upstream's reason and each frontend's result, between the expected-upstream,
  unsupported-path or by-design markers.
A bundle with a folder tools/upstream_llvm/NAME (an llvm-project report) or
tools/upstream_torch_mlir/NAME (a torch-mlir report whose commands a maintainer has) gets that
folder's hand-written issue.md and files over the report's, which stays as torch-mlir-report.md.
A failure found in IREE's compiler (iree-compile), which `harness report` cannot replay (it runs
torch-mlir's pipelines), is a bundle written whole by hand in tools/upstream_iree/NAME (issue.md,
record.json, repro.sh, ...) and copied into reports/upstream/NAME as it is.
The new bundle is written into a fresh temp folder, then swapped in by renames (the old folder
is removed only once the new one is in place). A failure splits into one bundle per distinct
failure with ``each``: NAME-1, ... are renamed to the names given.

    python tools/regen_upstream.py                     # every bundle below
    python tools/regen_upstream.py fold-any-dims-unranked sdpa-explicit-scale-miscompile
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLES = ROOT / "reports" / "upstream"
# Each gap as the project found it: the title (the bug in one line), the cause (source, lit tests,
# release bisects) and each frontend's result (FRONTEND: OUTCOME[:DETAIL], report's --path).
FINDINGS: dict[str, dict] = json.loads((Path(__file__).with_name("regen_upstream_findings.json")).read_text())
CATALOG = ROOT / "harness" / "knowledge" / "upstream.toml"
README = BUNDLES / "README.md"
KNOWN = BUNDLES / "known"  # reproducers for existing upstream threads, not new issues
EXPECTED_START = "<!-- expected-upstream:start -->"
EXPECTED_END = "<!-- expected-upstream:end -->"
KNOWN_MARKERS = ("<!-- known-upstream:start -->", "<!-- known-upstream:end -->")
UNSUPPORTED_MARKERS = ("<!-- unsupported-path:start -->", "<!-- unsupported-path:end -->")
KNOWN_HEAD = ("| folder | what it is | triage | add it to | each frontend's result |",
              "|---|---|---|---|---|")
BY_DESIGN_MARKERS = ("<!-- by-design:start -->", "<!-- by-design:end -->")
BY_DESIGN_HEAD = ("| failure | what it is | upstream's reason | each frontend's result |",
                  "|---|---|---|---|")
UNSUPPORTED_HEAD = ("| failure | what it is | upstream's word | each frontend's result |",
                    "|---|---|---|---|")
FILE_COMMENT = "comment on the known thread"  # record.json's "filing" (harness.diagnose.report.sections)
FILE_NONE = "not filed"
# Bundles filed with llvm/llvm-project: their issue.md is an MLIR report written by hand from what
# the harness's report found (upstream dialects only, the one pass, its effect checked through
# the wheel's MLIR bindings), kept here with its files; the harness's report stays beside it as
# torch-mlir-report.md (how it was found in torch-mlir).
LLVM_ISSUES = Path(__file__).with_name("upstream_llvm")
# Bundles for llvm/torch-mlir whose issue.md (and repro.py) are written by hand from what the
# harness's report found, where the report's own text would need this project's tools to follow
# (a pass the wheel's bindings run but torch-mlir-opt does not register); the report stays beside
# it as torch-mlir-report.md, as for LLVM_ISSUES.
TORCH_MLIR_ISSUES = Path(__file__).with_name("upstream_torch_mlir")
HAND_WRITTEN = (LLVM_ISSUES, TORCH_MLIR_ISSUES)
# Bundles for failures iree-compile meets (issue 43): no harness report can be made of them, so
# the folder is the whole bundle, its record.json written by hand too (what --table reads).
IREE_FOUND = Path(__file__).with_name("upstream_iree")


def iree_found(names: list[str] | tuple[str, ...] = ()) -> list[Path]:
    """The hand-written bundles of IREE_FOUND (those named, or all), each a folder with issue.md."""
    if not IREE_FOUND.is_dir():
        return []
    return sorted(p for p in IREE_FOUND.iterdir()
                  if (p / "issue.md").is_file() and (not names or p.name in names))


def hand_written(name: str) -> Path | None:
    """The folder of bundle ``name``'s hand-written issue.md (LLVM_ISSUES, TORCH_MLIR_ISSUES), if any."""
    return next((root / name for root in HAND_WRITTEN if (root / name / "issue.md").is_file()), None)


def searched_pattern(name: str) -> str:
    """The catalog's faulty source line for bundle ``name`` (its [[search]] record), "" when the
    search found none (a gap, not a change) or only the commit that added the function."""
    for entry in tomllib.loads(CATALOG.read_text()).get("search", ()):
        if entry.get("bundle") == name:
            if entry.get("faulty_pattern"):
                return str(entry["faulty_pattern"])
            return str(entry.get("pattern", "")) if entry.get("introduced_faulty") else ""
    return ""


@dataclass(frozen=True)
class Spec:
    name: str                        # the folder under reports/upstream
    pipeline: str
    blocks: tuple[str, ...] = ()     # e2e tests / models it stops (README's table)
    through: str = ""                # --reproduces-through, when shown
    numerics: bool = False           # a miscompile or run-time failure bundle
    each: tuple[str, ...] = ()       # --each: the folder names of the bundles, in order
    grouped: tuple[str, ...] = ()    # --each into one bundle (one root cause): the old folders it replaces
    extra: tuple[str, ...] = field(default=())
    # A lit test to start from instead of the bundle's file, taken to torch IR through ``lit_pre``
    # (as its RUN lines do), and the shapes of its all-ones inputs.
    lit: str = ""
    lit_pre: str = ""
    ones: tuple[tuple[int, ...], ...] = ()


F2T = "function-to-torch"
BOTH = ("builtin.module(torch-function-to-torch-backend-pipeline,"
        "torch-backend-to-linalg-on-tensors-backend-pipeline)")
# Upstream's FX e2e config passes every test these block (e2e.py --config fx, the 68 tests of
# docs/importer-conformance.md only FX passes), and what fails is a type or an op only the
# TorchScript import gives (an unranked or dtype-less result, prim.Loop, an unregistered
# torch.operator, an op FX's decompositions remove): TorchScript only. Left undetermined where
# the FX config passes only because its shapes are static (matmul, the broadcast assert, the
# grouped-conv fusion) or keeps other ops legal (the pool, 3-D convolution backward), and
# item.number, which both importers type alike.
TS_ONLY = "torchscript-only"
# TOSA 1.1.draft with both profiles and the int64 extension: the f64 ops and the i64 -> f32 cast
# fail it as they fail 1.0 (IREE's check) and every 1.1.draft extension. An empty extension list
# is not used: MLIR prints it as `extensions = []`, which its parser rejects, so the failing pass
# could not be replayed alone.
TOSA_PROFILE = ("builtin.module(torchdynamo-export-to-torch-backend-pipeline,"
                "torch-backend-to-tosa-backend-pipeline,"
                "tosa-attach-target{specification_version=1.1.draft profiles=pro_int,pro_fp "
                "extensions=int64},"
                "tosa-validate{strict-op-spec-alignment})")
# `harness port ARCH --frontend fx --fix --target tosa --backend iree`, one at a time: each stops
# at iree-compile on one of the two. The cast's lines are its first error's; the variance's are
# left out: each named the op just before the model's first layer norm, not the norm (GPT-2's
# modeling_gpt2.py:577 and BERT's modeling_bert.py:105, the embedding sums; BLOOM's
# torch/nn/modules/sparse.py:189, nn.Embedding.forward, before word_embeddings_layernorm).
# Checked with plain fx.export_and_import (transformers 5.24.0, the issue's tiny configs and
# script): GPT-2 5, BERT 5, BLOOM 6, Phi 3 var_mean ops from DEFAULT_DECOMPOSITIONS'
# native_layer_norm entry, each with f64 TOSA.
VARIANCE_F64_BLOCKS = (
    "gpt2 --frontend fx --target tosa --backend iree (f64: its layer norms' var_mean)",
    "bert --frontend fx --target tosa --backend iree (f64: its layer norms' var_mean)",
    "bloom --frontend fx --target tosa --backend iree (f64: its layer norms' var_mean)",
)
CAST_I64_F32_BLOCKS = (
    "llama --frontend fx --target tosa --backend iree (i64 -> f32; at modeling_llama.py:111, "
    "the rotary positions)",
    "phi --frontend fx --target tosa --backend iree (i64 -> f32; at modeling_phi.py:73, "
    "the rotary positions)",
    "t5:encoder --frontend fx --target tosa --backend iree (i64 -> f32; at modeling_t5.py:348, "
    "the relative position bias)",
)
SPECS = [
    Spec("and-tensor-no-lowering", "torch-to-linalg"),
    Spec("convolution-backward-3d-illegal", F2T, ("ConvolutionBackwardModule3DStatic",)),
    Spec("decompose-adaptive-max-pool-unfixed-window", BOTH,
         ("AdaptiveMaxPool2dStatic", "AdaptiveMaxPool2dStaticWithIndices", "AdaptiveMaxPool2dDynamic",
          "AdaptiveMaxPool2dDynamicNoBatch", "AdaptiveMaxPool2dDynamicWithIndices",
          "AdaptiveMaxPool1dStatic", "AdaptiveMaxPool1dDynamic", "AdaptiveMaxPool1dDynamicNoBatch"),
         through="torchscript-only"),
    Spec("decompose-cross-entropy-unknown-dtype", "-torch-decompose-complex-ops",
         ("CrossEntropyLossNoReduction",), through=TS_ONLY),
    # The old bundle's reduced.mlir returns nothing: made again from the lit test.
    Spec("elementwise-dynamic-size1-broadcast-abort", "torch-to-linalg",
         ("ElementwiseLogAddExpBroadcastModule", "ElementwiseLogAddExp2BroadcastModule"), numerics=True,
         lit="lit_tests/pass/elementwise-dynamic-size1-broadcast-abort.mlir", lit_pre=F2T,
         ones=((3, 2, 4), (3, 1, 4))),
    Spec("fold-any-dims-unranked", "-canonicalize", ("ReduceAnyDimsFloat",), through=TS_ONLY),
    Spec("fold-reshape-unknown-dtype", "-canonicalize", ("ArangeStartOut", "ArangeStartOutDtype"),
         through=TS_ONLY),
    Spec("fold-to-dtype-unranked", "-canonicalize", ("ToDtypeConst* (9 tests)", "UInt8Tensor"),
         through=TS_ONLY),
    # A run-time crash of FX ports (issue 45): x[~mask] = 0 with an all-ones mask, made again from
    # its reduced.mlir and inputs.npz (the empty index tensors).
    Spec("index-put-empty-mask-broadcast-oob", "torch-to-linalg",
         ("wav2vec2 (FX)", "hubert (FX)", "data2vec-audio (FX)", "sew (FX)", "unispeech (FX)"),
         numerics=True),
    Spec("int-mm-canonicalize-result-dtype", BOTH, ("AtenIntMMMixedSigni8", "AtenIntMM"), through=TS_ONLY),
    Spec("item-number-result-unrefined", F2T,
         ("AtenSymConstrainRange", "AtenSymConstrainRangeForSize", "Aten_AssertScalar")),
    # Not reduced: the reducer kept output_shape values that are not the pad's sizes; input.mlir
    # (tools/upstream_llvm's, 19 ops) is already the consistent reduction.
    Spec("linalg-fuse-elementwise-pad-expand-dominance", "linalg-to-llvm",
         ("ConvolutionModule2DGroups", "ConvolutionModule3DGroupsStrided",
          "ConvolutionModule3DGroupsDilated"), extra=("--no-reduce",)),
    Spec("matmul-3d-unequal-batch-illegal", F2T,
         ("Matmul_3d", "Matmul3DStaticBroadcast", "ScaledDotProductAttentionSameDynamic")),
    # One root cause (the library's missing functions): one bundle listing every op.
    Spec("missing-shape-dtype-functions", F2T,
         ("ElementwiseXlogyTensor", "ElementwiseXlogyTensorBroadcast", "ElementwiseXlogyTensorInt",
          "ElementwiseXlogyTensorZeroAndNan", "ElementwiseRshiftScalarSignedInt8",
          "ElementwiseCreateComplex", "UnfoldModule", "ReflectionPad3dModule*"),
         grouped=("missing-shape-dtype-functions-xlogy", "missing-shape-dtype-functions-rshift",
                  "missing-shape-dtype-functions-complex", "missing-shape-dtype-functions-im2col",
                  "missing-shape-dtype-functions-reflection-pad3d"), through=TS_ONLY),
    Spec("native-group-norm-backward-unsupported", F2T, ("NativeGroupNormBackwardModule",), through=TS_ONLY),
    Spec("pool-flatten-mm-miscompile", "torch-to-linalg", ("ResNet18Module", "ResNet18StaticModule"),
         numerics=True),
    Spec("prim-loop-tensor-iter-arg-unranked", F2T, ("TorchPrimLoopForLikeTensorArgModule",),
         through=TS_ONLY),
    Spec("prims-prod-dynamic-kept-dim", "-convert-torch-to-linalg", ("PrimsProdFloatModule",),
         through="both"),
    # Not reduced: the reducer drops the branch that later folding would prune, and what is left
    # (an unregistered op rejected) is what torch-reduce-op-variants means to do.
    Spec("reduce-op-variants-operator-dead-branch",
         "builtin.module(torch-function-to-torch-backend-pipeline)",
         ("InterpolateDynamicModule_sizes_nearest", "InterpolateDynamicModule_scales_recompute_bilinear"),
         extra=("--no-reduce",), through=TS_ONLY),
    Spec("refbackend-returned-slice-memref-copy", "torch-to-linalg",
         ("SliceWholeTensorModule", "SplitWithSizes_Module"), through="torchscript-only", numerics=True),
    Spec("reify-shape-broadcast-tensors-list-result", F2T,
         ("BroadcastTensorsModule", "BroadcastTensorsModuleList_multiple_ranks"), through=TS_ONLY),
    Spec("rms-norm-dynamic-weight-illegal", F2T, ("RMSNormDynamicModule",), through="both"),
    Spec("sdpa-explicit-scale-miscompile", "torch-to-linalg", numerics=True),
    Spec("select-fill-recompose-list-type", "-torch-recompose-complex-ops"),
    Spec("tensor-bool-list-unranked", F2T, ("BoolTensor",), through=TS_ONLY),
    # TOSA that IREE refuses (issue 43), one emitter each: what
    # torch_mlir.fx.export_and_import(output_type="tosa") runs, then MLIR's own profile check
    # (tosa-validate, a pass of the wheel's bindings, not of torch-mlir-opt). Not reduced: one op
    # each. Their issue.md is written by hand (tools/upstream_torch_mlir/NAME/).
    Spec("tosa-cast-i64-to-f32-outside-profiles", TOSA_PROFILE, CAST_I64_F32_BLOCKS,
         extra=("--driver", "bindings", "--no-reduce")),
    Spec("upsample-bilinear2d-vec-no-lowering", "torch-to-linalg",
         ("InterpolateStaticModule_sizes_bilinear_no_align_corners",
          "InterpolateStaticModule_scales_bilinear_align_corners", "InterpolateDynamicModule_sizes_bilinear"),
         through="torchscript-only"),
    # The float32 variance's intended f64 upcast, refused by TOSA, and (its own bug, in the same
    # function) #4283's unused targetTy, which puts f16/bf16/f8 variances in f64 on every backend:
    # its TOSA fails the same profile check, which is how the report replays it.
    Spec("variance-f32-in-f64-outside-tosa-profiles", TOSA_PROFILE, VARIANCE_F64_BLOCKS,
         extra=("--driver", "bindings", "--no-reduce")),
    Spec("variance-target-type-unused-half-in-f64", TOSA_PROFILE,
         extra=("--driver", "bindings", "--no-reduce")),
    # Blockers only dynamic shapes meet (harness port MODEL --dynamic DIMS): the run-time failures
    # from their own reduced.mlir and inputs.npz, the verifier errors from their input.mlir.
    # One bug with view-flatten-unrefined-batch-abort (GPT-2's TorchScript port with --dynamic
    # seq), which was its own bundle: now listed in this one's Blocks.
    Spec("view-flatten-two-dynamic-dims-wrong-collapse", "torch-to-linalg",
         ("gpt2 --frontend fx --dynamic batch,seq", "gpt2 --frontend onnx --dynamic batch,seq",
          "gpt2 --frontend torchscript --dynamic seq",
          "lit_tests/pass/view-flatten-two-dynamic-dims-wrong-collapse.mlir"),
         grouped=("view-flatten-unrefined-batch-abort",), through="both", numerics=True),
    # One root cause (causes.py: the helper's init more static than its input): one bundle from
    # the two reduced functions (BLOOM's view + slice, GPT-Neo's view + permute), --each grouping.
    Spec("view-unrefined-result-verifier-error", "torch-to-linalg",
         ("bloom --frontend torchscript --dynamic seq", "gpt_neo --frontend torchscript --dynamic seq"),
         grouped=("view-unrefined-result-slice-verifier-error",
                  "view-unrefined-result-permute-verifier-error"),
         through="torchscript-only"),
]


def command(spec: Spec, work: Path, out: Path) -> list[str]:
    """The harness report command for ``spec``, its input copied into ``work`` first."""
    old = bundle_dir(spec.name)
    if (spec.each or spec.grouped) and not old.is_dir():  # split before: the first holds the whole input
        old = BUNDLES / (spec.each or spec.grouped)[0]
    if spec.lit:
        subprocess.run([sys.executable, "-m", "harness", "run", str(ROOT / spec.lit), "--pipeline",
                        spec.lit_pre, "-o", str(work / f"{spec.name}.mlir")], cwd=ROOT, check=True,
                       capture_output=True)
        import numpy as np

        np.savez(work / "inputs.npz", *(np.ones(shape, "f4") for shape in spec.ones))
        words = ["--numerics", "--inputs", str(work / "inputs.npz")] if spec.numerics else []
    elif spec.numerics:
        shutil.copy(old / "reduced.mlir", work / f"{spec.name}.mlir")
        words = ["--numerics"]
        if (old / "inputs.npz").is_file():
            shutil.copy(old / "inputs.npz", work / "inputs.npz")
            words += ["--inputs", str(work / "inputs.npz")]
    else:
        shutil.copy(old / "input.mlir", work / f"{spec.name}.mlir")
        words = []
    words = [sys.executable, "-m", "harness", "report", str(work / f"{spec.name}.mlir"),
             f"--pipeline={spec.pipeline}", "--out", str(out), *words]
    for name in spec.blocks:
        words += ["--blocks", name]
    words += finding_words(spec)
    if spec.each or (spec.grouped and not spec.numerics):
        words.append("--each")
    return [*words, *spec.extra]


def finding_words(spec: Spec) -> list[str]:
    """The report's options for what the project found of ``spec``'s gap, and the checkout's."""
    words: list[str] = []
    found = FINDINGS.get(spec.name, {})
    for frontend, result in found.get("paths", {}).items():
        words += ["--path", f"{frontend}={result}"]
    if spec.through and not found.get("paths"):
        words += ["--reproduces-through", spec.through]
    if found.get("root_cause"):
        words += ["--root-cause", found["root_cause"]]
    if found.get("title"):
        words += ["--title", found["title"]]
    mirror = os.environ.get("TORCH_MLIR_MIRROR")
    if mirror:
        words += ["--torch-mlir-src", mirror]
        if pattern := searched_pattern(spec.name):
            words += ["--root-cause-code", pattern]
    return words


def bundle_dir(name: str) -> Path:
    """Where bundle ``name`` is now: reports/upstream/NAME, or known/NAME once triaged known."""
    return KNOWN / name if (KNOWN / name).is_dir() and not (BUNDLES / name).is_dir() else BUNDLES / name


def swap_in(new: Path, name: str, parent: Path = BUNDLES) -> None:
    """``new`` becomes PARENT/NAME by renames; the old folder goes once it is in place, and a
    copy under the other parent (reports/upstream or known/) goes too."""
    parent.mkdir(exist_ok=True)
    target = parent / name
    staged = parent / f".{name}.new"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(new, staged)  # across file systems: copied beside the target first
    other = (BUNDLES if parent == KNOWN else KNOWN) / name
    if other.is_dir():
        shutil.rmtree(other)
    if target.exists():
        old = parent / f".{name}.old"
        shutil.rmtree(old, ignore_errors=True)
        os.rename(target, old)
        os.rename(staged, target)
        shutil.rmtree(old)
    else:
        os.rename(staged, target)


def overlay_llvm_issue(name: str) -> None:
    """Puts the hand-written files of bundle NAME (tools/upstream_llvm/NAME or
    tools/upstream_torch_mlir/NAME, issue.md first of them) into its folder, the harness's own
    issue.md kept as torch-mlir-report.md; nothing when there is no such folder."""
    source, bundle = hand_written(name), BUNDLES / name
    if source is None or not bundle.is_dir():
        return
    issue = bundle / "issue.md"
    if issue.is_file() and issue.read_text() != (source / "issue.md").read_text():  # the harness's, not ours
        os.replace(issue, bundle / "torch-mlir-report.md")
    for path in sorted(source.iterdir()):
        if path.is_file():
            shutil.copy(path, bundle / path.name)


def regenerate(spec: Spec, lists: dict[str, dict[str, str]]) -> list[str]:
    """Makes ``spec``'s bundle(s) and swaps them in where their triage puts them (module
    docstring); ``lists`` gets the README rows of those not to file as new issues, by list
    (``placement``)."""
    with tempfile.TemporaryDirectory(prefix=f"regen-{spec.name}-") as tmp:
        work, out = Path(tmp) / "in", Path(tmp) / "out"
        work.mkdir()
        words = command(spec, work, out)
        print("$", shlex.join(words), flush=True)
        done = subprocess.run(words, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 1:
            raise SystemExit(f"{spec.name}: harness report exited {done.returncode}:\n"
                             f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        folders = sorted((p for p in out.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
        names = list(spec.each) if spec.each else [spec.name]
        if len(folders) != len(names):
            raise SystemExit(f"{spec.name}: {len(folders)} bundles written, {len(names)} expected")
        kept = []
        for folder, name in zip(folders, names, strict=True):
            where, row = placement(name, folder)
            if where == "known":
                swap_in(folder, name, KNOWN)
            elif where == "new":
                swap_in(folder, name)
                overlay_llvm_issue(name)
            else:  # not filed: listed only
                shutil.rmtree(BUNDLES / name, ignore_errors=True)
                shutil.rmtree(KNOWN / name, ignore_errors=True)
            if row:
                lists[where][name] = row
            if where not in ("expected", "unsupported", "bydesign"):
                kept.append(name)
        if spec.each and spec.name not in names:
            shutil.rmtree(BUNDLES / spec.name, ignore_errors=True)
        for old in spec.grouped:  # their failures are this bundle's now
            if old not in names:
                shutil.rmtree(BUNDLES / old, ignore_errors=True)
        return kept


def _report(folder: Path) -> dict:
    record = json.loads((folder / "record.json").read_text())
    return record.get("report") or record


def _bare_title(report: dict) -> str:
    """The title without its repository and triage labels ("[torch-mlir] [known #4749] ")."""
    title = str(report.get("title", ""))
    while title.startswith("[") and "] " in title:
        title = title.split("] ", 1)[1]
    return title


def placement(name: str, folder: Path) -> tuple[str, str]:
    """Where the report's triage puts bundle ``name`` (made in ``folder``) and its README row:
    ("new", ""), ("known", row), ("expected", row), ("unsupported", row) or ("bydesign", row)."""
    report = _report(folder)
    filing, triage = report.get("filing", ""), str(report.get("triage", "new"))
    if triage == "expected upstream":  # bundles made before "filing" was recorded say only this
        return "expected", expected_row(name, folder)
    if filing == FILE_COMMENT:
        return "known", known_row(name, folder)
    if filing == FILE_NONE and triage == "by design":
        return "bydesign", unsupported_row(name, folder)
    if filing == FILE_NONE:
        return "unsupported", unsupported_row(name, folder)
    return "new", ""


def _frontends(issue: str) -> str:
    """Each frontend's result as the bundle's Reproduces through section states it, one line."""
    through = _section(issue, "Reproduces through")
    items = [line.removeprefix("- ").replace("**", "") for line in through.splitlines()
             if line.startswith("- ")]
    return "; ".join(items) or (through.splitlines()[0] if through else "not stated")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def known_row(name: str, folder: Path) -> str:
    """README's row for a bundle triaged known or by design: the threads to add it to."""
    report = _report(folder)
    threads = ", ".join(report.get("threads", ())) or "see its Upstream section"
    return (f"| `known/{name}/` | {_cell(_bare_title(report))} | {report.get('triage', '')} | {threads} "
            f"| {_cell(_frontends((folder / 'issue.md').read_text()))} |")


def unsupported_row(name: str, folder: Path) -> str:
    """README's row for a failure not on upstream's supported path, or by design: upstream's
    word (the Upstream section's lines on the threads record.json names), each frontend's result."""
    report = _report(folder)
    issue = (folder / "issue.md").read_text()
    said = [line.removeprefix("- ") for line in _section(issue, "Upstream").splitlines()
            if line.startswith("- ") and line[2:].split(" ", 1)[0] in report.get("threads", ())]
    word = "; ".join(said) or ", ".join(report.get("threads", ()))
    return f"| `{name}` | {_cell(_bare_title(report))} | {_cell(word)} | {_cell(_frontends(issue))} |"


def expected_row(name: str, folder: Path) -> str:
    """README's row for a failure upstream already expects: what it is, upstream's reason."""
    issue = (folder / "issue.md").read_text()
    record = json.loads((folder / "record.json").read_text())
    title = str((record.get("report") or record).get("title", ""))
    for label in ("[torch-mlir] ", "[expected upstream] "):
        title = title.replace(label, "", 1)
    upstream = _section(issue, "Upstream")
    reasons = [line.removeprefix("- ") for line in upstream.splitlines()
               if line.startswith("- ") and "in `linalg`" in line]
    return f"| `{name}` | {title} | {'; '.join(reasons) or 'see upstream'} |"


def expected_names() -> set[str]:
    """The failures README's expected-upstream, unsupported-path and by-design lists name (no
    bundle kept)."""
    text = README.read_text()
    names: set[str] = set()
    for start, end in ((EXPECTED_START, EXPECTED_END), UNSUPPORTED_MARKERS, BY_DESIGN_MARKERS):
        if start in text:
            body = text.split(start, 1)[1].split(end, 1)[0]
            names |= {line.split("`")[1] for line in body.splitlines() if line.startswith("| `")}
    return names


def write_list(markers: tuple[str, str], head: tuple[str, ...], rows: dict[str, str],
               drop: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """README's list between ``markers``: its rows merged with ``rows`` (keyed by the failure's
    name), less those in ``drop`` (triaged otherwise now)."""
    start, end = markers
    text = README.read_text()
    if start not in text:
        text = text.rstrip("\n") + "\n\n" + start + "\n" + end + "\n"
    before, rest = text.split(start, 1)
    body, tail = rest.split(end, 1)
    old = {line.split("`")[1].removeprefix("known/").rstrip("/"): line
           for line in body.splitlines() if line.startswith("| `")}
    old.update(rows)
    table = [*head, *(old[k] for k in sorted(old) if k not in drop)]
    README.write_text(before + start + "\n" + "\n".join(table) + "\n" + end + tail)


def write_expected(rows: dict[str, str]) -> None:
    """The README's expected-upstream list, between its markers, rows merged with the list's."""
    text = README.read_text()
    if EXPECTED_START not in text:
        text = text.rstrip("\n") + "\n\n" + EXPECTED_START + "\n" + EXPECTED_END + "\n"
    head, rest = text.split(EXPECTED_START, 1)
    body, tail = rest.split(EXPECTED_END, 1)
    old = {line.split("`")[1]: line for line in body.splitlines() if line.startswith("| `")}
    old.update(rows)
    table = ["| failure | what it is | upstream's expectation (xfail_sets.py) |", "|---|---|---|",
             *(old[k] for k in sorted(old))]
    README.write_text(head + EXPECTED_START + "\n" + "\n".join(table) + "\n" + EXPECTED_END + tail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="bundle folders (default: all)")
    parser.add_argument("--table", action="store_true",
                        help="print README's triage table instead (no bundle is made)")
    parser.add_argument("--not-standalone", nargs="*", default=[], metavar="NAME",
                        help="with --table: the bundles tests/diagnose/test_report_standalone.py found not "
                             "to reproduce standalone (every other one is marked yes)")
    args = parser.parse_args()
    if args.table:
        names = [p.name for p in BUNDLES.iterdir() if (p / "issue.md").is_file()]
        print(table({n: n not in args.not_standalone for n in names}))
        return 0
    for folder in iree_found(args.names):  # nothing to regenerate: copied in as written
        swap_in(folder, folder.name)
        print(f"{folder.name}: copied from {folder.relative_to(ROOT)}", flush=True)
    wanted = [s for s in SPECS if not args.names or s.name in args.names]
    listed = expected_names()
    skipped = [s.name for s in wanted if s.name in listed and not (BUNDLES / s.name).is_dir()]
    if skipped:  # made once, triaged "expected upstream": README's row stands, no bundle to remake
        print("listed as expected upstream, no bundle to make: " + " ".join(skipped), flush=True)
    wanted = [s for s in wanted if s.name not in skipped]
    if not os.environ.get("TORCH_MLIR_MIRROR"):
        print("note: TORCH_MLIR_MIRROR is not set: the bundles get no upstream xfail expectations "
              "and no introducing commit", flush=True)
    failed = []
    lists: dict[str, dict[str, str]] = {"known": {}, "expected": {}, "unsupported": {}, "bydesign": {},
                                        "new": {}}
    remade: set[str] = set()
    for spec in wanted:
        try:
            names = regenerate(spec, lists)
        except SystemExit as e:  # the next bundle still gets made; the old one stays
            print(e, flush=True)
            failed.append(spec.name)
            continue
        remade |= {spec.name, *names}
        for name in names:
            print(f"{name}: {_report(bundle_dir(name)).get('title', '')}", flush=True)
    made = remade | {n for rows in lists.values() for n in rows}
    if lists["expected"]:
        write_expected(lists["expected"])
        print("expected upstream (listed in README.md, no issue): " + " ".join(sorted(lists["expected"])))
    write_list(KNOWN_MARKERS, KNOWN_HEAD, lists["known"], drop=made - set(lists["known"]))
    write_list(UNSUPPORTED_MARKERS, UNSUPPORTED_HEAD, lists["unsupported"],
               drop=made - set(lists["unsupported"]))
    write_list(BY_DESIGN_MARKERS, BY_DESIGN_HEAD, lists["bydesign"], drop=made - set(lists["bydesign"]))
    for where, label in (("known", "known upstream (moved to known/, a comment for the thread)"),
                         ("unsupported", "not on the supported path (listed in README.md, no issue)"),
                         ("bydesign", "by design (listed in README.md, no issue)")):
        if lists[where]:
            print(f"{label}: " + " ".join(sorted(lists[where])))
    if failed:
        print("not regenerated (the old bundle kept): " + " ".join(failed))
    return 1 if failed else 0



def _section(issue: str, name: str) -> str:
    parts = issue.split(f"\n## {name}\n", 1)
    return parts[1].split("\n## ", 1)[0].strip() if len(parts) == 2 else ""


def table_row(name: str, standalone: dict[str, bool]) -> str:
    """README's row for bundle ``name``: read from its issue.md (the report's own sections)."""
    if (IREE_FOUND / name / "issue.md").is_file():  # no harness report: its record.json says it
        return iree_table_row(name, standalone)
    issue = (BUNDLES / name / "issue.md").read_text()
    if hand_written(name):  # written by hand: the harness's one says the rest
        issue = (BUNDLES / name / "torch-mlir-report.md").read_text()
    through = _section(issue, "Reproduces through")
    first = through.splitlines()[0] if through else ""
    if first.startswith("Upstream's supported path"):  # "... hit it: FX, ONNX."
        fx = "yes: " + first.split(": ", 1)[1].rstrip(".")
    elif first.startswith(("Both", "FX only")):
        fx = "yes: FX"
    elif first.startswith("TorchScript only"):
        fx = "no (TorchScript only)"
    else:
        fx = "not determined"
    upstream = _section(issue, "Upstream")
    target = upstream.split("**", 2)[1] if "**" in upstream else "?"
    triage = upstream.split("Triage: **", 1)[1].split("**", 1)[0] if "Triage: **" in upstream else "new"
    verdict = "by design" if "by design" in triage else "known" if triage.startswith("known") else "new"
    # The known report and its fix from the triage line ("known #N (open PR #M fixes it)"); the
    # context the section lists beside it (the PR that introduced the code, ...) is not "known".
    line = next((x for x in upstream.splitlines() if x.startswith("Triage: ")), "")
    numbers = [w.strip("(),.:;*#") for w in line.split(". ")[0].split() if w.strip("(),.:;*").startswith("#")]
    known = ", ".join(f"{target}#{n}" for n in dict.fromkeys(numbers)) or "none"
    alone = ("yes" if standalone[name] else "no") if name in standalone else "not run"
    return f"| `{name}/` | {alone} | {fx} | {known} | {target} | {verdict} |"


def iree_table_row(name: str, standalone: dict[str, bool]) -> str:
    """README's row for a bundle found in iree-compile, from its hand-written record.json: the
    frontends whose port hits it (FX and ONNX are the supported paths), its target, its triage."""
    report = _report(BUNDLES / name)
    through = report.get("reproduces_through", {})
    hits = [label for key, label in (("fx", "FX"), ("onnx", "ONNX"))
            if str(through.get(key, "")).startswith("hits")]
    fx = ("yes: " + ", ".join(hits)) if hits else ("no (TorchScript only)"
                                                  if str(through.get("torchscript", "")).startswith("hits")
                                                  else "not determined")
    known = ", ".join(report.get("threads", ())) or "none"
    verdict = "known" if known != "none" else "new"
    alone = ("yes" if standalone[name] else "no") if name in standalone else "not run"
    return f"| `{name}/` | {alone} | {fx} | {known} | {report.get('target_repo', '?')} | {verdict} |"


def table(standalone: dict[str, bool]) -> str:
    names = sorted(p.name for p in BUNDLES.iterdir() if (p / "issue.md").is_file())
    head = ["| folder | reproduces standalone | a supported path hits it | known upstream "
            "| target repository | verdict |", "|---|---|---|---|---|---|"]
    return "\n".join([*head, *(table_row(n, standalone) for n in names)])


if __name__ == "__main__":
    raise SystemExit(main())
