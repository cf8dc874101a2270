"""``sweep --keep-files``: a verified port's IR (it carries the weights) is dropped once its record
is in, a failing or mismatching port's stays for the user to open; records, inputs and outputs
always stay; a folder a record names outside the sweep is never touched, nor a linked one."""

from __future__ import annotations

import json
import time
from pathlib import Path

from harness.port.record import PortOutcome
from harness.frontends.names import FrontendName
from harness.port.record import FrontendPort, PortRecord, VariantRecord
from harness.sweep.records import CHECKS, PORTS
from harness.sweep.runner import KeepFiles, SweepOptions, drop_ir_files, finish


ALL_IR = ["gpt2.1.fx-to-torch.mlirbc", "gpt2.2.torch-to-linalg.mlir", "gpt2.torch.mlir"]


def _port_folder(root: Path, name: str) -> Path:
    folder = root / name
    (folder / "execution-traced").mkdir(parents=True)
    (folder / "gpt2.torch.mlir").write_text("module {}\n" * 1000)
    (folder / "gpt2.1.fx-to-torch.mlirbc").write_bytes(b"ML\xefR" + bytes(1000))  # weights kept
    (folder / "gpt2.2.torch-to-linalg.mlir").write_text("module {}\n")
    (folder / "execution-traced" / "inputs.npz").write_bytes(b"npz")
    (folder / "record.json").write_text("{}")
    return folder


def _sweep(tmp_path: Path) -> tuple[SweepOptions, PortRecord, dict[str, Path]]:
    out = tmp_path / "sweep"
    ports = out / PORTS / "gpt2-tiny-x"
    folders = {name: _port_folder(ports, name) for name in ("ts", "fx", "fx-mismatch")}
    record = PortRecord(model="gpt2", source="type", model_type="gpt2", variants=[
        VariantRecord("stock", "gpt2", ports=[
            FrontendPort(FrontendName.TORCHSCRIPT, PortOutcome.FAILS, folder=str(folders["ts"])),
            FrontendPort(FrontendName.FX, PortOutcome.VERIFIED, folder=str(folders["fx"]))]),
        VariantRecord("fixed", "gpt2-fixed", ports=[
            FrontendPort(FrontendName.FX, PortOutcome.VERIFIED, folder=str(folders["fx-mismatch"]))])])
    return SweepOptions(out=out), record, folders


def _mlir(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.mlir*"))


def test_failing_is_the_default_and_drops_only_a_verified_ports_ir(tmp_path):
    options, record, folders = _sweep(tmp_path)
    assert options.keep_files is KeepFiles.FAILING
    finish("gpt2", record, False, options, time.monotonic())
    assert _mlir(folders["fx"]) == []
    assert (folders["fx"] / "execution-traced" / "inputs.npz").is_file()
    assert (folders["fx"] / "record.json").is_file()
    assert _mlir(folders["ts"]) == ALL_IR


def test_a_port_whose_op_level_check_mismatched_keeps_its_ir(tmp_path):
    options, record, folders = _sweep(tmp_path)
    options = SweepOptions(out=options.out, numerics_check=True)
    check = options.out / CHECKS / "gpt2" / "gpt2-fixed.fx.json"
    check.parent.mkdir(parents=True)
    check.write_text(json.dumps({"schema": "harness.check/1", "outcome": "numerics-mismatch"}))
    finish("gpt2", record, False, options, time.monotonic())
    assert _mlir(folders["fx-mismatch"]) == ALL_IR
    assert _mlir(folders["fx"]) == []


def test_all_keeps_every_file_and_a_reused_record_is_left_alone(tmp_path):
    options, record, folders = _sweep(tmp_path)
    finish("gpt2", record, False, SweepOptions(out=options.out, keep_files=KeepFiles.ALL), time.monotonic())
    finish("gpt2", record, True, options, time.monotonic())
    assert all(_mlir(f) == ALL_IR for f in folders.values())


def test_a_folder_outside_the_sweep_or_behind_a_link_is_not_touched(tmp_path):
    outside = _port_folder(tmp_path, "elsewhere")
    ports = tmp_path / "sweep" / PORTS
    ports.mkdir(parents=True)
    assert drop_ir_files(str(outside), ports) == 0
    (ports / "port").mkdir()
    (ports / "port" / "linked").symlink_to(outside, target_is_directory=True)
    (ports / "port" / "one.mlir").symlink_to(outside / "gpt2.torch.mlir")
    freed = drop_ir_files(str(ports / "port"), ports)
    assert freed < 100  # the link's own size, not the 10 kB file it points to
    assert not (ports / "port" / "one.mlir").is_symlink()
    assert _mlir(outside) == ALL_IR
    assert drop_ir_files("../../etc", ports) == 0


def test_a_cluster_task_drops_a_verified_ports_ir_before_packing_it(tmp_path):
    """On a worker (``--keep-files failing`` without ``--numerics-check``) the verified port's IR
    is not packed to be deleted on arrival; the failing port's goes back whole."""
    import io
    import tarfile

    from harness.sweep.cluster import _drop_verified, _pack

    options, record, folders = _sweep(tmp_path)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record.to_json()))
    _drop_verified(path, options.out / PORTS)
    with tarfile.open(fileobj=io.BytesIO(_pack(options.out / PORTS)[0]), mode="r:gz") as archive:
        names = archive.getnames()
    packed = sorted(Path(n).name for n in names if n.endswith((".mlir", ".mlirbc")))
    assert packed == sorted(ALL_IR)  # the failing TorchScript port's, nothing of the verified two
    assert any(n.endswith("fx/execution-traced/inputs.npz") for n in names)
    assert _mlir(folders["ts"]) == ALL_IR and _mlir(folders["fx"]) == []


def test_what_may_go_before_the_checks_and_what_only_after(tmp_path):
    from harness.sweep.runner import drops_before_checks, drops_verified_ir

    out = tmp_path / "sweep"
    assert drops_verified_ir(SweepOptions(out=out)) and drops_before_checks(SweepOptions(out=out))
    checked = SweepOptions(out=out, numerics_check=True)  # the check reads the IR on arrival
    assert drops_verified_ir(checked) and not drops_before_checks(checked)
    kept = SweepOptions(out=out, keep_files=KeepFiles.ALL)
    assert not drops_verified_ir(kept) and not drops_before_checks(kept)
