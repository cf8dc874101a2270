"""Sweep records are input: a path a record names is read, linked, copied or
run only when it lies inside the sweep's own folders (symlinks resolved), and a command a
record carries is never run. Records are made here with the port's own dataclasses."""

from __future__ import annotations

import os
from pathlib import Path

from harness.frontends.names import FrontendName
from harness.port.record import Blocker, FrontendPort, PortOutcome, PortRecord, StageRecord, VariantRecord
from harness.sweep import board, records
from harness.sweep.reports import make_reports
from harness.sweep.runner import SweepOptions, check_port

from support import harness

SECRET = "root:SECRET-HASH-NOT-FOR-THE-BOARD:19000:0:99999:7:::"
IR = ("func.func @f(%a: !torch.vtensor<[2],i1>) -> !torch.vtensor<[2],i1> {\n"
      "  return %a : !torch.vtensor<[2],i1>\n}\n")


def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "shadow"
    path.parent.mkdir(parents=True)
    path.write_text(SECRET + "\n")
    return path


def failing_sweep(root: Path, *, reproducer: str, commands: list[str] = (), folder: str = "") -> Path:
    """A sweep folder with one record: gpt2's TorchScript port stopped by one blocker."""
    port = FrontendPort(frontend=FrontendName.TORCHSCRIPT, outcome=PortOutcome.FAILS,
                        failed_stage="torch-to-linalg",
                        blockers=[Blocker(rank=1, stage="torch-to-linalg", signature="no-lowering:aten.x",
                                          op="torch.aten.x", reproducer=reproducer)],
                        commands=list(commands), folder=folder)
    record = PortRecord(model="gpt2", source="type", model_type="gpt2",
                        variants=[VariantRecord(variant="stock", name="gpt2", ports=[port])])
    (root / records.RECORDS).mkdir(parents=True, exist_ok=True)
    record.write(root / records.RECORDS / "gpt2.json")
    return root


def test_the_board_embeds_no_file_outside_the_sweep(tmp_path):
    # Was: a record's blockers[0].reproducer = /etc/shadow put its first 40 lines in index.html.
    secret = secret_file(tmp_path)
    sweep = failing_sweep(tmp_path / "s", reproducer=str(secret))
    page = board.render(records.load(sweep))
    assert SECRET not in page and "<pre" not in page and 'href="../outside/shadow"' not in page
    # nor through a symlink inside the sweep that points out of it
    link = sweep / records.PORTS / "blocker-1.mlir"
    link.parent.mkdir(parents=True)
    link.symlink_to(secret)
    page = board.render(records.load(failing_sweep(sweep, reproducer=str(link))))
    assert SECRET not in page and 'href="' + os.path.relpath(secret, sweep) not in page


def test_the_board_embeds_a_reproducer_of_the_sweep_and_caps_what_it_reads(tmp_path):
    sweep = tmp_path / "s"
    inside = sweep / records.PORTS / "blocker-1.mlir"
    inside.parent.mkdir(parents=True)
    inside.write_text(IR)
    page = board.render(records.load(failing_sweep(sweep, reproducer=str(inside))))
    assert 'href="ports/blocker-1.mlir"' in page and '<pre class="mlir">' in page and "vtensor" in page
    # A 20 MB one-line "reproducer" is not read whole into the page.
    inside.write_text("// " + "x" * (20 * 2**20) + "\n")
    page = board.render(records.load(sweep))
    assert len(page) < board.REPRODUCER_MAX_BYTES * 2


def test_merge_renders_no_file_outside_its_folders_and_copies_no_link(tmp_path):
    secret = secret_file(tmp_path)
    shard = failing_sweep(tmp_path / "shard", reproducer=str(secret))
    checks = shard / records.CHECKS / "gpt2"
    checks.mkdir(parents=True)
    (checks / "stock.torchscript.json").symlink_to(secret)
    (shard / records.LOGS).mkdir()
    (shard / records.LOGS / "gpt2.log").symlink_to(secret)
    # a reproducer inside the shard (the ports of a merged sweep stay in their shards) is shown
    inside = shard / records.PORTS / "blocker-1.mlir"
    inside.parent.mkdir(parents=True)
    inside.write_text(IR)
    other = failing_sweep(tmp_path / "shard2", reproducer=str(inside))
    (other / records.RECORDS / "gpt2.json").rename(other / records.RECORDS / "bert.json")
    merged = tmp_path / "m"
    proc = harness("sweep", "--merge", str(shard), str(other), "--out", str(merged), timeout=120)
    assert proc.returncode == 1, proc.stderr  # a port fails: exit 1, not an error
    page = (merged / "index.html").read_text()
    assert SECRET not in page
    assert "vtensor" in page  # the shard's own reproducer
    copied = [p for p in merged.rglob("*") if p.is_file()]
    assert all(SECRET not in p.read_text(errors="replace") for p in copied), copied


def test_merge_refuses_a_record_that_is_a_link(tmp_path):
    secret_record = tmp_path / "outside.json"
    failing_sweep(tmp_path / "elsewhere", reproducer="")
    (tmp_path / "elsewhere" / records.RECORDS / "gpt2.json").rename(secret_record)
    shard = tmp_path / "shard"
    (shard / records.RECORDS).mkdir(parents=True)
    (shard / records.RECORDS / "gpt2.json").symlink_to(secret_record)
    proc = harness("sweep", "--merge", str(shard), "--out", str(tmp_path / "m"), timeout=120)
    assert proc.returncode == 2 and "is a link" in proc.stderr, proc.stderr
    assert not (tmp_path / "m" / records.RECORDS).exists()


def test_reports_never_run_the_command_a_record_carries(tmp_path):
    # Was: any command of the record with a word "report" in it was run as it stood.
    marker = tmp_path / "PWNED"
    sweep = tmp_path / "s"
    folder = sweep / records.PORTS / "gpt2.torchscript"
    folder.mkdir(parents=True)
    (folder / "in.mlir").write_text(IR)
    failing_sweep(sweep, reproducer="", folder=str(folder),
                  commands=[f"touch {marker} report {folder / 'in.mlir'} --pipeline torch-to-linalg"])
    runs = make_reports(records.load(sweep), SweepOptions(out=sweep, python="/bin/false"))
    assert not marker.exists()
    log = next((sweep / records.LOGS).glob("*.report.log"))
    argv_line = log.read_text().splitlines()[0]
    assert argv_line.startswith("$ /bin/false -m harness --no-progress report "), argv_line
    assert [r.ok for r in runs] == [False]


def test_reports_skip_an_input_outside_the_sweep(tmp_path):
    secret = secret_file(tmp_path)
    sweep = tmp_path / "s"
    folder = sweep / records.PORTS / "gpt2.torchscript"
    folder.mkdir(parents=True)
    failing_sweep(sweep, reproducer="", folder=str(folder),
                  commands=[f"harness report {secret} --pipeline torch-to-linalg --out {folder}/report"])
    assert make_reports(records.load(sweep), SweepOptions(out=sweep, python="/bin/false")) == []
    assert not (sweep / records.LOGS).exists()


def test_the_numerics_check_runs_on_no_file_outside_the_sweep(tmp_path):
    secret = secret_file(tmp_path)
    sweep = tmp_path / "s"
    port = FrontendPort(frontend=FrontendName.TORCHSCRIPT, outcome=PortOutcome.LOWERED,
                        stages=[StageRecord("torchscript-to-torch", True, 1.0, output=str(secret)),
                                StageRecord("torch-to-linalg", True, 1.0)])
    assert check_port("gpt2", "gpt2", port, SweepOptions(out=sweep, python="/bin/false")) == ""
    assert not (sweep / records.LOGS).exists()


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim" / "user-file.txt"
    victim.parent.mkdir(parents=True)
    victim.write_text("the user's own file\n")
    return victim


def test_the_lock_and_logs_replace_a_planted_link(tmp_path):
    """Round-4 probes: a link planted in --out as .sweep.lock or logs/MODEL.log had the sweep
    truncate and write the file it named."""
    from harness.compiler.irfile import open_fresh
    from harness.sweep.lock import LOCK_FILE, hold

    victim = _victim(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_FILE).symlink_to(victim)
    with hold(out):
        assert not (out / LOCK_FILE).is_symlink() and (out / LOCK_FILE).is_file()
    log = out / "model.log"
    log.symlink_to(victim)
    for mode in ("w", "a"):
        with open_fresh(log, mode) as f:
            f.write("ported\n")
        assert not log.is_symlink()
        log.unlink()
        log.symlink_to(victim)
    assert victim.read_text() == "the user's own file\n"


def test_merge_replaces_links_in_its_out_folder(tmp_path):
    """--merge into a folder whose records/ and logs/ hold links: the links are replaced."""
    victim = _victim(tmp_path)
    shard = failing_sweep(tmp_path / "shard", reproducer="")
    (shard / records.LOGS).mkdir()
    (shard / records.LOGS / "gpt2.log").write_text("the shard's log\n")
    merged = tmp_path / "m"
    for folder in (records.RECORDS, records.LOGS):
        (merged / folder).mkdir(parents=True)
    (merged / records.RECORDS / "gpt2.json").symlink_to(victim)
    (merged / records.LOGS / "gpt2.log").symlink_to(victim)
    proc = harness("sweep", "--merge", str(shard), "--out", str(merged), timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert victim.read_text() == "the user's own file\n"
    assert not (merged / records.RECORDS / "gpt2.json").is_symlink()
    assert (merged / records.LOGS / "gpt2.log").read_text() == "the shard's log\n"


def test_merge_refuses_a_linked_folder_in_its_out(tmp_path):
    victim_dir = tmp_path / "elsewhere"
    victim_dir.mkdir()
    shard = failing_sweep(tmp_path / "shard", reproducer="")
    merged = tmp_path / "m"
    merged.mkdir()
    (merged / records.RECORDS).symlink_to(victim_dir, target_is_directory=True)
    proc = harness("sweep", "--merge", str(shard), "--out", str(merged), timeout=120)
    assert proc.returncode == 2 and "is a symbolic link" in proc.stderr, proc.stderr
    assert not list(victim_dir.iterdir())


def test_a_hard_link_is_replaced_too(tmp_path):
    from harness.compiler.irfile import open_fresh

    victim = _victim(tmp_path)
    log = tmp_path / "model.log"
    os.link(victim, log)
    with open_fresh(log, "w") as f:
        f.write("ported\n")
    assert victim.read_text() == "the user's own file\n" and log.read_text() == "ported\n"
