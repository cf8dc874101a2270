#!/usr/bin/env python3
"""Reproduces: verifier-error: 'tosa.const' op is not profile-aligned: element type 'f64' is not legal

    python3 repro.py

Needs only torch 2.13.0+cpu, torch-mlir 20261001 (its MLIR Python bindings, PassManager and
ExecutionEngine) and numpy: nothing else, no file of this folder. It runs the pipeline below through torch_mlir.passmanager on the embedded IR and looks for the expected error.

Exit status: 1 exactly when the bug shows (the pass fails with the expected error); 0 when it does not;
2 when it cannot tell (torch_mlir or numpy missing, or the run timed out).
The work runs in a child process (this file with --child), so a crash or an abort is an
outcome, not the end of this script.

Made by torch-mlir-harness's `harness report`; the script itself does not use the harness.
"""

import base64
import ctypes
import io
import os
import signal
import subprocess
import sys
import tempfile

REPRODUCED, NOT_REPRODUCED, CANNOT_RUN = 1, 0, 2
KIND = 'compile-failure'  # "compile-failure": a pass fails; "miscompile": wrong values;
# "runtime-failure": the code dies
TIMEOUT_S = 600.0

# The IR, the pipelines and the summary at the top are verbatim (the IR one op a line, as
# torch-mlir prints it), so their lines may be long:
# ruff: noqa: E501

# The IR (input.mlir of the bundle).
IR = r'''func.func @variance_f32(%arg0: !torch.vtensor<[4,16],f32>) -> !torch.vtensor<[4,1],f32> {
  %int1 = torch.constant.int 1
  %dims = torch.prim.ListConstruct %int1 : (!torch.int) -> !torch.list<int>
  %int0 = torch.constant.int 0
  %true = torch.constant.bool true
  %var, %mean = torch.aten.var_mean.correction %arg0, %dims, %int0, %true : !torch.vtensor<[4,16],f32>, !torch.list<int>, !torch.int, !torch.bool -> !torch.vtensor<[4,1],f32>, !torch.vtensor<[4,1],f32>
  return %var : !torch.vtensor<[4,1],f32>
}

func.func @int64_to_f32(%arg0: !torch.vtensor<[4,16],si64>) -> !torch.vtensor<[4,16],f32> {
  %int6 = torch.constant.int 6
  %0 = torch.prims.convert_element_type %arg0, %int6 : !torch.vtensor<[4,16],si64>, !torch.int -> !torch.vtensor<[4,16],f32>
  return %0 : !torch.vtensor<[4,16],f32>
}
'''

# The pipeline that fails (TO_LINALG), as the bundle's repro.sh runs it.
TO_LINALG = 'builtin.module(torchdynamo-export-to-torch-backend-pipeline,torch-backend-to-tosa-backend-pipeline,tosa-attach-target{specification_version=1.1.draft profiles=pro_int,pro_fp extensions=int64},tosa-validate{strict-op-spec-alignment})'
TO_LLVM = ''
FUNCTION = ''

# "compile-failure": the error MLIR must print for the bug to show.
EXPECTED_ERROR = "'tosa.const' op is not profile-aligned: element type 'f64' is not legal"

# The arguments, and what eager PyTorch computes on them (op by op), as .npz files in base64:
INPUTS_NPZ = (
    ''
)
EXPECTED_NPZ = (
    ''
)
# The same function evaluated in float64 (empty: none): a float result is right when its error
# against it is at most NOISE_FACTOR times eager float32's own in root mean square and
# WORST_FACTOR times at its worst element (the floor of eager's own: a quarter of float32's
# epsilon at the result's scale). A flat tolerance misses a wrong constant of 1e-4 relative.
WIDE_NPZ = (
    ''
)
NOISE_FACTOR, WORST_FACTOR, FLOOR_EPS = 4.0, 8.0, 0.25

# (rtol, atol) by dtype, where there is no float64 value; any other dtype must match exactly.
TOLERANCES = {"float16": (1e-2, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9),
              "complex64": (1e-4, 1e-5), "complex128": (1e-7, 1e-9)}

# The child's exit statuses.
CHILD_OK, CHILD_NO_BINDINGS, CHILD_LOWERING_FAILED, CHILD_EXECUTION_FAILED = 0, 20, 21, 22


def say(text):
    print("repro.py: " + text, flush=True)


def load_npz(b64):
    import numpy as np

    with np.load(io.BytesIO(base64.b64decode(b64))) as npz:
        return [npz[name] for name in sorted(npz.files, key=lambda n: int(n.removeprefix("arg").removeprefix("result")))]


# --- the child: parse, lower, run ---------------------------------------------------------

CONSUME_PREFIX = "refbackend_consume_func_return"
CIFACE_PREFIX = "_mlir_ciface_"
TOKEN_DTYPES = {"i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                "f16": "float16", "f32": "float32", "f64": "float64", "c32": "complex64",
                "c64": "complex128"}


class UnrankedMemRef(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]


def descriptors(arrays, keep):
    """Pointers to unranked memref descriptors of the arrays (refback-munge-calling-conventions'
    convention); ``keep`` holds everything they point into. The strides are row-major, what the
    code's identity layout declares (MLIR's runtime checks compare them: an empty array's must
    not be 0)."""
    pointers = []
    for array in arrays:
        rank, address = array.ndim, array.ctypes.data
        strides, step = [], 1
        for n in reversed(array.shape):
            strides.insert(0, step)
            step *= max(n, 1)
        ranked = (ctypes.c_int64 * (3 + 2 * rank))(address, address, 0, *array.shape, *strides)
        unranked = UnrankedMemRef(rank, ctypes.addressof(ranked))
        pointer = ctypes.pointer(unranked)
        keep += [array, ranked, unranked, pointer]
        pointers.append(ctypes.pointer(pointer))
    return pointers


def read_memref(unranked, dtype):
    import numpy as np

    rank = unranked.rank
    header = (ctypes.c_int64 * (3 + 2 * rank)).from_address(unranked.descriptor)
    aligned, offset = header[1] & 0xFFFFFFFFFFFFFFFF, header[2]
    shape, strides = tuple(header[3:3 + rank]), tuple(header[3 + rank:3 + 2 * rank])
    if 0 in shape:
        return np.empty(shape, dtype)
    low = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s > 0)
    span = high - low + 1
    raw = (ctypes.c_char * (span * dtype.itemsize)).from_address(aligned + (offset + low) * dtype.itemsize)
    flat = np.frombuffer(raw, dtype=dtype, count=span)
    view = np.lib.stride_tricks.as_strided(flat[-low:], shape, [s * dtype.itemsize for s in strides])
    return np.array(view, copy=True)


def consume_tokens(name):
    rest = name[len(CONSUME_PREFIX):]
    return [(raw.startswith("mr"), TOKEN_DTYPES[raw[2:] if raw.startswith("mr") else raw])
            for raw in filter(None, rest.split("_"))]


def lower(module):
    """Runs TO_LINALG ("compile-failure": that alone), then TO_LLVM, on the module; a child exit status."""
    from torch_mlir import ir, passmanager

    if KIND == "compile-failure":
        try:
            passmanager.PassManager.parse(TO_LINALG).run(module.operation)
        except ir.MLIRError as e:
            print(str(e), flush=True)
            return CHILD_LOWERING_FAILED
        return CHILD_OK
    for name, pipeline in (("to linalg", TO_LINALG), ("to LLVM", TO_LLVM)):
        try:
            passmanager.PassManager.parse(pipeline).run(module.operation)
        except ir.MLIRError as e:
            print(f"the lowering {name} fails: {e}", flush=True)
            return CHILD_LOWERING_FAILED
    return CHILD_OK


def child(out_path):
    try:
        import numpy as np
        from torch_mlir import ir
        from torch_mlir.dialects import torch as torch_dialect
        from torch_mlir.execution_engine import ExecutionEngine
    except ImportError as e:
        print(f"cannot import the torch-mlir bindings or numpy: {e}", flush=True)
        return CHILD_NO_BINDINGS
    context = ir.Context()
    torch_dialect.register_dialect(context)
    with context:
        try:
            module = ir.Module.parse(IR)
        except ir.MLIRError as e:
            print(f"the IR does not parse: {e}", flush=True)
            return CHILD_LOWERING_FAILED
        status = lower(module)
        if status != CHILD_OK or KIND == "compile-failure":
            return status
        names = [ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations
                 if op.operation.name == "llvm.func" and "sym_name" in op.attributes]
        try:
            engine = ExecutionEngine(module, opt_level=0)
        except (RuntimeError, ValueError) as e:
            print(f"the ExecutionEngine cannot load the module: {e}", flush=True)
            return CHILD_EXECUTION_FAILED
    results, callbacks = [], []
    for name in names:
        if not name.startswith(CONSUME_PREFIX):
            continue
        tokens = consume_tokens(name)
        argtypes = [ctypes.POINTER(UnrankedMemRef) if memref else ctypes.c_uint16 if dtype == "float16"
                    else np.ctypeslib.as_ctypes_type(np.dtype(dtype)) for memref, dtype in tokens]

        def consume(*args, tokens=tokens):
            results.append([read_memref(a.contents, np.dtype(d)) if memref else
                            np.array(a, np.uint16).view(np.float16) if d == "float16" else np.array(a, d)
                            for a, (memref, d) in zip(args, tokens, strict=True)])

        callback = ctypes.CFUNCTYPE(None, *argtypes)(consume)
        callbacks.append(callback)
        engine.register_runtime(name, callback)
    keep = []
    # np.require keeps a 0-d array 0-d (np.ascontiguousarray makes it [1]: a rank mismatch)
    arguments = descriptors([np.require(a, requirements="C") for a in load_npz(INPUTS_NPZ)], keep)
    try:
        engine.invoke(FUNCTION, *arguments)
    except (RuntimeError, ValueError) as e:
        print(f"the ExecutionEngine cannot run @{FUNCTION}: {e}", flush=True)
        return CHILD_EXECUTION_FAILED
    if len(results) != 1:
        print(f"@{FUNCTION} returned {len(results)} times, expected once", flush=True)
        return CHILD_EXECUTION_FAILED
    np.savez(out_path, **{f"result{i}": r for i, r in enumerate(results[0])})
    return CHILD_OK


# --- the parent: run the child, judge what it did ---------------------------------------------

def noise(a, e, w):
    """A float result's error against float64 in units of eager float32's own: (rms, worst),
    or None where float64 is not finite where eager is."""
    import numpy as np

    a, e, w = (x.astype(np.float64) for x in (a, e, w))
    if (~np.isfinite(w) & np.isfinite(e)).any():
        return None
    keep = np.isfinite(w) & np.isfinite(e)
    if not keep.any():
        return None
    rest = ~keep  # infinities and NaNs: where they are, the result must have the same
    if (rest & ~np.isclose(a, e, equal_nan=True)).any():
        return float("inf"), float("inf")
    a, e, w = a[keep], e[keep], w[keep]
    eps = FLOOR_EPS * float(np.finfo(np.float32).eps)

    def ratio(x, y):
        return x / y if y > 0 else (0.0 if x == 0 else float("inf"))

    rms = lambda v: float(np.sqrt(np.mean(np.square(v))))  # noqa: E731
    return (ratio(rms(a - w), max(rms(e - w), eps * rms(w))),
            ratio(float(np.abs(a - w).max()), max(float(np.abs(e - w).max()), eps * float(np.abs(w).max()))))


def compare(actual, expected, wide=()):
    """(wrong, text): whether any output differs (by the float64 rule where ``wide`` has the
    result's float64 value, else beyond TOLERANCES), and the worst difference."""
    import numpy as np

    if len(actual) != len(expected):
        return True, f"{len(actual)} results, expected {len(expected)}"
    worst, wrong = 0.0, []
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        if a.shape != e.shape:
            wrong.append(f"result{i} has shape {list(a.shape)}, expected {list(e.shape)}")
            continue
        w = wide[i] if i < len(wide) else None
        judged = noise(a, e, w) if (w is not None and w.shape == e.shape and np.issubdtype(e.dtype, np.floating)
                                    and np.issubdtype(a.dtype, np.floating)) else None
        if judged is not None:
            rms_ratio, worst_ratio = judged
            with np.errstate(invalid="ignore"):
                off = float(np.nanmax(np.abs(a.astype(np.float64) - e.astype(np.float64)))) if e.size else 0.0
            worst = max(worst, off)
            if not (rms_ratio <= NOISE_FACTOR and worst_ratio <= WORST_FACTOR):
                wrong.append(f"result{i}: max abs diff {off:.3g}; its error against float64 is "
                             f"{rms_ratio:.3g}x eager float32's "
                             f"own in rms and {worst_ratio:.3g}x at the worst element (at most "
                             f"{NOISE_FACTOR:g}x and {WORST_FACTOR:g}x is float32 rounding)")
            continue
        rtol, atol = TOLERANCES.get(str(e.dtype), (0.0, 0.0))
        a64 = a.astype(np.complex128 if np.iscomplexobj(e) else np.float64)
        e64 = e.astype(a64.dtype)
        close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
        with np.errstate(invalid="ignore"):
            diff = np.where(close, 0.0, np.abs(a64 - e64))
        worst = max(worst, float(np.nanmax(diff)) if diff.size else 0.0)
        if not close.all():
            wrong.append(f"result{i}: {int((~close).sum())} of {close.size} values differ "
                         f"(max abs diff {float(np.nanmax(diff)):.3g}, rtol {rtol:g}, atol {atol:g})")
    return bool(wrong), "; ".join(wrong) or f"all results within tolerance (max abs diff {worst:.3g})"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="repro-") as tmp:
        out = os.path.join(tmp, "outputs.npz")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", out]
        try:
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                                  timeout=TIMEOUT_S, text=True, errors="replace")
        except subprocess.TimeoutExpired:
            say(f"CANNOT TELL: the run did not finish within {TIMEOUT_S} s")
            return CANNOT_RUN
        printed = done.stdout.strip()
        if printed:
            print(printed)
        return judge(done.returncode, printed, out)


def judge(status, printed, out):
    """The verdict (REPRODUCED, NOT_REPRODUCED or CANNOT_RUN) on the child's exit status, what it
    printed and the outputs it saved at ``out``."""
    if status == CHILD_NO_BINDINGS:
        say(f"CANNOT RUN: {sys.executable} lacks torch-mlir's bindings or numpy; "
            "run it with a Python that has torch-mlir 20261001 installed")
        return CANNOT_RUN
    if status < 0 or status == CHILD_EXECUTION_FAILED:
        return judge_death(status, printed)
    if KIND == "compile-failure":
        if status == CHILD_LOWERING_FAILED and EXPECTED_ERROR in printed:
            say(f"REPRODUCED: the pipeline fails with: {EXPECTED_ERROR}")
            return REPRODUCED
        say(f"NOT REPRODUCED: the output lacks: {EXPECTED_ERROR} (child exit status {status})")
        return NOT_REPRODUCED
    if status == CHILD_LOWERING_FAILED:
        say("NOT REPRODUCED: the lowering fails, which is not this bug")
        return NOT_REPRODUCED
    if status != CHILD_OK:
        say(f"NOT REPRODUCED: the child exited with status {status}")
        return NOT_REPRODUCED
    return judge_values(out)


def judge_death(status, printed):
    """The child died (a signal, or the ExecutionEngine failed): the bug for "miscompile" and
    "runtime-failure", not the expected error for "compile-failure"."""
    how = (f"by {signal.Signals(-status).name}" if status < 0 and -status in
           signal.valid_signals() else "with an error")
    if KIND == "compile-failure":
        say(f"NOT REPRODUCED: the pass pipeline dies {how}, not with the expected error")
        return NOT_REPRODUCED
    last = [line.strip() for line in printed.splitlines() if line.strip()]
    say(f"REPRODUCED: the run dies {how}" + (f": {last[-1]}" if last else ""))
    return REPRODUCED


def judge_values(out):
    """The child ran to the end: compare its outputs with eager PyTorch's."""
    import numpy as np

    with np.load(out) as npz:
        actual = [npz[f"result{i}"] for i in range(len(npz.files))]
    wrong, text = compare(actual, load_npz(EXPECTED_NPZ), load_npz(WIDE_NPZ) if WIDE_NPZ else [])
    if KIND == "runtime-failure":
        say(f"NOT REPRODUCED: the code runs to the end ({text})")
        return NOT_REPRODUCED
    if wrong:
        say(f"REPRODUCED: wrong numbers: {text}")
        return REPRODUCED
    say(f"NOT REPRODUCED: {text}")
    return NOT_REPRODUCED


if __name__ == "__main__":
    sys.exit(main())
