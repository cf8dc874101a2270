#!/usr/bin/env python3
"""Regenerate reports/upstream/ with `harness report`, one bundle at a time.

Each bundle is made again from the file it shipped (input.mlir; a numerics bundle's reduced.mlir
and inputs.npz) through the pipeline its record.json names, with the facts the project found
passed as the tool's options (--root-cause: the cause the project found, from
regen_upstream_findings.json; --blocks: the e2e tests it stops; --reproduces-through when a port
or the README showed it); the upstream numbers come from harness/knowledge/upstream.toml.
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
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLES = ROOT / "reports" / "upstream"
# The cause of each gap as the project found it (source, lit tests, release bisects): what the
# README's table said; passed to the report as --root-cause.
FINDINGS: dict[str, str] = json.loads((Path(__file__).with_name("regen_upstream_findings.json")).read_text())


@dataclass(frozen=True)
class Spec:
    name: str                        # the folder under reports/upstream
    pipeline: str
    blocks: tuple[str, ...] = ()     # e2e tests / models it stops (README's table)
    through: str = ""                # --reproduces-through, when shown
    numerics: bool = False           # a miscompile or run-time failure bundle
    each: tuple[str, ...] = ()       # --each: the folder names of the bundles, in order
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
    Spec("int-mm-canonicalize-result-dtype", BOTH, ("AtenIntMMMixedSigni8", "AtenIntMM"), through=TS_ONLY),
    Spec("item-number-result-unrefined", F2T,
         ("AtenSymConstrainRange", "AtenSymConstrainRangeForSize", "Aten_AssertScalar")),
    Spec("linalg-fuse-elementwise-pad-expand-dominance", "linalg-to-llvm",
         ("ConvolutionModule2DGroups", "ConvolutionModule3DGroupsStrided",
          "ConvolutionModule3DGroupsDilated")),
    Spec("matmul-3d-unequal-batch-illegal", F2T,
         ("Matmul_3d", "Matmul3DStaticBroadcast", "ScaledDotProductAttentionSameDynamic")),
    Spec("missing-shape-dtype-functions", F2T,
         ("ElementwiseXlogyTensor{,Broadcast,Int,ZeroAndNan}", "ElementwiseRshiftScalarSignedInt8",
          "ElementwiseCreateComplex", "UnfoldModule", "ReflectionPad3dModule* (14)"),
         each=("missing-shape-dtype-functions-xlogy", "missing-shape-dtype-functions-rshift",
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
    Spec("upsample-bilinear2d-vec-no-lowering", "torch-to-linalg",
         ("InterpolateStaticModule_sizes_bilinear_no_align_corners",
          "InterpolateStaticModule_scales_bilinear_align_corners", "InterpolateDynamicModule_sizes_bilinear"),
         through="torchscript-only"),
    # Blockers only dynamic shapes meet (harness port MODEL --dynamic DIMS): the run-time failures
    # from their own reduced.mlir and inputs.npz, the verifier errors from their input.mlir.
    Spec("view-flatten-two-dynamic-dims-wrong-collapse", "torch-to-linalg",
         ("gpt2 --frontend fx --dynamic batch,seq",
          "lit_tests/pass/view-flatten-two-dynamic-dims-wrong-collapse.mlir"),
         through="both", numerics=True),
    Spec("view-flatten-unrefined-batch-abort", "torch-to-linalg",
         ("gpt2 --frontend torchscript --dynamic seq",), through="torchscript-only", numerics=True),
    Spec("view-unrefined-result-slice-verifier-error", "torch-to-linalg",
         ("bloom --frontend torchscript --dynamic seq",), through="torchscript-only"),
    Spec("view-unrefined-result-permute-verifier-error", "torch-to-linalg",
         ("gpt_neo --frontend torchscript --dynamic seq",), through="torchscript-only"),
]


def command(spec: Spec, work: Path, out: Path) -> list[str]:
    """The harness report command for ``spec``, its input copied into ``work`` first."""
    old = BUNDLES / spec.name
    if spec.each and not old.is_dir():  # split before: the first split bundle holds the whole input
        old = BUNDLES / spec.each[0]
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
    if spec.through:
        words += ["--reproduces-through", spec.through]
    if FINDINGS.get(spec.name):
        words += ["--root-cause", FINDINGS[spec.name]]
    if spec.each:
        words.append("--each")
    return [*words, *spec.extra]


def swap_in(new: Path, name: str) -> None:
    """``new`` becomes reports/upstream/NAME by renames; the old folder goes once it is in place."""
    target = BUNDLES / name
    staged = BUNDLES / f".{name}.new"
    shutil.rmtree(staged, ignore_errors=True)
    shutil.copytree(new, staged)  # across file systems: copied beside the target first
    if target.exists():
        old = BUNDLES / f".{name}.old"
        shutil.rmtree(old, ignore_errors=True)
        os.rename(target, old)
        os.rename(staged, target)
        shutil.rmtree(old)
    else:
        os.rename(staged, target)


def regenerate(spec: Spec) -> list[str]:
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
        for folder, name in zip(folders, names, strict=True):
            swap_in(folder, name)
        if spec.each and spec.name not in names:
            shutil.rmtree(BUNDLES / spec.name, ignore_errors=True)
        return names


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
    wanted = [s for s in SPECS if not args.names or s.name in args.names]
    failed = []
    for spec in wanted:
        try:
            names = regenerate(spec)
        except SystemExit as e:  # the next bundle still gets made; the old one stays
            print(e, flush=True)
            failed.append(spec.name)
            continue
        for name in names:
            record = json.loads((BUNDLES / name / "record.json").read_text())
            print(f"{name}: {record.get('report', {}).get('title') or record.get('title', '')}", flush=True)
    if failed:
        print("not regenerated (the old bundle kept): " + " ".join(failed))
    return 1 if failed else 0



def _section(issue: str, name: str) -> str:
    parts = issue.split(f"\n## {name}\n", 1)
    return parts[1].split("\n## ", 1)[0].strip() if len(parts) == 2 else ""


def table_row(name: str, standalone: dict[str, bool]) -> str:
    """README's row for bundle ``name``: read from its issue.md (the report's own sections)."""
    issue = (BUNDLES / name / "issue.md").read_text()
    through = _section(issue, "Reproduces through")
    fx = ("yes" if through.startswith(("Both", "FX only")) else
          "no (TorchScript only)" if through.startswith("TorchScript only") else "not determined")
    upstream = _section(issue, "Upstream")
    target = upstream.split("**", 2)[1] if "**" in upstream else "?"
    triage = upstream.split("Triage: **", 1)[1].split("**", 1)[0] if "Triage: **" in upstream else "new"
    verdict = "by design" if "by design" in triage else "known" if triage.startswith("known") else "new"
    known = ", ".join(sorted(set(
        word.strip("(),.:;") for word in upstream.split() if word.startswith("llvm/torch-mlir#")))) or "none"
    alone = {True: "yes", False: "no"}.get(standalone.get(name), "not run")
    return f"| `{name}/` | {alone} | {fx} | {known} | {target} | {verdict} |"


def table(standalone: dict[str, bool]) -> str:
    names = sorted(p.name for p in BUNDLES.iterdir() if (p / "issue.md").is_file())
    head = ["| folder | reproduces standalone | FX path too | known upstream | target repository | verdict |",
            "|---|---|---|---|---|---|"]
    return "\n".join([*head, *(table_row(n, standalone) for n in names)])


if __name__ == "__main__":
    raise SystemExit(main())
