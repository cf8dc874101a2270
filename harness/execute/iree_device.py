"""Where IREE compiles for and runs: this machine's CPU (llvm-cpu, ``local-task``) or a CUDA GPU
(``--device cuda``: IREE's cuda target, PTX for one ``sm_XX``, run by the runtime's cuda driver).

Compiling for CUDA needs no GPU: iree-compile writes the module on any machine. Running it needs
one, and the harness asks IREE's runtime whether it has one (``iree-run-module
--list_devices=cuda``, which loads ``libcuda.so``) instead of guessing from the machine: a port
on a machine without a GPU compiles for the target, writes its test case, and says that it did
not run, so no GPU result is ever claimed that did not run on a GPU.

The target, when ``--cuda-target`` is not given: the GPU's own compute capability
(``nvidia-smi``), at most :data:`NEWEST_TARGET` (the newest IREE 3.13 compiles: ``sm_90`` fails
there with "missing GPU target in #hal.executable.target"; a newer GPU runs the older target's
PTX through its driver's JIT), else :data:`DEFAULT_TARGET` when no GPU is found.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from functools import cache

from harness.compiler import process
from harness.errors import UsageError

from .backend_names import Device

#: llvm-cpu, for the CPU of the machine that compiles (a CPU test case compiles where it runs).
CPU_FLAGS = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
             "--iree-llvmcpu-target-cpu=host")
#: With no GPU to ask: Ampere (A100), IREE's own example target.
DEFAULT_TARGET = "sm_80"
#: The newest CUDA target iree-base-compiler 3.13 compiles (sm_90 and sm_90a do not).
NEWEST_TARGET = "sm_89"
SOURCE_PREFIX = re.compile(r"^\S+\.c:\d+: ")
#: nvidia-smi's and iree-run-module's questions answer in well under a second.
PROBE_TIMEOUT_S = 60.0
#: An NVPTX target as ``--cuda-target`` takes it (IREE crashes on a name it does not know).
TARGET_FORM = re.compile(r"sm_(\d{2,3})a?")


@dataclass(frozen=True)
class IreeDevice:
    """The flags of one device: how iree-compile targets it and how iree-run-module runs on it."""

    device: Device
    compile_flags: tuple[str, ...]
    run_device: str    # iree-run-module's --device
    label: str         # the record's pipeline: "llvm-cpu", "cuda sm_86"
    cuda_target: str = ""


def iree_device(device: Device, cuda_target: str = "") -> IreeDevice:
    """The flags for ``device``; ``cuda_target`` ("": :func:`default_target`) only for CUDA."""
    if device is Device.CPU:
        return IreeDevice(device, CPU_FLAGS, "--device=local-task", "llvm-cpu")
    target = check_target(cuda_target) if cuda_target else default_target()
    return IreeDevice(device, ("--iree-hal-target-device=cuda", f"--iree-cuda-target={target}"),
                      "--device=cuda", f"cuda {target}", target)


def check_target(text: str) -> str:
    """``--cuda-target``'s value, refused in one paragraph when it is not an ``sm_XX`` name
    (iree-compile aborts with a stack dump on a target it does not know)."""
    target = text.strip().lower()
    if not TARGET_FORM.fullmatch(target):
        raise UsageError(f"--cuda-target {text!r} is not a CUDA target: give the GPU's compute "
                         "capability as NVPTX names it, sm_ and its digits (sm_80 for an A100, sm_86 "
                         f"for an RTX 30xx, sm_89 for an L4 or RTX 40xx; {NEWEST_TARGET} is the newest "
                         "IREE 3.13 compiles), or leave it out for the GPU's own.")
    return target


@cache
def default_target() -> str:
    """The GPU's compute capability as a target (``nvidia-smi``'s first GPU), at most
    :data:`NEWEST_TARGET`; :data:`DEFAULT_TARGET` when there is no ``nvidia-smi`` or no GPU."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return DEFAULT_TARGET
    try:
        done = process.execute([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                               timeout_s=PROBE_TIMEOUT_S, dump_on_timeout=False)
    except OSError:
        return DEFAULT_TARGET
    found = re.match(r"\s*(\d+)\.(\d+)", done.stdout) if done.returncode == 0 else None
    if found is None:
        return DEFAULT_TARGET
    capability = int(found[1]) * 10 + int(found[2])
    newest = int(NEWEST_TARGET.removeprefix("sm_"))
    return f"sm_{min(capability, newest)}"


@cache
def cuda_missing(run_module: str) -> str:
    """Why IREE's runtime cannot run on a CUDA GPU here ("" when it lists one): what
    ``iree-run-module --list_devices=cuda`` said (no ``libcuda.so``: no NVIDIA driver)."""
    cmd = [run_module, "--list_devices=cuda"]
    try:
        done = process.execute(cmd, timeout_s=PROBE_TIMEOUT_S, dump_on_timeout=False)
    except OSError as e:
        return f"{' '.join(cmd)} did not start ({e.strerror or e})"
    if done.timed_out:
        return f"{' '.join(cmd)} did not answer in {PROBE_TIMEOUT_S:g} s"
    if done.returncode == 0 and any(line.startswith("cuda://") for line in done.stdout.splitlines()):
        return ""
    said = [line.strip() for line in (done.stderr + done.stdout).splitlines()
            if line.strip() and not line.startswith("#")]
    # the runtime's message without its source file (``c/runtime/src/...c:66: UNAVAILABLE; ...``)
    reason = SOURCE_PREFIX.sub("", said[-1]) if said else f"exit status {done.returncode}, no device listed"
    return f"IREE's runtime finds no CUDA GPU on this machine (iree-run-module --list_devices=cuda: {reason})"


#: llvm-cpu and local-task: what the harness's CPU tools (``reduce --iree-compile``) compile for.
CPU = iree_device(Device.CPU)
