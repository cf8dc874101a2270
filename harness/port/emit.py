"""``harness emit NAME``: a named model's IR, imported once and cached by name and versions.

lit's model and seed tests all start from emitted IR; tracing OPT in every test would cost
seconds each, so the IR is produced once per cache key and copied. The key covers every input
that decides the IR: the name, the importer, the weights option, the versions of torch,
torch-mlir and transformers, the harness sources that produce IR (a changed driver or importer
invalidates it; the runner and the tools do not), and where those sources and the Python
environment live (the IR's debug locations name files by absolute path). Tests run in
parallel: a lock per key makes the second one wait for the first instead of importing twice,
and files are only ever renamed into place.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from ..compiler.irfile import write_atomically
from ..errors import OutputError
from ..frontends.names import FrontendName
from ..versions import installed as installed_versions

_PACKAGE = Path(__file__).resolve().parents[1]  # harness/
# The sources that decide what IR a name gives (relative to the package; folders recursively).
_IR_SOURCES = ("frontends/torchscript", "frontends/fx.py", "frontends/onnx.py", "frontends/base.py",
               "models", "port/emit.py",
               "compiler/irfile.py")


@dataclass(frozen=True)
class EmitOptions:
    importer: FrontendName | str = FrontendName.TORCHSCRIPT  # parsed by emit()
    keep_weights: bool = False
    cache_dir: str | None = None


@dataclass
class EmitResult:
    name: str
    importer: FrontendName
    output_path: str
    cached: bool
    key: str
    seconds: float


def cache_key(name: str, options: EmitOptions) -> str:
    digest = hashlib.sha256()
    versions = installed_versions()
    # Debug locations are absolute paths (this package's files, torch's and transformers' under
    # the environment's prefix): another clone or venv sharing a cache folder must not be handed
    # IR whose locations point at someone else's files.
    locations = [str(_PACKAGE), sys.prefix]
    digest.update(json.dumps({"name": name, "importer": str(options.importer),
                              "keep_weights": options.keep_weights, "versions": versions,
                              "locations": locations}, sort_keys=True).encode())
    sources = []
    for entry in _IR_SOURCES:
        path = _PACKAGE / entry
        sources += sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.is_file() else []
    for source in sources:
        digest.update(str(source.relative_to(_PACKAGE)).encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:20]


def _import(name: str, importer: FrontendName, keep_weights: bool, path: Path) -> None:
    import tempfile

    from ..compiler.mlir import WriteOptions, write_module
    from ..frontends.base import MakeRequest, Program, frontend
    from ..frontends.script import ScriptPayload
    from ..models import catalog

    chosen = frontend(importer)
    if chosen.conversion is not None:
        chosen.conversion.check()  # the [onnx] extra, before the model is built
    entry = catalog.get(name)  # an unknown name fails here, before anything is written
    traced = entry.build()
    program = Program(traced.debug_name, traced.eager, tuple(traced.examples),
                      ScriptPayload(traced.script))
    with tempfile.TemporaryDirectory(prefix="harness-emit-") as folder:
        if chosen.conversion is not None:  # made from another frontend's program (ONNX: FX's)
            maker = frontend(chosen.conversion.source).maker
            assert maker is not None and traced.eager is not None
            made = maker.make(MakeRequest(program.name, traced.eager, program.examples,
                                          export=chosen.conversion.export))
            program = chosen.conversion.convert(made.program, Path(folder))
        imported = chosen.import_program(program)
    write_module(imported.module, path, WriteOptions(keep_weights=keep_weights))


def emit(name: str, output: str | os.PathLike, options: EmitOptions = EmitOptions()) -> EmitResult:
    """Writes NAME's IR to ``output`` (atomically), from the cache when it holds it."""
    start = time.monotonic()
    importer = FrontendName.parse(options.importer)
    options = replace(options, importer=importer)
    output = Path(output)
    key = cache_key(name, options)
    if options.cache_dir is None:
        _import(name, importer, options.keep_weights, output)
        return EmitResult(name, importer, str(output), False, key, time.monotonic() - start)
    cache = Path(options.cache_dir)
    cached_file = cache / f"{name}.{options.importer}.{key}.mlir"
    if cached_file.is_file():  # a hit costs no torch import at all
        _copy_atomically(cached_file, output)
        return EmitResult(name, importer, str(output), True, key, time.monotonic() - start)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        # entered by the `with` below; opened here so that only its OSError gets this message
        lock = open(cache / f"{name}.{options.importer}.{key}.lock", "w")  # noqa: SIM115
    except OSError as e:
        raise OutputError(f"cannot use the IR cache folder {cache}: {e.strerror}. Pass a writable "
                          "--cache folder, or none to import without caching.") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        hit = cached_file.is_file()  # another process imported it while this one waited
        if not hit:
            _import(name, importer, options.keep_weights, cached_file)
    _copy_atomically(cached_file, output)
    return EmitResult(name, importer, str(output), hit, key, time.monotonic() - start)


def _copy_atomically(source: Path, target: Path) -> None:
    def copy(f: IO[bytes]) -> None:
        with open(source, "rb") as src:
            shutil.copyfileobj(src, f)

    write_atomically(target, copy, binary=True)
