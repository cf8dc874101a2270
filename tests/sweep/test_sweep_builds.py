"""``harness sweep --builds A,B``: the same ports on several torch-mlir-opt
builds, each build a sweep folder of its own (``DIR/builds/NAME``), its records naming the
build; the board shows one column group per build and ``--baseline build:NAME`` compares the
builds. The page and the merge are tested on small written sweeps (tests/support/sweep_fakes.py); one
test runs real ports on the wheel's binary and on a wrapped build that crashes on an op
(tests/support/wrapped_builds.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from harness.compiler.builds import BuildCache
from harness.port.record import PortRecord
from harness.sweep import board, records
from harness.sweep.merge import merge
from harness.sweep.status import compare, compare_builds, rows_of

from support import harness
from support.sweep_fakes import blocker, port, record, write
from support.wrapped_builds import make_build
from test_sweep_board import parse


def two_builds(root: Path) -> Path:
    """gpt2 verified on both builds; bert verified on 'old', failing on 'new'; vit only on 'new'."""
    write(root, record("gpt2", "text", port("torchscript"), port("fx"), build="old"),
          record("bert", "text", port("torchscript"), port("fx"), build="old"), build="old")
    write(root, record("gpt2", "text", port("torchscript"), port("fx"), build="new"),
          record("bert", "text", port("torchscript", "fails", stage="torch-to-linalg",
                                      blockers=[blocker("torch.aten.cumsum")]), port("fx"),
                 build="new"),
          record("vit", "vision", port("torchscript"), port("fx"), build="new"), build="new")
    return root


def test_records_are_read_with_their_build(tmp_path):
    sweep = records.load(two_builds(tmp_path / "s"))
    assert sweep.builds == ["new", "old"]  # by folder name
    assert {(m.build, m.model) for m in sweep.models} == {
        ("new", "bert"), ("new", "gpt2"), ("new", "vit"), ("old", "bert"), ("old", "gpt2")}
    assert all(m.record.build == m.build for m in sweep.models)


def test_the_board_has_one_column_group_per_build(tmp_path):
    sweep = records.load(two_builds(tmp_path / "s"))
    page = board.render(sweep, board.BoardOptions(builds=("old", "new")))
    assert re.findall(r'<th class="build" colspan="2" data-build="([^"]+)"', page) == ["old", "new"]
    rows = {r["attrs"]["data-model"]: r["cells"] for r in parse(page)}
    # one line per model: old's torchscript, fx, then new's; vit has no cells on old
    assert rows == {"bert": ["verified", "verified", "fails", "verified"],
                    "gpt2": ["verified"] * 4, "vit": ["none", "none", "verified", "verified"]}
    cells = re.findall(r'data-status="fails" data-frontend="torchscript" data-build="([^"]+)"', page)
    assert cells == ["new"]
    assert "bert (new torchscript)" in page  # the blockers table names the build


def test_the_baseline_between_builds(tmp_path):
    sweep = records.load(two_builds(tmp_path / "s"))
    changes = compare_builds(rows_of(sweep), "old")
    assert [(c.key, c.build, c.direction) for c in changes] == [
        (("bert", "bert", "torchscript"), "new", "worse"),
        (("vit", "vit", "fx"), "new", "new"),
        (("vit", "vit", "torchscript"), "new", "new")]
    page = board.render(sweep, board.BoardOptions(baseline_build="old", builds=("old", "new")))
    assert "worse (was verified on old)" in page and len(parse(page, "changes")) == 3
    # Between two sweeps, a cell is compared with the same build's.
    assert compare(rows_of(sweep), rows_of(sweep)) == []


def test_a_sweep_without_builds_is_the_baseline_of_each_build(tmp_path):
    sweep = records.load(two_builds(tmp_path / "s"))
    old = records.load(write(tmp_path / "old", record("bert", "text", port("torchscript"), port("fx"))))
    changes = compare(rows_of(old), rows_of(sweep))
    assert [(c.key[0], c.key[2], c.build, c.direction) for c in changes] == [
        ("bert", "torchscript", "new", "worse"),
        ("gpt2", "fx", "new", "new"), ("gpt2", "fx", "old", "new"),
        ("gpt2", "torchscript", "new", "new"), ("gpt2", "torchscript", "old", "new"),
        ("vit", "fx", "new", "new"), ("vit", "torchscript", "new", "new")]


def test_a_baseline_compares_only_the_columns_both_sweeps_asked_for(tmp_path):
    """A column per frontend, target and backend (issue 43): a sweep of linalg and TOSA against
    one of TOSA on both backends gave each linalg cell as "gone" and each TOSA-on-IREE cell as
    "new", though no model changed; now the shared column is compared and the others named."""
    old = write(tmp_path / "old", record("gpt2", "text", port("fx"), port("fx", target="tosa")))
    new = write(tmp_path / "new", record("gpt2", "text", port("fx", "fails", stage="torch-to-tosa",
                                                                  target="tosa"),
                                         port("fx", "fails", stage="iree-compile", target="tosa",
                                              backend="iree")))
    before, after = rows_of(records.load(old)), rows_of(records.load(new))
    assert [(c.key, c.direction) for c in compare(before, after)] == [(("gpt2", "gpt2", "fx-tosa"), "worse")]
    page = board.render(records.load(new), board.BoardOptions(baseline=records.load(old)))
    assert len(parse(page, "changes")) == 1
    assert "only the baseline has: fx; only this sweep has: fx-tosa-iree." in page
    # each build of a --builds sweep against it, the same way
    both = write(tmp_path / "builds", record("gpt2", "text", port("fx", target="tosa"),
                                             port("fx", target="tosa", backend="iree"), build="a"),
                 build="a")
    assert compare(before, rows_of(records.load(both))) == []


def test_merge_joins_shards_build_by_build(tmp_path):
    a = write(tmp_path / "a", record("gpt2", "text", port("fx"), build="old"), build="old")
    write(a, record("gpt2", "text", port("fx", "fails", stage="fx-to-torch"), build="new"), build="new")
    b = write(tmp_path / "b", record("bert", "text", port("fx"), build="old"), build="old")
    write(b, record("gpt2", "text", port("fx"), build="new"), build="new")  # in both: b's wins
    merged = merge([a, b], tmp_path / "m")
    assert sorted(merged.models) == ["bert on old", "gpt2 on new", "gpt2 on old"]
    assert merged.replaced == ["gpt2 on new"]
    sweep = records.load(tmp_path / "m")
    assert {(m.build, m.model, m.record.ok) for m in sweep.models} == {
        ("new", "gpt2", True), ("old", "bert", True), ("old", "gpt2", True)}


def _sweep(*args: str, env=None) -> subprocess.CompletedProcess:
    return harness("--no-progress", "sweep", *args, env=env)


@pytest.mark.parametrize("args, said", [
    (["--builds", "wheel,wheel"], "give distinct build names"),
    (["--builds", "no-such-build"], "'no-such-build' is not a named build"),
    (["--builds", "wheel", "--opt", "wheel"], "drop --opt"),
    (["--builds", "wheel", "--baseline", "build:other"], "'other' is not one of --builds wheel"),
])
def test_bad_builds_are_refused_before_any_port(tmp_path, args, said):
    proc = _sweep("gpt2", "--out", str(tmp_path / "s"), *args)
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert not (tmp_path / "s" / "records").exists() and not (tmp_path / "s" / "builds").exists()


def test_a_real_sweep_on_two_builds(tmp_path):
    """gpt2 (FX, no numerics) on the wheel's binary and on a build that crashes (SIGFPE, a real
    crasher of the real binary) on any input holding torch.aten.tanh, which gpt2's GELU has."""
    import os

    cache = tmp_path / "cache"
    BuildCache(cache).add("tanhcrash", make_build(tmp_path, "tanhcrash", crash_on_op="torch.aten.tanh"))
    env = {**os.environ, "HARNESS_BUILDS_DIR": str(cache)}
    out = tmp_path / "s"
    proc = _sweep("gpt2", "--builds", "wheel,tanhcrash", "--frontend", "fx", "--no-numerics",
                  "--out", str(out), env=env)
    assert proc.returncode == 1, proc.stderr  # one build fails
    assert "gpt2  [wheel] fx lowered" in proc.stdout
    assert re.search(r"gpt2  \[tanhcrash\] fx fails at fx-to-torch", proc.stdout), proc.stdout
    for build in ("wheel", "tanhcrash"):
        rec = PortRecord.read(out / "builds" / build / "records" / "gpt2.json")
        assert rec.build == build and rec.options["opt"] == build and str(rec.modality) == "text"
    # The same sweep again reuses the records and compares the builds.
    again = _sweep("gpt2", "--builds", "wheel,tanhcrash", "--frontend", "fx", "--no-numerics",
                   "--out", str(out), "--baseline", "build:wheel", env=env)
    page = (out / "index.html").read_text()
    assert again.returncode == 1 and "worse (was lowered on wheel)" in page
    assert re.findall(r'class="build" colspan="1" data-build="([^"]+)"', page) == ["wheel", "tanhcrash"]
    assert 'id="builds"' in page and "tanhcrash/torch-mlir-opt" in page


def test_a_real_sweep_on_two_builds_with_a_column_per_target_and_backend(tmp_path):
    """Issue 43's --target and --backend under --builds: gpt2 through FX to TOSA, checked on the
    RefBackend (through tosa-to-linalg) and on IREE (which refuses torch-mlir's f64 TOSA until
    the sweep's --fix makes it f32: tosa-variance-f32), on the wheel and on the build that crashes
    on aten.tanh; each build's column group holds one column per target and backend, and
    --baseline build:wheel compares them cell by cell. The page says that tosa-to-linalg is the
    wheel's on every build."""
    import os

    cache = tmp_path / "cache"
    BuildCache(cache).add("tanhcrash", make_build(tmp_path, "tanhcrash", crash_on_op="torch.aten.tanh"))
    env = {**os.environ, "HARNESS_BUILDS_DIR": str(cache)}
    out = tmp_path / "s"
    args = ("gpt2", "--builds", "wheel,tanhcrash", "--frontend", "fx", "--target", "tosa",
            "--backend", "iree,refbackend", "--out", str(out))
    proc = _sweep(*args, env=env)
    assert proc.returncode == 1, proc.stderr
    assert "gpt2  [wheel] fx-tosa-iree verified, fx-tosa verified" in proc.stdout, proc.stdout
    page = (out / "index.html").read_text()
    assert re.findall(r'class="build" colspan="2" data-build="([^"]+)"', page) == ["wheel", "tanhcrash"]
    assert re.findall(r"<th>((?:wheel|tanhcrash) fx[^<]*)</th>", page) == [
        "wheel fx-tosa", "wheel fx-tosa-iree", "tanhcrash fx-tosa", "tanhcrash fx-tosa-iree"]
    assert [r["cells"] for r in parse(page)] == [["verified", "verified", "fails", "fails"]]
    assert re.search(r'<li id="tosa-to-linalg">fx-tosa: torch-to-tosa ran on each build.*'
                     r"on the wheel's MLIR bindings for every build", page)
    record = records.load(out / "builds" / "wheel").by_model()["gpt2"].record
    iree = next(p for _, p in record.ports() if p.path == "fx-tosa-iree")
    assert [f.fix for f in iree.fixes if f.kept] == ["tosa-variance-f32"]
    again = _sweep(*args, "--baseline", "build:wheel", env=env)  # the records reused
    assert again.returncode == 1, again.stderr
    page = (out / "index.html").read_text()
    changes = parse(page, "changes")
    assert len(changes) == 2 and "worse (was verified on wheel)" in page  # both on tanhcrash
    assert re.search(r"<td>fx-tosa</td><td>tanhcrash</td>", page)
    assert re.search(r"<td>fx-tosa-iree</td><td>tanhcrash</td>", page)


def test_builds_on_a_cluster(tmp_path):
    """The same two builds with --cluster local:1: each build's ports are Dask tasks, the
    records come back into DIR/builds/NAME with their build."""
    import os

    pytest.importorskip("distributed")
    cache = tmp_path / "cache"
    BuildCache(cache).add("tanhcrash", make_build(tmp_path, "tanhcrash", crash_on_op="torch.aten.tanh"))
    env = {**os.environ, "HARNESS_BUILDS_DIR": str(cache)}
    out = tmp_path / "s"
    proc = _sweep("gpt2", "--builds", "wheel,tanhcrash", "--frontend", "fx", "--no-numerics",
                  "--cluster", "local:1", "--out", str(out), env=env)
    assert proc.returncode == 1, proc.stderr
    statuses = {(c.build, c.model, str(c.frontend)): c.status.value
                for r in rows_of(records.load(out)) for c in r.cells.values()}
    assert statuses == {("tanhcrash", "gpt2", "fx"): "fails", ("wheel", "gpt2", "fx"): "lowered"}
    assert "(ported on tcp://" in (out / "builds" / "wheel" / "logs" / "gpt2.log").read_text()
