"""``harness emit``: named models to IR, cached by name, importer, versions and sources."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import warnings

import pytest

from harness.port import emit as emit_module
from harness.port.emit import EmitOptions, cache_key, emit
from harness.errors import OutputError
from harness.models.catalog import UnknownModelError

from support import ROOT, harness

NAME = "seed-view-traced-sizes"


def test_emit_writes_traced_ir_with_locations(tmp_path):
    out = tmp_path / "view.mlir"
    result = emit(NAME, out)
    text = out.read_text()
    assert not result.cached
    assert 'torch.debug_module_name = "ViewOfTracedSizes"' in text
    assert "torch.nn_module" in text and "torch.aten.view" in text
    assert "seed.py" in text  # debug locations


def test_emit_fx_writes_a_function(tmp_path):
    out = tmp_path / "view.fx.mlir"
    emit(NAME, out, EmitOptions(importer="fx"))
    text = out.read_text()
    assert "func.func @main(" in text and "!torch.vtensor<[2,5,8],f32>" in text
    assert "torch.nn_module" not in text


def test_emit_onnx_writes_the_onnx_import_and_leaves_no_onnx_file(tmp_path, monkeypatch):
    """Issue 42: ``--importer onnx`` is torch.export, torch.onnx.export of that export, then the
    wheel's onnx_importer: a function of ``torch.operator "onnx.*"`` ops with the opset, which
    onnx-to-torch takes to the backend contract. The .onnx file is a temporary."""
    from harness.compiler.runner import run_pipeline

    import tempfile

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    made: list[str] = []
    real = tempfile.TemporaryDirectory

    def recorded(*args: object, **kwargs: object) -> tempfile.TemporaryDirectory:
        folder = real(*args, **kwargs)  # type: ignore[call-overload]
        made.append(folder.name)
        return folder

    monkeypatch.setattr(tempfile, "TemporaryDirectory", recorded)
    out = tmp_path / "view.onnx.mlir"
    result = emit(NAME, out, EmitOptions(importer="onnx"))
    text = out.read_text()
    assert str(result.importer) == "onnx"
    assert 'torch.operator "onnx.' in text and "torch.onnx_meta.opset_version" in text
    assert run_pipeline(out, "builtin.module(torch-onnx-to-torch-backend-pipeline)").ok
    assert made and all(m.startswith(str(tmp_path / "tmp")) for m in made)
    assert not list((tmp_path / "tmp").rglob("*.onnx"))


def test_cache_hit_copies_the_same_bytes(tmp_path):
    cache = tmp_path / "cache"
    first = emit(NAME, tmp_path / "a.mlir", EmitOptions(cache_dir=str(cache)))
    second = emit(NAME, tmp_path / "b.mlir", EmitOptions(cache_dir=str(cache)))
    assert (first.cached, second.cached) == (False, True)
    assert (tmp_path / "a.mlir").read_bytes() == (tmp_path / "b.mlir").read_bytes()
    assert second.seconds < first.seconds
    # Nothing half-written: only the cached IR and its lock, no temp files.
    assert sorted(p.suffix for p in cache.iterdir()) == [".lock", ".mlir"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.mlir", "b.mlir", "cache"]


def test_cache_hit_leaks_no_file_handle_and_files_are_not_private(tmp_path):
    cache = tmp_path / "cache"
    emit(NAME, tmp_path / "a.mlir", EmitOptions(cache_dir=str(cache)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        assert emit(NAME, tmp_path / "b.mlir", EmitOptions(cache_dir=str(cache))).cached
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    # Written atomically, yet with the mode open() gives (not mkstemp's 0o600).
    umask = os.umask(0o022)
    os.umask(umask)
    for path in (tmp_path / "b.mlir", *cache.glob("*.mlir")):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path


def test_key_separates_importers_weights_and_names():
    keys = {
        cache_key(NAME, EmitOptions()),
        cache_key(NAME, EmitOptions(importer="fx")),
        cache_key(NAME, EmitOptions(keep_weights=True)),
        cache_key("seed-mask-to-bool", EmitOptions()),
    }
    assert len(keys) == 4
    assert cache_key(NAME, EmitOptions()) == cache_key(NAME, EmitOptions(cache_dir="/elsewhere"))


def test_key_changes_when_a_harness_source_changes(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    (package / "models").mkdir(parents=True)
    (package / "models" / "seed.py").write_text("x = 1\n")
    (package / "explain.py").write_text("y = 1\n")
    monkeypatch.setattr(emit_module, "_PACKAGE", package)
    before = cache_key(NAME, EmitOptions())
    (package / "explain.py").write_text("y = 2\n")  # a tool: the IR does not depend on it
    assert cache_key(NAME, EmitOptions()) == before
    (package / "models" / "seed.py").write_text("x = 2\n")
    assert cache_key(NAME, EmitOptions()) != before


def test_key_changes_with_where_the_sources_live(tmp_path, monkeypatch):
    """The IR's locations are absolute paths: a clone elsewhere must not share cached IR."""
    for where in ("a", "b"):
        (tmp_path / where / "models").mkdir(parents=True)
        (tmp_path / where / "models" / "seed.py").write_text("x = 1\n")
    monkeypatch.setattr(emit_module, "_PACKAGE", tmp_path / "a")
    here = cache_key(NAME, EmitOptions())
    monkeypatch.setattr(emit_module, "_PACKAGE", tmp_path / "b")
    assert cache_key(NAME, EmitOptions()) != here


def test_unknown_name_is_a_clear_error_and_writes_nothing(tmp_path):
    with pytest.raises(UnknownModelError, match=r"no model named 'opt-huge'.*harness emit --list"):
        emit("opt-huge", tmp_path / "x.mlir", EmitOptions(cache_dir=str(tmp_path / "cache")))
    assert not (tmp_path / "x.mlir").exists()
    assert not list((tmp_path / "cache").glob("*.mlir"))


def test_unwritable_cache_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OutputError, match="cannot use the IR cache folder"):
        emit(NAME, tmp_path / "x.mlir", EmitOptions(cache_dir=str(blocker / "cache")))


def test_parallel_emits_import_once(tmp_path):
    """lit runs tests in parallel: the second process waits on the lock and copies."""
    cache = tmp_path / "cache"
    cmd = [sys.executable, "-m", "harness", "emit", NAME, "--cache", str(cache)]
    procs = [subprocess.Popen([*cmd, "-o", str(tmp_path / f"{i}.mlir")], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert sum("(from the cache)" in err for _, err in outputs) == 1
    assert (tmp_path / "0.mlir").read_bytes() == (tmp_path / "1.mlir").read_bytes()
    assert len(list(cache.glob("*.mlir"))) == 1


def test_cli_list_and_missing_arguments():
    listed = harness("emit", "--list", timeout=300)
    assert listed.returncode == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert {"opt-tiny", "opt-125m", "opt-fixed-tiny", "seed-tuple-of-views-fixed"} <= set(names)
    missing = harness("emit", "opt-tiny", timeout=300)
    assert missing.returncode == 2
    assert missing.stderr.startswith("harness: error: harness emit needs a model NAME and -o PATH")
    assert "Traceback" not in missing.stderr
