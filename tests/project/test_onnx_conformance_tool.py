"""tools/onnx_conformance.py: the comparison of two results files by class and cause, the sample
it takes, its one-paragraph errors (exit 2) for a missing clone, a bad --rev, a results file that
is not one and a path upstream has no config for; and (with a clone in $TORCH_MLIR_MIRROR) real
upstream tests through the harness's FX path on to TOSA and StableHLO."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "onnx_conformance.py"


def _tool():
    spec = importlib.util.spec_from_file_location("onnx_conformance_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


tool = _tool()


def _results(config: str, tests: dict) -> dict:
    return {"meta": {"config": config}, "tests": tests}


UPSTREAM = _results("onnx", {
    "AddModule_basic": {"status": "pass"},
    "ExportOnlyHere_basic": {"status": "pass"},
    "ExportOnlyHereToo_basic": {"status": "pass"},
    "LowersOnlyUpstream_basic": {"status": "fail", "stage": "to-torch-backend",
                                 "summary": "error: failed to legalize operation 'torch.operator'"},
    "BothFail_basic": {"status": "fail", "stage": "export", "summary": "TorchExportError"},
    "Crashing_basic": {"status": "skipped", "stage": "crashing-set"},
    "UpstreamFileOnly_basic": {"status": "pass"},
})
HARNESS = _results("harness-onnx", {
    "AddModule_basic": {"status": "pass"},
    "ExportOnlyHere_basic": {"status": "fail", "stage": "export",
                             "summary": "UserError: Could not guard on data-dependent expression u0 < 3"},
    "ExportOnlyHereToo_basic": {"status": "fail", "stage": "export",
                                "summary": "UserError: Could not guard on data-dependent expression u7 < 12"},
    "LowersOnlyUpstream_basic": {"status": "pass"},
    "BothFail_basic": {"status": "crash", "stage": "crash", "summary": "worker killed by SIGABRT"},
    "Crashing_basic": {"status": "skipped", "stage": "crashing-set"},
})


def test_compare_classifies_every_test_and_groups_harness_only_failures_by_cause():
    result = tool.compare(UPSTREAM, HARNESS)
    assert result["classes"] == {
        "pass_both": ["AddModule_basic"],
        "harness_only_fail": ["ExportOnlyHereToo_basic", "ExportOnlyHere_basic"],
        "upstream_only_fail": ["LowersOnlyUpstream_basic"],
        "fail_both": ["BothFail_basic"],
        "skipped": ["Crashing_basic"],
        "one_file_only": ["UpstreamFileOnly_basic"],
    }
    # the two export failures differ only in numbers: one cause, with both tests under it
    assert result["by_cause"]["harness_only_fail"] == {
        "export: UserError: Could not guard on data-dependent expression uN < N":
            ["ExportOnlyHereToo_basic", "ExportOnlyHere_basic"]}
    assert list(result["by_cause"]["upstream_only_fail"]) == [
        "to-torch-backend: error: failed to legalize operation 'torch.operator'"]
    assert result["tests"]["UpstreamFileOnly_basic"] == {"upstream": "pass", "harness": "absent"}
    assert result["tests"]["BothFail_basic"] == {"upstream": "fail", "harness": "crash"}


def test_compare_command_prints_the_classes_and_writes_the_comparison(tmp_path):
    a, b, out = tmp_path / "upstream.json", tmp_path / "harness.json", tmp_path / "cmp.json"
    a.write_text(json.dumps(UPSTREAM))
    b.write_text(json.dumps(HARNESS))
    done = subprocess.run([sys.executable, str(TOOL), "--compare", str(a), str(b), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pass in both 1, fail only through the harness 2, fail only in upstream's config 1" in done.stdout
    assert "ExportOnlyHere_basic  [export] UserError" in done.stdout
    assert json.loads(out.read_text())["counts"]["harness_only_fail"] == 2


def test_the_sample_is_e2e_pys():
    names = [f"T{i:02d}" for i in range(20)] + ["Other"]
    assert tool.select_tests(names, "T", 8, 0) == ["T00", "T08", "T16"]
    assert tool.select_tests(names, "T", 8, 9) == ["T01", "T09", "T17"]  # offset taken mod every
    assert tool.select_tests(names, "T1[0-2]|Other", 1, 0) == ["Other", "T10", "T11", "T12"]


def _run(*args: str, env_mirror: str | None = None, timeout: int = 120,
         path: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TORCH_MLIR_MIRROR"}
    if env_mirror is not None:
        env["TORCH_MLIR_MIRROR"] = env_mirror
    if path:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), path) if p)
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _one_paragraph(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.strip().count("\n") == 0, done.stderr
    return done.stderr


def test_no_clone_is_one_paragraph_exit_2():
    assert "set $TORCH_MLIR_MIRROR or pass --mirror" in _one_paragraph(_run("--list"))


def test_a_missing_clone_is_named(tmp_path):
    missing = tmp_path / "no-such-clone"
    message = _one_paragraph(_run("--mirror", str(missing), "--list"))
    assert f"--mirror {missing} is not a git clone (not a directory)" in message


def test_a_bad_rev_is_named(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    message = _one_paragraph(_run("--rev", "no-such-rev", "--list", env_mirror=str(clone)))
    assert "--rev no-such-rev names no commit in" in message and str(clone) in message


def test_a_rev_without_the_e2e_suite_is_named(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "one"], check=True)
    message = _one_paragraph(_run("--mirror", str(clone), "--workdir", str(tmp_path / "work"), "--list"))
    assert "has no projects/pt1/python/torch_mlir_e2e_test" in message


@pytest.mark.plants_bad_json
def test_a_results_file_that_is_not_one_is_named(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("[1/3 9s] PASS AddModule_basic\n")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(UPSTREAM))
    message = _one_paragraph(_run("--compare", str(good), str(log)))
    assert f"{log} is not JSON" in message
    message = _one_paragraph(_run("--compare", str(tmp_path / "absent.json"), str(good)))
    assert "cannot read results file" in message and "absent.json" in message


def test_bad_numbers_are_refused():
    assert "--every 0 is below 1" in _one_paragraph(_run("--every", "0", "--list"))
    assert "is not a regular expression" in _one_paragraph(_run("--filter", "(", "--list"))


# A stand-in worker: says it is ready, then per test name answers, aborts or hangs.
FAKE_WORKER = """\
import json, os, sys, time
print(json.dumps({"ready": os.getpid()}), flush=True)
for line in sys.stdin:
    name = json.loads(line)["name"]
    if name == "Aborts":
        print("LLVM ERROR: a planted abort", file=sys.stderr, flush=True)
        os.abort()
    if name == "Hangs":
        time.sleep(600)
    print(json.dumps({"name": name, "status": "pass"}), flush=True)
"""


def test_a_worker_that_dies_or_hangs_costs_one_test(tmp_path):
    args = argparse.Namespace(jobs=1, startup_timeout=60.0, kill_grace=1.0, quiet=True)
    names = ["First", "Aborts", "Second", "Hangs", "Third"]
    saved = []
    results = tool.run_all(names, dict.fromkeys(names, 2), [sys.executable, "-c", FAKE_WORKER], args,
                           tmp_path, saved.append)
    assert {n: r["status"] for n, r in results.items()} == {
        "First": "pass", "Aborts": "crash", "Second": "pass", "Hangs": "timeout", "Third": "pass"}
    assert results["Aborts"]["summary"] == "worker killed by SIGABRT: LLVM ERROR: a planted abort"
    assert "killed after 3 s" in results["Hangs"]["summary"]
    assert len(list(tmp_path.glob("worker-0-*.log"))) == 3  # started again after each


# Real upstream tests through the harness's FX path on to TOSA and StableHLO: upstream's e2e
# package extracted from the clone, the real torch-mlir-opt and the RefBackend. Upstream's
# fx_importer_tosa and fx_importer_stablehlo configs pass ElementwiseAddModule_basic and fail
# CumprodInputDtypeInt32Module_basic (aten.cumprod has no TOSA or StableHLO lowering; it is in
# both configs' XFAIL sets), which linalg lowers: so its failure at the target's own lowering
# stage says the target's stages ran, not linalg's. ArangeStartOutDtypeModule_basic
# (torch.arange(..., out=x)) exports with one output and imports with two (the decomposition makes
# the out= a mutation of x, whose new value comes first): the test sees only the last.
MIRROR = os.environ.get("TORCH_MLIR_MIRROR", "")
# Upstream's suite imports torchvision: the venv's, or the one ../shared/conformance/e2e.py
# installs into $TMPDIR/e2e-upstream/deps (TMPDIR unset: /tmp), which conftest's TMPDIR hides
# from the tool, so the test hands it over on PYTHONPATH.
E2E_DEPS = Path("/tmp/e2e-upstream/deps")
HAS_TORCHVISION = importlib.util.find_spec("torchvision") is not None or E2E_DEPS.is_dir()


@pytest.mark.skipif(not MIRROR, reason="needs a clone of llvm/torch-mlir in $TORCH_MLIR_MIRROR")
@pytest.mark.skipif(not HAS_TORCHVISION, reason="needs torchvision (upstream's suite imports it): "
                    "in the venv, or run ../shared/conformance/e2e.py once")
@pytest.mark.parametrize("target", ["tosa", "stablehlo"])
def test_fx_path_to_tosa_and_stablehlo_runs_real_upstream_tests(tmp_path, target):
    out = tmp_path / "results.json"
    done = _run("--frontend", "fx", "--target", target, "--workdir", str(tmp_path / "work"),
                "--filter", "ElementwiseAddModule_basic$|CumprodInputDtypeInt32Module_basic$|"
                "ArangeStartOutDtypeModule_basic$",
                "--out", str(out), "-q", env_mirror=MIRROR, timeout=600,
                path="" if importlib.util.find_spec("torchvision") else str(E2E_DEPS))
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(out.read_text())
    anchor = {"tosa": "FX_IMPORTER_TOSA", "stablehlo": "FX_IMPORTER_STABLEHLO"}[target]
    assert doc["meta"]["config"] == f"harness-fx-{target}"
    assert doc["meta"]["expected_sets"] == [f"{anchor}_XFAIL_SET", f"{anchor}_CRASHING_SET"]
    tests = doc["tests"]
    assert tests["ElementwiseAddModule_basic"]["status"] == "pass", tests
    assert tests["ElementwiseAddModule_basic"]["expected_to_fail"] is False
    assert tests["ArangeStartOutDtypeModule_basic"]["status"] == "pass", tests
    cumprod = tests["CumprodInputDtypeInt32Module_basic"]
    assert (cumprod["status"], cumprod["stage"]) == ("fail", f"torch-to-{target}"), cumprod
    # TOSA names the cumprod; StableHLO the constant it leaves behind (as in upstream's config)
    assert "failed to legalize operation" in cumprod["summary"] and cumprod["expected_to_fail"] is True
    assert doc["summary"]["pass"] == 2 and doc["summary"]["unexpected_failures"] == []


def test_a_path_upstream_has_no_config_for_is_refused():
    message = _one_paragraph(_run("--frontend", "onnx", "--target", "stablehlo", "--list"))
    assert "upstream has no e2e config of that frontend and target" in message
