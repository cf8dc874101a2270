"""``--device cuda``: IREE compiles for a CUDA GPU (PTX for one sm_XX) and runs there; on a
machine without a GPU the port compiles, writes its test case and says it did not run, so no
GPU number is claimed that did not come from a GPU (harness.execute.iree_device).

Every compile here is the real iree-compile's; whether a GPU is here is asked of IREE's own
runtime, as the port asks it: on a machine with one, the port's numbers must verify instead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from harness.compiler.targets import Target
from harness.errors import UsageError
from harness.execute import backend_iree
from harness.execute.backend import BackendOptions, Lowered
from harness.execute.backend_names import BackendName, Device
from harness.execute.backends import backend
from harness.execute.iree_device import (
    NEWEST_TARGET,
    check_target,
    cuda_missing,
    default_target,
    iree_device,
)
from harness.frontends.names import FrontendName
from harness.models.hf_inputs import InputSet
from harness.port import PortOptions
from harness.port.frontend import port_targets
from harness.port.progress import QUIET
from harness.port.record import PortOutcome, PortStage
from harness.port.render import outcome_text
from harness.port.subject import Subject

NO_GPU = cuda_missing(backend_iree.tool("iree-run-module"))

ADD = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


class Scale(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x * 3) + 1


def _subject() -> Subject:
    g = torch.Generator().manual_seed(0)
    x0, x1 = torch.randn(4, 16, generator=g), torch.randn(4, 16, generator=g)
    module = Scale().eval()
    return Subject("scale", module, InputSet(("x",), (x0,), "seed 0"), InputSet(("x",), (x1,), "seed 0, 2"),
                   trace=lambda: (torch.jit.trace(module, (x0,), check_trace=False), []),
                   output_names=("y",))


def _port(tmp_path: Path, **options):
    [port] = port_targets(_subject(), FrontendName.FX, tmp_path / "scale.fx",
                          PortOptions(out=str(tmp_path), backends=(BackendName.IREE,),
                                      device=Device.CUDA, **options), QUIET)
    return port


def _lowered(tmp_path: Path) -> Lowered:
    source = tmp_path / "add.mlir"
    source.write_text(ADD)
    return Lowered(Target.LINALG, source, source, source, "add")


def test_iree_compiles_for_a_cuda_target_without_a_gpu(tmp_path: Path):
    """The compile needs no GPU: PTX for sm_86 is written here, and the record's command says
    which target, pasteable."""
    options = BackendOptions(device=Device.CUDA, cuda_target="sm_86")
    compiled = backend(BackendName.IREE).compile(_lowered(tmp_path), tmp_path, options)
    assert compiled.record.ok, compiled.record.stderr
    assert compiled.record.pipeline == "iree-compile cuda sm_86"
    assert "--iree-hal-target-device=cuda" in compiled.record.command
    assert "--iree-cuda-target=sm_86" in compiled.record.command
    assert compiled.artifact.stat().st_size > 0
    done = subprocess.run(compiled.record.command, capture_output=True, text=True)  # as printed
    assert done.returncode == 0, done.stderr


def test_iree_3_13_has_no_sm_90_target(tmp_path: Path):
    """What IREE 3.13 says for Hopper (the reason the default stops at sm_89): the compile fails,
    and the record keeps iree-compile's own message. Flips when the pinned IREE compiles it."""
    record = backend(BackendName.IREE).compile(
        _lowered(tmp_path), tmp_path, BackendOptions(device=Device.CUDA, cuda_target="sm_90")).record
    assert not record.ok
    assert "missing GPU target" in record.stderr
    assert NEWEST_TARGET == "sm_89"


def test_a_cuda_port_runs_on_a_gpu_or_says_it_did_not(tmp_path: Path):
    cases = tmp_path / "cases"
    port = _port(tmp_path, testcase_dir=str(cases))
    assert port.path == "fx-iree-cuda" and port.device is Device.CUDA
    compiled = next(s for s in port.stages if s.name is PortStage.IREE_COMPILE)
    assert compiled.ok and f"--iree-cuda-target={default_target()}" in compiled.command
    if NO_GPU:  # this machine: compiled, not run, and said so; no numbers at all
        assert port.outcome is PortOutcome.LOWERED
        assert port.numerics == [] and port.stages[-1].name is PortStage.IREE_COMPILE
        assert "not run: IREE's runtime finds no CUDA GPU" in port.unrun
        assert "libcuda.so" in port.unrun
        assert f"compiled for cuda {default_target()}; not run" in outcome_text(port)
        assert "verified" not in outcome_text(port)
    else:  # a machine with a GPU: its numbers, from the GPU
        assert port.outcome is PortOutcome.VERIFIED, outcome_text(port)
        assert port.stages[-1].name is PortStage.EXECUTION
    # the test case carries the run to a machine that has a GPU: its commands are the GPU's
    script = Path(port.testcase)
    assert script == cases / "scale.fx-iree-cuda" / "run.sh"
    assert "--iree-hal-target-device=cuda" in script.read_text()
    assert "--device=cuda" in (script.parent / "traced.flagfile").read_text().splitlines()


@pytest.mark.parametrize(("options", "said"), [
    ({"cuda_target": "sm_86"}, "only --device cuda makes"),
    ({"device": Device.CUDA}, "RefBackend cannot"),
    ({"device": Device.CUDA, "backends": (BackendName.IREE,), "numerics": False},
     "--no-numerics and --torch-only skip"),
    ({"device": Device.CUDA, "backends": (BackendName.IREE,), "cuda_target": "hopper"},
     "is not a CUDA target"),
])
def test_what_the_device_cannot_mean_is_refused_before_the_model(tmp_path: Path, options, said):
    """Each would be silently ignored, run on the wrong device, or crash iree-compile (a target
    name it does not know aborts it with a stack dump)."""
    from harness.port import port_model

    with pytest.raises(UsageError, match=said):
        port_model("no-such-model-type", PortOptions(out=str(tmp_path / "out"), **options))
    assert not (tmp_path / "out").exists()


def test_the_cli_takes_the_device_and_refuses_a_bad_target(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "harness", "port", "gpt2", "--backend", "iree",
                           "--device", "cuda", "--cuda-target", "sm80", "--out", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--cuda-target 'sm80' is not a CUDA target" in done.stderr
    assert not list(tmp_path.iterdir())


def test_the_devices_flags():
    assert iree_device(Device.CPU).run_device == "--device=local-task"
    assert "--iree-hal-local-target-device-backends=llvm-cpu" in iree_device(Device.CPU).compile_flags
    cuda = iree_device(Device.CUDA, "SM_89")
    assert cuda.compile_flags == ("--iree-hal-target-device=cuda", "--iree-cuda-target=sm_89")
    assert (cuda.run_device, cuda.label) == ("--device=cuda", "cuda sm_89")
    assert check_target("sm_90a") == "sm_90a"
    with pytest.raises(UsageError, match="sm_ and its digits"):
        check_target("ampere")


def test_a_sweep_passes_the_device_to_each_port_and_says_what_did_not_run(tmp_path: Path):
    from harness.sweep.orchestrate import port_args

    assert port_args(backends="iree", device="cuda", cuda_target="SM_86") == (
        "--backend", "iree", "--device", "cuda", "--cuda-target", "sm_86")
    with pytest.raises(UsageError, match="is not a CUDA target"):  # before any model runs
        port_args(device="cuda", cuda_target="a100")
    done = subprocess.run([sys.executable, "-m", "harness", "sweep", "gpt2", "--frontend", "fx",
                           "--backend", "iree", "--device", "cuda", "-j", "1", "--out", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    if NO_GPU:
        assert "gpt2  fx-iree-cuda lowered" in done.stdout
        assert "verify where a GPU ran them (a row that says lowered did not run)" in done.stdout
    else:
        assert "gpt2  fx-iree-cuda verified" in done.stdout
